package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/launch/launchtest"
)

// `rocprof-go ... > >(tee log)`: bash forks tee as a child of the process
// that becomes rocprof-go, and tee reads until rocprof-go's stdout closes.
// rocprof-go waits for the app's processes only, so it exits when the app
// does; before, it waited for tee, which waited for it, forever.
func TestProcessSubstitutionDoesNotHang(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c",
		`"$0" --kernel-trace -d "$1" -- sh -c 'echo from the app' > >(tee "$2"); status=$?; wait $!; exit $status`,
		cliBinary, filepath.Join(dir, "out"), log)
	cmd.Env = append(os.Environ(), launch.LibDirEnv+"="+launchtest.FakeLibDir(t))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "rocprof-go hung waiting for tee, its inherited child:\n%s", out)
	require.NoError(t, err, string(out))
	data, err := os.ReadFile(log)
	require.NoError(t, err)
	require.Equal(t, "from the app\n", string(data))
}
