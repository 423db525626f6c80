package machinepaths

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The patterns are spelled in pieces ("/" + "work/") so that this file,
// which the guard reads too, does not match itself.
const (
	slash = "/"
	// before is what may precede a path: not a name's character (a
	// relative path such as build/work/x or rocm/6.4/root/x is no machine's).
	before = `(?:^|[^A-Za-z0-9_.~$}@+-])`
)

// kind is one kind of machine path.
type kind struct {
	re   *regexp.Regexp
	what string
	// keep decides on a match (the path, from its first slash on, and
	// the name after /home/ or /tmp/): false when it is not a machine's
	// path after all.
	keep func(path, name string) bool
}

// fictional are user names of examples in docs and tests, not of any
// machine: /home/alice is the user of an attack example (docs/reliability.md,
// internal/placeholder's tests), bob the other user beside her, me the
// reader.
var fictional = map[string]string{
	"alice": "a fictional user of examples (docs/reliability.md, internal/placeholder)",
	"bob":   "a fictional second user of examples",
	"me":    "the reader in docs' examples (docs/outputs.md: -o ../x puts the files at /home/me/x_*)",
}

// random is a run of letters and digits that looks made by a random name
// generator: at least 4 digits (a Go test's TestX<digits> in /tmp, go-build),
// or upper- and lower-case letters and a digit (mktemp's XXXXXX).
func random(s string) bool {
	var digits, upper, lower int
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r >= 'A' && r <= 'Z':
			upper++
		case r >= 'a' && r <= 'z':
			lower++
		}
	}
	return digits >= 4 || (digits > 0 && upper > 0 && lower > 0)
}

var (
	alnumRun = regexp.MustCompile(`[A-Za-z0-9]{6,}`)
	pyTemp   = regexp.MustCompile(`^tmp[a-z0-9_]{8}$`) // Python's tempfile
)

// kinds are the machine paths looked for. home and repo are this machine's
// home directory and the checkout's absolute path: a file naming either
// was made here, whatever they are.
func kinds(home, repo string) []kind {
	always := func(string, string) bool { return true }
	ks := []kind{
		{regexp.MustCompile(before + "(" + slash + "work" + slash + `)`), "a checkout or mirror of the project's development machines (/work)", always},
		{regexp.MustCompile(before + "(" + slash + "root" + slash + `)`), "root's home directory", always},
		{regexp.MustCompile(before + "(" + slash + "home" + slash + `([A-Za-z0-9._-]+))`), "a user's home directory (/home/<user>)",
			func(_ string, user string) bool { _, ok := fictional[user]; return !ok }},
		{regexp.MustCompile(before + "(" + slash + "tmp" + slash + `([A-Za-z0-9._-]+))`), "a random temporary directory (a Go test's, mktemp's, go-build's, Python's)",
			func(_ string, name string) bool {
				if strings.HasPrefix(name, "pytest-of-") || pyTemp.MatchString(name) {
					return true
				}
				for _, r := range alnumRun.FindAllString(name, -1) {
					if random(r) {
						return true
					}
				}
				return false
			}},
	}
	// First, the checkout's own path and the home directory, when they
	// name something more than a top-level directory (/src; /root is
	// below).
	var own []kind
	for _, p := range []struct{ path, what string }{{repo, "this checkout's absolute path"}, {home, "this machine's home directory ($HOME)"}} {
		p.path = filepath.Clean(p.path)
		if strings.Count(p.path, "/") >= 2 {
			own = append(own, kind{regexp.MustCompile(before + "(" + regexp.QuoteMeta(p.path) + `)(?:/|$|[^A-Za-z0-9_.-])`), p.what, always})
		}
	}
	return append(own, ks...)
}

// finding is one machine path in a file.
type finding struct {
	file  string
	where string // line N, or byte offset of a binary file
	path  string
	what  string
}

func (f finding) String() string {
	return fmt.Sprintf("%s:%s: %q is %s", f.file, f.where, f.path, f.what)
}

// scan looks for machine paths in the named files of dir.
func scan(t *testing.T, dir string, files []string, ks []kind) []finding {
	t.Helper()
	var found []finding
	seen := map[string]bool{} // file and place: found once, by the first kind
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if os.IsNotExist(err) {
			continue // deleted in the working tree, not yet committed
		}
		require.NoError(t, err)
		binary := bytes.IndexByte(data, 0) >= 0
		for _, k := range ks {
			for _, m := range k.re.FindAllSubmatchIndex(data, -1) {
				start, name := m[2], ""
				if len(m) >= 6 && m[4] >= 0 {
					name = string(data[m[4]:m[5]])
				}
				end := start
				for end < len(data) && data[end] > ' ' && data[end] < 0x7f && !strings.ContainsRune("\"'`<>)|,;", rune(data[end])) {
					end++
				}
				if !k.keep(string(data[start:end]), name) {
					continue
				}
				where := fmt.Sprintf("%d", bytes.Count(data[:start], []byte("\n"))+1)
				if binary {
					where = fmt.Sprintf("byte %d", start)
				}
				if seen[file+":"+where+":"+fmt.Sprint(start)] {
					continue
				}
				seen[file+":"+where+":"+fmt.Sprint(start)] = true
				found = append(found, finding{file, where, string(data[start:end]), k.what})
			}
		}
	}
	return found
}

// tracked is the files git tracks in the checkout at dir.
func tracked(t *testing.T, dir string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = dir
	out, err := cmd.Output()
	require.NoError(t, err, "git ls-files in %s: the guard reads the files git tracks (run it in a git checkout)", dir)
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files
}

func failOn(t *testing.T, found []finding) {
	t.Helper()
	if len(found) == 0 {
		return
	}
	var b strings.Builder
	for _, f := range found {
		b.WriteString("  " + f.String() + "\n")
	}
	t.Errorf("paths of a development machine in the repository: they mean nothing on another machine. Name files relative to the "+
		"repository, take the path from a variable with a documented default, rebuild a generated file from a neutral "+
		"directory (-ffile-prefix-map), or, for a fictional example, add it to test/machinepaths's allowed names with the reason:\n%s", b.String())
}

// TestNoMachinePaths: no file git tracks names a path of a development
// machine.
func TestNoMachinePaths(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	home, _ := os.UserHomeDir()
	files := tracked(t, repo)
	require.Greater(t, len(files), 100, "git ls-files lists the repository's files")
	failOn(t, scan(t, repo, files, kinds(home, repo)))
}

// TestGuardRejectsPlantedPaths: a repository with a machine path planted in
// a text file, a binary file (as a .pyc or a DWARF comp_dir carries one)
// and a committed temporary directory fails the guard, each found with its
// file and place; the look-alikes that are no machine's pass.
func TestGuardRejectsPlantedPaths(t *testing.T) {
	repo := t.TempDir()
	home := filepath.Join(repo, "home-of-someone")
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid"}, args...)...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	git("init", "-q")
	w := func(name, content string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(repo, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(repo, name), []byte(content), 0o644))
	}
	bad := map[string]string{
		"mk/client.mk":    "SRC ?= " + slash + "work/.mirror/client/repo\n",
		"docs/x.md":       "see `" + slash + "root/go/pkg/mod` and " + slash + "home/devuser/notes.txt\n",
		"stubs/x.pyc":     "\x00\x00\x0d\x0a" + slash + "work/main/testdata/stubs/x.py\x00\xff",
		"codeobj.elf":     "\x7fELF\x00\x00comp_dir\x00" + slash + "home/ci-runner/src\x00",
		"a_test.go":       "const dir = \"" + slash + "tmp/TestSomething3829104756/001\"\n",
		"b.sh":            "cd " + slash + "tmp/tmp.Xq3kP0aZ9w\n",
		"c.txt":           "out: " + slash + "tmp/go-build2931842/b001/x.test\n",
		"d.txt":           "where " + repo + "/testdata/apps/x.cpp:7\n",
		"e.txt":           "HOME was " + home + "\n",
		"deep/f.json":     `{"cwd": "` + slash + `tmp/tmpk3j_2xq9"}`,
		"deep/g.txt":      "a line\nanother\n  " + slash + "home/someone\n",
		"h.log":           "run in " + slash + "tmp/pytest-of-ci/pytest-3/x\n",
		"cmdline.bin":     "\x00cwd=" + slash + "root/\x00",
		"quoted/x.yaml":   "path: '" + slash + "work/shared/clients'\n",
		"tab/x.txt":       "\t" + slash + "work/x\n",
		"paren/x.md":      "(" + slash + "home/jdoe)\n",
		"equals/x.env":    "X=" + slash + "tmp/TestA1234567/001\n",
		"colon/x.conf":    "PATH=/usr/bin:" + slash + "root/bin\n",
		"comma/x.csv":     "1," + slash + "home/u1/app,2\n",
		"semicolon/x.txt": "a;" + slash + "work/y\n",
	}
	good := map[string]string{
		"ok/home.md":    "The cache is $HOME/.cache (~/.cache); HOME is usually /home/$USER or /home, root's /root.\n",
		"ok/alice.md":   "an app argument `%cwd%` became " + slash + "home/alice/secret, " + slash + "home/bob/x\n",
		"ok/rel.txt":    "build/work/x rocm/6.4/root/etc chroot/root/ homework/ network/work/\n",
		"ok/tmp.txt":    slash + "tmp/rocprof-go-<uid> " + slash + "tmp/rocprof-go-install.XXXXXX " + slash + "tmp/rocblas-gemm " + slash + "tmp/rocprof-go-vgpu-0 " + slash + "tmp/.rocm-root-missing " + slash + "tmp/out\n",
		"ok/env.txt":    "HOME=" + slash + "root PATH=/usr/bin\n",
		"ok/gfx.txt":    slash + "tmp/gfx942 " + slash + "tmp/job12\n",
		"ok/bin.dat":    "\x00\x01" + slash + "usr/lib/x86_64-linux-gnu/libc.so.6\x00",
		"ok/var.mk":     "SHARED ?= ../shared\nSRC ?= $(SHARED)/clients/x.tar.gz\n",
		"ok/sub/x.go":   "p := filepath.Join(os.TempDir(), \"rocprof-go-\"+uid)\n",
		"ok/workdir.md": "a work/ directory, `/workspace`, /works\n",
	}
	for name, content := range bad {
		w(name, content)
	}
	for name, content := range good {
		w(name, content)
	}
	w("untracked-not-read.txt", slash+"work/untracked\n")
	git("add", "--", ".")
	git("rm", "-q", "--cached", "untracked-not-read.txt")
	files := tracked(t, repo)
	require.Len(t, files, len(bad)+len(good))
	found := scan(t, repo, files, kinds(home, repo))
	byFile := map[string][]finding{}
	for _, f := range found {
		byFile[f.file] = append(byFile[f.file], f)
	}
	for name := range good {
		require.Empty(t, byFile[name], "%s is no machine's path", name)
	}
	require.Empty(t, byFile["untracked-not-read.txt"])
	for name := range bad {
		require.NotEmpty(t, byFile[name], "the guard misses the path planted in %s: %q", name, bad[name])
	}
	// Each is named with its file, place and kind.
	want := map[string]string{
		"mk/client.mk": `mk/client.mk:1: "` + slash + `work/.mirror/client/repo" is a checkout or mirror of the project's development machines (/work)`,
		"stubs/x.pyc":  `stubs/x.pyc:byte 4: "` + slash + `work/main/testdata/stubs/x.py" is a checkout or mirror of the project's development machines (/work)`,
		"codeobj.elf":  `codeobj.elf:byte 15: "` + slash + `home/ci-runner/src" is a user's home directory (/home/<user>)`,
		"a_test.go":    `a_test.go:1: "` + slash + `tmp/TestSomething3829104756/001" is a random temporary directory (a Go test's, mktemp's, go-build's, Python's)`,
		"deep/g.txt":   `deep/g.txt:3: "` + slash + `home/someone" is a user's home directory (/home/<user>)`,
		"d.txt":        `d.txt:1: "` + repo + `/testdata/apps/x.cpp:7" is this checkout's absolute path`,
	}
	for name, line := range want {
		var got []string
		for _, f := range byFile[name] {
			got = append(got, f.String())
		}
		require.Contains(t, got, line)
	}
}
