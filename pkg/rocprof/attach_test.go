package rocprof

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
)

// Attach takes its options as Run does and fails with one line when the
// process is gone, leaving no run directory behind; an app command with
// --attach is refused.
func TestAttachToAProcessThatIsGone(t *testing.T) {
	gone := exec.Command("true")
	require.NoError(t, gone.Run())
	spools := t.TempDir()
	out := filepath.Join(t.TempDir(), "out")
	opts := Options{Args: []string{"--kernel-trace", "-d", out}, Environ: append(os.Environ(), launch.SpoolRootEnv+"="+spools)}
	res, err := Attach(context.Background(), opts, gone.ProcessState.Pid())
	require.Nil(t, res)
	require.ErrorContains(t, err, "no such process")
	left, _ := os.ReadDir(spools)
	require.Empty(t, left, "the run's directory is removed")

	_, err = Run(context.Background(), Options{Args: []string{"--kernel-trace", "--attach", "1"}}, []string{"./app"})
	require.ErrorContains(t, err, "cannot be combined with an application command")
}
