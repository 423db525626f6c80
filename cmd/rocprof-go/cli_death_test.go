package main

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

// SIGKILL of rocprof-go (an OOM kill, a CI job cancelled hard) ends the app
// within a second instead of leaving it to run on unobserved.
func TestKillingTheCLIEndsTheApp(t *testing.T) {
	// The killed rocprof-go leaves its run directory (rocprof-go cannot
	// clean up after a SIGKILL, and what it holds is the user's data): in
	// the test's own spool root, not /dev/shm, where it outlived the test.
	spoolRoot := t.TempDir()
	cmd, app := startRunOfASleeper(t, builtLibs(t), spoolRoot)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	left, err := filepath.Glob(filepath.Join(spoolRoot, "rocprof-go-run-*"))
	require.NoError(t, err)
	require.Len(t, left, 1, "the killed rocprof-go's run directory is in the test's spool root")
	if ended(app, time.Second) {
		return
	}
	_ = syscall.Kill(app, syscall.SIGKILL)
	t.Fatalf("the app (pid %d) still runs a second after rocprof-go was killed", app)
}

// startRunOfASleeper starts rocprof-go (--hip-runtime-trace, its spools
// under spoolRoot) on an app that records nothing and sleeps a minute, and
// returns it once the app runs, with the app's pid.
func startRunOfASleeper(t *testing.T, libs, spoolRoot string) (*exec.Cmd, int) {
	t.Helper()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "app.pid")
	cmd := exec.Command(cliBinary, "--hip-runtime-trace", "-d", filepath.Join(dir, "out"), "--",
		"sh", "-c", `echo $$ > `+pidFile+`; exec sleep 60`)
	cmd.Env = append(os.Environ(), libs, "ROCPROF_GO_SPOOL_ROOT="+spoolRoot)
	require.NoError(t, cmd.Start())
	var app int
	for i := 0; i < 500 && app == 0; i++ {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			app, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if app == 0 {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	require.NotZero(t, app, "the app started")
	return cmd, app
}

// ended reports whether process pid ended within d: gone, or a zombie
// (killed, not yet reaped by init).
func ended(pid int, d time.Duration) bool {
	gone := time.Now().Add(d)
	for {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && strings.Contains(string(stat), ") Z ") {
			return true
		}
		if !time.Now().Before(gone) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}
