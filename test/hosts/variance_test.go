package hosts

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// hostCase is one condition of a host rocprof-go must work on.
type hostCase struct {
	name string
	// prepare adapts the profiled run's environment (env is a copy the case
	// may change) and returns it; nil keeps the test's own.
	prepare func(t *testing.T, env []string) []string
	// wrap puts the command into the condition from outside (before a ROCm
	// root is entered); nil runs it as it is.
	wrap func(cmd *exec.Cmd)
	// prefix runs the program itself under a command (inside the root).
	prefix []string
	// check proves that the condition held for a command run the same way
	// (prepare, wrap, prefix): its stdout matches checkMatch.
	check      []string
	checkMatch string
	// asUser runs the profiled run as a second, non-root local user.
	asUser bool
}

var hostCases = []hostCase{
	{name: "no-cpu-cache-sysfs",
		wrap:  func(cmd *exec.Cmd) { testsys.InMountNamespace(cmd, testsys.HideCPUCaches) },
		check: []string{"/bin/sh", "-c", "ls -A /sys/devices/system/cpu/cpu0/cache | grep -c index || true"}, checkMatch: "^0\n$"},
	{name: "64MiB-dev-shm",
		wrap:  func(cmd *exec.Cmd) { testsys.InMountNamespace(cmd, testsys.SmallDevShm) },
		check: []string{"/bin/sh", "-c", "df -k --output=size /dev/shm | tail -n 1"}, checkMatch: `^\s*65536\n$`},
	{name: "home-unset",
		prepare: func(t *testing.T, env []string) []string {
			nodeLocalCacheMadeHere(t, env)
			return without(env, "HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR")
		},
		check: []string{"/bin/sh", "-c", "echo \"home=${HOME-unset}\""}, checkMatch: "^home=unset\n$"},
	{name: "tmpdir-unset",
		prepare: func(t *testing.T, env []string) []string { return without(env, "TMPDIR") },
		check:   []string{"/bin/sh", "-c", "echo \"tmpdir=${TMPDIR-unset}\""}, checkMatch: "^tmpdir=unset\n$"},
	{name: "tmpdir-set",
		prepare: func(t *testing.T, env []string) []string {
			return append(without(env, "TMPDIR"), "TMPDIR="+t.TempDir())
		},
		check: []string{"/bin/sh", "-c", "echo \"tmpdir=${TMPDIR-unset}\""}, checkMatch: "^tmpdir=/"},
	{name: "read-only-sys",
		wrap:  func(cmd *exec.Cmd) { testsys.InMountNamespace(cmd, testsys.ReadOnlySys) },
		check: []string{"/bin/sh", "-c", "touch /sys/rpg-probe 2>&1; grep ' /sys ' /proc/self/mounts | tail -n 1"}, checkMatch: `Read-only file system(.|\n)* /sys sysfs ro,`},
	{name: "unprivileged-container",
		wrap: testsys.InUserNamespace, prefix: testsys.DropSysAdmin,
		// CAP_SYS_ADMIN is bit 21 of the bounding set: bit 1 of its sixth
		// hex digit from the right.
		check: []string{"/bin/sh", "-c", "grep CapBnd /proc/self/status; cat /proc/self/uid_map"}, checkMatch: `CapBnd:\s+[0-9a-f]*[014589cd][0-9a-f]{5}\n\s*0\s+0\s+1\n`},
	{name: "non-root-user", asUser: true,
		check: []string{"id", "-u"}, checkMatch: `^[1-9][0-9]*\n$`},
}

// without is env less the named variables.
func without(env []string, names ...string) []string {
	var out []string
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		drop := false
		for _, n := range names {
			drop = drop || name == n
		}
		if !drop {
			out = append(out, e)
		}
	}
	return out
}

// Each condition of hostCases, on the host's ROCm 5.2 and on the newest
// runtime of the matrix: the condition is shown to hold, then a profiled run
// of the sample app keeps every record (requireEveryRecord).
func TestHostVariance(t *testing.T) {
	rts := matrix(t)
	for _, rt := range []rocmmatrix.Runtime{rts[0], rts[len(rts)-1]} {
		for _, c := range hostCases {
			t.Run(rt.Name+"/"+c.name, func(t *testing.T) { hostCaseRun(t, rt, c) })
		}
	}
}

func hostCaseRun(t *testing.T, rt rocmmatrix.Runtime, c hostCase) {
	cli := testsys.Artifact(t, "rocprof-go")
	app := filepath.Join(rt.Apps, "multistream")
	out := t.TempDir()
	env := baseEnv()
	var uid, gid int
	if c.asUser {
		// The second user runs copies of the CLI and the app from a
		// directory everybody can read (the checkout may be private), has
		// a home of its own and writes into its own output directory.
		uid, gid = testsys.SecondUser(t)
		pub := t.TempDir()
		require.NoError(t, os.Chmod(filepath.Dir(pub), 0o755))
		require.NoError(t, os.Chmod(pub, 0o755))
		cli = copyExecutable(t, cli, filepath.Join(pub, "rocprof-go"))
		app = copyExecutable(t, app, filepath.Join(pub, "multistream"))
		home := filepath.Join(pub, "home")
		out = filepath.Join(pub, "out")
		for _, d := range []string{home, out} {
			require.NoError(t, os.Mkdir(d, 0o700))
			require.NoError(t, os.Chown(d, uid, gid))
		}
		env = append(without(env, "HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "USER", "LOGNAME"), "HOME="+home)
	}
	if c.prepare != nil {
		env = c.prepare(t, env)
	}
	cmdFor := func(prog string, args ...string) *exec.Cmd {
		if c.prefix != nil {
			args = append(append(append([]string(nil), c.prefix[1:]...), prog), args...)
			prog = c.prefix[0]
		}
		if c.asUser {
			// setpriv drops to the user after the runtime's root (if any)
			// is entered, which needs root.
			args = append([]string{"--reuid", strconv.Itoa(uid), "--regid", strconv.Itoa(gid), "--clear-groups", "--", prog}, args...)
			prog = "setpriv"
		}
		cmd := command(t, rt, env, prog, args...)
		if c.asUser {
			cmd.Dir = "/"
		}
		if c.wrap != nil {
			c.wrap(cmd)
		}
		return cmd
	}
	o := run(t, cmdFor(c.check[0], c.check[1:]...))
	require.Equal(t, 0, o.code, "checking the condition: %s", o.stderr)
	require.Regexp(t, c.checkMatch, o.stdout, "the condition %s does not hold", c.name)

	args := profileArgs(rt, out)
	args[len(args)-3] = app
	o = run(t, cmdFor(cli, args...))
	requireEveryRecord(t, o, out, "ROCm "+rt.Name+", "+c.name)
}

// nodeLocalCacheMadeHere removes, when the test ends, the node-local library
// cache a run without HOME unpacks into (TMPDIR's or /tmp's
// rocprof-go-<uid>, internal/launch's nodeLocalCacheRoot) when the test made
// it: it outlived the suite in /tmp. One that was there before (a
// developer's) stays.
func nodeLocalCacheMadeHere(t *testing.T, env []string) {
	tmp := "/tmp"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok && filepath.IsAbs(v) {
			tmp = v
		}
	}
	for _, d := range []string{filepath.Join(tmp, "rocprof-go-"+strconv.Itoa(os.Getuid())), filepath.Join("/tmp", "rocprof-go-"+strconv.Itoa(os.Getuid()))} {
		if _, err := os.Lstat(d); err == nil {
			continue
		}
		t.Cleanup(func() { _ = os.RemoveAll(d) })
	}
}

// copyExecutable copies an executable to dst (mode 0755) and returns dst.
func copyExecutable(t *testing.T, src, dst string) string {
	in, err := os.Open(src)
	require.NoError(t, err)
	defer in.Close()
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(f, in)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return dst
}
