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
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "app.pid")
	cmd := exec.Command(cliBinary, "--hip-runtime-trace", "-d", filepath.Join(dir, "out"), "--",
		"sh", "-c", `echo $$ > `+pidFile+`; exec sleep 60`)
	cmd.Env = append(os.Environ(), builtLibs(t))
	require.NoError(t, cmd.Start())
	var app int
	for i := 0; i < 500 && app == 0; i++ {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			app, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.NotZero(t, app, "the app started")
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	gone := time.Now().Add(time.Second)
	for time.Now().Before(gone) {
		if syscall.Kill(app, 0) != nil {
			return
		}
		// A zombie (killed, not yet reaped by init) counts as ended.
		if stat, err := os.ReadFile("/proc/" + strconv.Itoa(app) + "/stat"); err == nil && strings.Contains(string(stat), ") Z ") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Kill(app, syscall.SIGKILL)
	t.Fatalf("the app (pid %d) still runs a second after rocprof-go was killed", app)
}
