package reliability

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
)

// everyFormat asks for every output file a run can write: every -f format,
// the --stats files, a summary file and <prefix>_config.json (which holds
// the environment), under a fixed prefix so their names are known before
// the run.
var everyFormat = []string{"--kernel-trace", "--hip-trace", "--stats", "-S", "--summary-output-file", "sum",
	"--output-config", "-o", "out", "-f", "csv", "json", "pftrace", "otf2", "rocpd", "parquet"}

// names lists a directory's entries, sorted.
func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// requireNoTemporaryFiles checks that no atomicfile temporary file or stage
// is left anywhere under dir.
func requireNoTemporaryFiles(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		require.False(t, atomicfile.IsTemp(p), "temporary file left behind: %s", p)
		return nil
	}))
}

// In a shared output directory another user plants a symlink under every
// name a run will write, each pointing to a file of root's (0600). Before
// the fix, root wrote its CSV through the links into those files. Now each
// output is written to a new temporary file and renamed onto its name,
// which replaces the link itself: every victim is unchanged, every output
// is a regular file (or, for OTF2's event directory, a directory), and no
// temporary file is left.
func TestPlantedSymlinksAreReplacedNotFollowed(t *testing.T) {
	t.Parallel()
	uid, gid := testsys.SecondUser(t)
	argv := []string{app(t, "tiny_kernels"), "50"}

	// A first run learns the names (the prefix is fixed: -o out).
	ref := profiled{opts: everyFormat, argv: argv}.run(t)
	require.Equal(t, 0, ref.exit, "stderr:\n%s", ref.stderr)
	want := names(t, ref.dir)
	for _, n := range []string{"run.json", "out_config.json", "out_sum.txt", "out_kernel_trace.csv",
		"out_hip_api_trace.csv", "out_agent_info.csv", "out_kernel_stats.csv", "out_domain_stats.csv",
		"out_results.json", "out_results.pftrace", "out_results.otf2", "out_results.def", "out_results",
		"out_results.db", "out_kernels.parquet", "out_hip_api.parquet"} {
		require.Contains(t, want, n)
	}

	// The shared directory: writable by everyone with the sticky bit, as
	// /tmp and shared scratch directories are (one without it is refused:
	// TestWorldWritableOutputDirectoryIsRefused). The kernel's
	// protected_symlinks would refuse root the other user's links here if
	// they were followed; they must be replaced.
	shared := filepath.Join(t.TempDir(), "shared")
	require.NoError(t, os.Mkdir(shared, 0o777))
	require.NoError(t, os.Chmod(shared, 0o777|os.ModeSticky))
	victims := filepath.Join(t.TempDir(), "victims")
	require.NoError(t, os.Mkdir(victims, 0o700))
	type victim struct{ link, target, content string }
	var planted []victim
	for _, n := range want {
		target := filepath.Join(victims, n)
		content := "root's own file behind " + n + "\n"
		if st, err := os.Stat(filepath.Join(ref.dir, n)); err == nil && st.IsDir() {
			require.NoError(t, os.Mkdir(target, 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(target, "keep"), []byte(content), 0o600))
		} else {
			require.NoError(t, os.WriteFile(target, []byte(content), 0o600))
		}
		link := filepath.Join(shared, n)
		require.NoError(t, os.Symlink(target, link))
		require.NoError(t, os.Lchown(link, uid, gid), "the link is the other user's")
		planted = append(planted, victim{link, target, content})
	}

	res := profiled{opts: everyFormat, argv: argv, dir: shared}.run(t)
	require.Equal(t, 0, res.exit, "stderr:\n%s", res.stderr)
	require.Equal(t, want, names(t, shared), "the same outputs, and nothing else")
	for _, v := range planted {
		st, err := os.Lstat(v.link)
		require.NoError(t, err)
		require.Zero(t, st.Mode()&os.ModeSymlink, "%s is still a symlink", v.link)
		require.Equal(t, uint32(0), st.Sys().(*syscall.Stat_t).Uid, "%s is root's output now", v.link)
		refSt, err := os.Stat(filepath.Join(ref.dir, filepath.Base(v.link)))
		require.NoError(t, err)
		require.Equal(t, refSt.Mode(), st.Mode(), "%s: same type and mode as without the link", v.link)
		if st.IsDir() {
			require.Equal(t, []string{"keep"}, names(t, v.target), "the victim directory %s is untouched", v.target)
			v.target = filepath.Join(v.target, "keep")
		}
		data, err := os.ReadFile(v.target)
		require.NoError(t, err)
		require.Equal(t, v.content, string(data), "the victim %s is untouched", v.target)
		vst, err := os.Stat(v.target)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), vst.Mode().Perm(), "the victim's mode")
	}
	// The files that hold the environment are private; the others have
	// the umask's mode.
	for _, n := range []string{"out_config.json", "out_results.db"} {
		st, err := os.Stat(filepath.Join(shared, n))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), n)
	}
	requireNoTemporaryFiles(t, shared)
	m := readManifest(t, shared)
	for _, f := range m.Files {
		if f.Format == "parquet" {
			continue // listed by its prefix ("out"), one file per domain
		}
		_, err := os.Stat(filepath.Join(shared, f.Path))
		require.NoError(t, err, "run.json lists %s", f.Path)
	}
	report(t, "%d symlinks planted (owned by uid %d) under every output name; after the run: %d regular outputs, 0 victims changed, 0 temporary files",
		len(planted), uid, len(want))
}

// A full output file system fails each format in turn (a 64 KiB tmpfs;
// every format's output of 5000 dispatches and 10000 HIP calls is larger).
// The run exits 1 naming the file and ENOSPC, nothing is left under the
// failed format's names, no temporary file is left, and run.json (which
// fits once the failed output's temporary file is gone) lists only files
// that are there and complete.
func TestFullDiskLeavesNoPartialOutput(t *testing.T) {
	t.Parallel()
	formats := []struct {
		format string
		files  []string // the format's names, none of which may be left
		cause  string   // in the message
	}{
		{"csv", []string{"out_kernel_trace.csv", "out_hip_api_trace.csv"}, "no space left on device"},
		{"json", []string{"out_results.json"}, "no space left on device"},
		{"pftrace", []string{"out_results.pftrace"}, "no space left on device"},
		{"otf2", []string{"out_results.otf2", "out_results.def", "out_results"}, "No space left on device"},
		{"rocpd", []string{"out_results.db"}, "database or disk is full"},
		{"parquet", []string{"out_kernels.parquet", "out_hip_api.parquet"}, "no space left on device"},
	}
	for _, tc := range formats {
		t.Run(tc.format, func(t *testing.T) {
			t.Parallel()
			mnt := testsys.SmallTmpfs(t, "64k")

			res := profiled{opts: []string{"--kernel-trace", "--hip-trace", "-o", "out", "-f", tc.format},
				argv: []string{app(t, "tiny_kernels"), "5000"}, dir: mnt}.run(t)
			if m := regexp.MustCompile(`the recorded data is kept in (\S+)\)`).FindStringSubmatch(res.stderr); m != nil {
				t.Cleanup(func() { os.RemoveAll(filepath.Dir(m[1])) })
			}
			require.Equal(t, 1, res.exit, "stderr:\n%s", res.stderr)
			msg := firstLine(res.stderr, "rocprof-go: error:")
			require.Contains(t, res.stderr, tc.cause)
			named := false
			for _, f := range tc.files {
				named = named || strings.Contains(msg, filepath.Join(mnt, f))
				_, err := os.Lstat(filepath.Join(mnt, f))
				require.True(t, os.IsNotExist(err), "%s is left under its final name", f)
			}
			require.True(t, named, "the message names the file: %s", msg)
			requireNoTemporaryFiles(t, mnt)
			left := names(t, mnt)
			if len(left) > 0 {
				m := readManifest(t, mnt)
				for _, f := range m.Files {
					require.NotContains(t, tc.files, f.Path, "run.json lists a file that failed")
				}
				requireManifestMatches(t, mnt, m)
			}
			report(t, "-f %s on a 64 KiB tmpfs: exit %d; left: %v; message: %q", tc.format, res.exit, left, msg)
		})
	}
}

// An output directory every user can write without the sticky bit, or one
// below such a directory, is refused before the app starts and before
// anything is created: any user could rename it away and put a link to a
// directory of theirs in its place. The message names the directory and
// the fix. A group-writable project directory (setgid, another user's) is
// used.
func TestWorldWritableOutputDirectoryIsRefused(t *testing.T) {
	t.Parallel()
	uid, gid := testsys.SecondUser(t)
	argv := []string{app(t, "tiny_kernels"), "5"}
	base := t.TempDir()
	open := filepath.Join(base, "open")
	require.NoError(t, os.Mkdir(open, 0o777))
	require.NoError(t, os.Chmod(open, 0o777))
	for _, dir := range []string{open, filepath.Join(open, "run1", "out")} {
		res := profiled{opts: []string{"--kernel-trace"}, argv: argv, dir: dir}.run(t)
		require.Equal(t, 1, res.exit, "stderr:\n%s", res.stderr)
		require.Contains(t, res.stderr, open+" cannot be trusted with outputs (writable by every user (mode 0777) without the sticky bit")
		require.Contains(t, res.stderr, "chmod +t")
		require.NotContains(t, res.stderr, "dispatch", "the app did not run")
		require.Empty(t, names(t, open), "nothing created in %s", open)
	}
	project := filepath.Join(base, "project")
	require.NoError(t, os.Mkdir(project, 0o775))
	require.NoError(t, os.Chmod(project, 0o775|os.ModeSetgid))
	require.NoError(t, os.Chown(project, uid, gid))
	res := profiled{opts: []string{"--kernel-trace", "-f", "csv", "-o", "out"}, argv: argv, dir: filepath.Join(project, "alice", "run1")}.run(t)
	require.Equal(t, 0, res.exit, "stderr:\n%s", res.stderr)
	require.FileExists(t, filepath.Join(project, "alice", "run1", "out_kernel_trace.csv"))
	report(t, "0777 output directory and one below it: refused, exit 1, nothing created; a group-writable setgid project directory of uid %d: used", uid)
}
