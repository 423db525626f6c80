package launch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Children rocprof-go had before the app started are not the app's: a
// shell's process substitution (`rocprof-go ... > >(tee log)`) makes tee
// one, and tee runs until rocprof-go exits. The run ends when the app's
// processes do, and that child is neither reaped nor signalled.
func TestInheritedChildIsNotWaitedFor(t *testing.T) {
	inherited := exec.Command("sleep", "30")
	require.NoError(t, inherited.Start())
	t.Cleanup(func() { _ = inherited.Process.Kill(); _ = inherited.Wait() })

	r := runner(t)
	start := time.Now()
	res, err := runOne(r, plan(t, "--kernel-trace", "--timeout", "20s", "-d", t.TempDir(), "--", "true"))
	require.NoError(t, err)
	require.Equal(t, 0, res.Process.ExitStatus)
	require.False(t, res.Process.TimedOut)
	require.Less(t, time.Since(start), 10*time.Second, "the run does not wait for a child it did not start")
	require.NoError(t, inherited.Process.Signal(syscall.Signal(0)), "left running, and not reaped")
}

// An orphan of an inherited child (adopted by rocprof-go as subreaper while
// the app runs) is not the app's either: its environment lacks the pass's
// spool directory. The app's own orphans are still waited for.
func TestOnlyTheAppsOrphansAreWaitedFor(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "orphan.pid")
	// Orphans its sleep 30 after 300 ms, while the app below runs.
	inherited := exec.Command("sh", "-c", `sleep 0.3; sleep 30 & echo $! > `+pidFile+`; exit 0`)
	require.NoError(t, inherited.Start())
	t.Cleanup(func() { _ = inherited.Wait() })

	r := runner(t)
	done := filepath.Join(dir, "app-orphan-done")
	start := time.Now()
	res, err := runOne(r, plan(t, "--kernel-trace", "--timeout", "20s", "-d", t.TempDir(), "--",
		"sh", "-c", `(sleep 1; touch `+done+`) & exit 0`))
	require.NoError(t, err)
	require.False(t, res.Process.TimedOut)
	require.FileExists(t, done, "the app's orphan was waited for")
	require.Less(t, time.Since(start), 10*time.Second, "the inherited child's orphan was not")

	data, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(pid, syscall.Signal(0)), "the other orphan runs on")
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	var ws syscall.WaitStatus
	_, err = syscall.Wait4(pid, &ws, 0, nil) // ours as subreaper: reap it
	require.NoError(t, err)
}
