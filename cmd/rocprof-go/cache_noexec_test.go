package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// noexecTmpfs mounts a tmpfs with noexec in a new directory of the test's,
// unmounted when the test ends: /tmp or a scratch file system as many
// clusters mount them.
func noexecTmpfs(t *testing.T) string {
	t.Helper()
	require.Equal(t, 0, os.Geteuid(), "this test mounts a noexec tmpfs: run it as root (CI does)")
	mnt := filepath.Join(t.TempDir(), "noexec")
	require.NoError(t, os.Mkdir(mnt, 0o755))
	require.NoError(t, syscall.Mount("rpg-noexec", mnt, "tmpfs", syscall.MS_NOEXEC, "size=64m,mode=0755"))
	t.Cleanup(func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) })
	return mnt
}

// A library cache on a noexec mount (XDG_CACHE_HOME there, or the /tmp
// fallback of many clusters) is passed over: the app's processes could not
// map the injected libraries executable there, and the loader's error
// looked like the app's. The run unpacks them in the next place (here
// TMPDIR), says why, and traces the app; before, the app ran untraced and
// the run failed. ROCPROF_GO_LIBDIR on a noexec mount is refused, naming
// the mount.
func TestLibraryCacheOnNoexecMountIsPassedOver(t *testing.T) {
	app, err := filepath.Abs(filepath.Join("..", "..", "build", "testdata", "hip_calls_rate"))
	require.NoError(t, err)
	noexec := noexecTmpfs(t)
	tmp := t.TempDir()
	out := t.TempDir()
	env := []string{"ROCPROF_GO_LIBDIR=", "XDG_RUNTIME_DIR=", "XDG_CACHE_HOME=" + filepath.Join(noexec, "cache"), "TMPDIR=" + tmp}
	r := runCLI(t, env, "--virtual-gpu", "--hip-runtime-trace", "-f", "csv", "-d", out, "-o", "run", "--", app, "1000")
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	cache := filepath.Join(tmp, "rocprof-go-"+strconv.Itoa(os.Getuid()))
	require.Contains(t, r.stderr, "rocprof-go: note: the library cache is in "+cache+": passed over "+
		filepath.Join(noexec, "cache", "rocprof-go")+" (on "+noexec+", mounted noexec), where the app's processes could not map the injected libraries executable")
	require.NotContains(t, r.stderr, "cannot be preloaded")
	require.Greater(t, csvRows(t, filepath.Join(out, "run_hip_api_trace.csv")), 1000, "the app was traced")
	entries, err := os.ReadDir(cache)
	require.NoError(t, err)
	require.NotEmpty(t, entries, "the libraries were unpacked in TMPDIR")
	_, err = os.Stat(filepath.Join(noexec, "cache", "rocprof-go"))
	require.True(t, os.IsNotExist(err), "nothing unpacked on the noexec mount")

	// ROCPROF_GO_LIBDIR there: refused before the app starts.
	libdir := filepath.Join(noexec, "libs")
	require.NoError(t, os.Mkdir(libdir, 0o700))
	r = runCLI(t, []string{launch.LibDirEnv + "=" + libdir}, "--hip-runtime-trace", "-d", t.TempDir(), "--", "echo", "ran")
	require.Equal(t, 1, r.code, "stderr: %s", r.stderr)
	require.Contains(t, r.stderr, "rocprof-go: error: "+launch.LibDirEnv+"="+libdir+": the directory is on a file system mounted noexec ("+noexec+")")
	require.NotContains(t, r.stdout, "ran")
}

// When every place the library cache could go is on a noexec mount
// (XDG_CACHE_HOME, TMPDIR and /tmp), the run stops before the app starts
// and says what to set.
func TestLibraryCacheWithEveryPlaceNoexecIsRefused(t *testing.T) {
	noexec := noexecTmpfs(t)
	// /tmp/rocprof-go-<uid> is the last place: a noexec tmpfs over it in a
	// private mount namespace (the directory is made for the mount point,
	// and removed after, when it was not there before).
	last := filepath.Join("/tmp", "rocprof-go-"+strconv.Itoa(os.Getuid()))
	if _, err := os.Lstat(last); os.IsNotExist(err) {
		require.NoError(t, os.Mkdir(last, 0o700))
		t.Cleanup(func() { _ = os.Remove(last) })
	}
	cmd := exec.Command(cliBinary, "--hip-runtime-trace", "-d", t.TempDir(), "--", "echo", "ran")
	cmd.Env = append(environWithout("ROCPROF_GO_LIBDIR=", "XDG_", "TMPDIR="),
		"XDG_CACHE_HOME="+filepath.Join(noexec, "cache"), "TMPDIR="+filepath.Join(noexec, "tmp"))
	testsys.InMountNamespace(cmd, "mount -t tmpfs -o noexec,size=16m,mode=0700 rpg-noexec "+last+" || exit 125")
	msg, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", msg)
	require.Equal(t, 1, ee.ExitCode(), "%s", msg)
	require.Contains(t, string(msg), "rocprof-go: error: the injected libraries cannot be unpacked where the app could run them: "+
		filepath.Join(noexec, "cache", "rocprof-go")+" (on "+noexec+", mounted noexec), "+
		filepath.Join(noexec, "tmp", filepath.Base(last))+" (on "+noexec+", mounted noexec), "+
		last+" (on "+last+", mounted noexec): every place for the library cache is on a file system mounted noexec; "+
		"set XDG_CACHE_HOME to a directory on a file system mounted without noexec")
	require.Contains(t, string(msg), "or ROCPROF_GO_LIBDIR to a directory holding rocprof-go's libraries")
	require.NotContains(t, string(msg), "ran\n", "the app did not start")
}
