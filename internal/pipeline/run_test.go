package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/launch/launchtest"
)

func TestManifestIsWrittenEvenWhenTheAppFails(t *testing.T) {
	t.Setenv(launch.LibDirEnv, launchtest.FakeLibDir(t))
	out := t.TempDir()
	res, err := Run(context.Background(), Options{Args: []string{"--kernel-trace", "-d", out, "-f", "csv"}},
		[]string{"sh", "-c", "exit 3"})
	require.NoError(t, err)
	require.Equal(t, 3, res.ExitStatus)
	m, err := LoadManifest(out)
	require.NoError(t, err)
	require.Equal(t, 3, m.ExitStatus)
	require.Equal(t, []string{"sh", "-c", "exit 3"}, m.Command)
	require.Len(t, m.Passes, 1)
	require.Equal(t, ".", m.Passes[0].Dir)
	require.Equal(t, 3, m.Passes[0].ExitStatus)
	require.Equal(t, "csv", m.Options["output_format"])
	require.Equal(t, Version, m.Version)
}

func TestManifestRecordsTimeoutAndPasses(t *testing.T) {
	t.Setenv(launch.LibDirEnv, launchtest.FakeLibDir(t))
	out := t.TempDir()
	res, err := Run(context.Background(), Options{Args: []string{"--kernel-trace", "-d", out, "--timeout", "200ms"}},
		[]string{"sleep", "20"})
	require.NoError(t, err)
	require.Equal(t, launch.ExitTimeout, res.ExitStatus)
	require.True(t, res.Manifest.TimedOut)
	require.True(t, res.Manifest.Passes[0].TimedOut)
	require.Greater(t, res.Manifest.Passes[0].DurationS, 0.1)
}

// The pass loop: one run of the app per pmc line, in order, each pass's
// outputs written (its directory in run.json) before the next starts.
func TestPassesRunInOrder(t *testing.T) {
	t.Setenv(launch.LibDirEnv, launchtest.FakeLibDir(t))
	out := t.TempDir()
	input := filepath.Join(t.TempDir(), "in.txt")
	require.NoError(t, os.WriteFile(input, []byte("pmc: SQ_WAVES\npmc: GRBM_COUNT\npmc: TCC_HIT\n"), 0o600))
	log := filepath.Join(out, "runs.txt")
	res, err := Run(context.Background(), Options{Args: []string{"-i", input, "-d", out, "-f", "csv", "--virtual-gpu", "gfx90a"}},
		[]string{"sh", "-c", `echo "$ROCPROF_OUTPUT_PATH" >> ` + log})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus)
	require.Len(t, res.Manifest.Passes, 3)
	data, _ := os.ReadFile(log)
	require.Equal(t, filepath.Join(out, "pmc_1")+"\n"+filepath.Join(out, "pmc_2")+"\n"+filepath.Join(out, "pmc_3")+"\n", string(data))
	for i, p := range res.Manifest.Passes {
		require.Equal(t, fmt.Sprintf("pmc_%d", i+1), p.Dir)
	}
}

// A pass whose app fails ends the run with its status; its outputs are
// still written, and no later pass runs.
func TestFailingPassEndsTheRun(t *testing.T) {
	t.Setenv(launch.LibDirEnv, launchtest.FakeLibDir(t))
	out := t.TempDir()
	input := filepath.Join(t.TempDir(), "in.txt")
	require.NoError(t, os.WriteFile(input, []byte("pmc: SQ_WAVES\npmc: GRBM_COUNT\npmc: TCC_HIT\n"), 0o600))
	var progress strings.Builder
	res, err := Run(context.Background(), Options{Args: []string{"-i", input, "-d", out, "-f", "csv", "--virtual-gpu", "gfx90a"}, Progress: &progress},
		[]string{"sh", "-c", `case "$ROCPROF_OUTPUT_PATH" in *pmc_2) exit 3;; esac`})
	require.NoError(t, err)
	require.Equal(t, 3, res.ExitStatus)
	require.Len(t, res.Manifest.Passes, 2)
	require.Equal(t, 3, res.Manifest.Passes[1].ExitStatus)
	require.Contains(t, progress.String(), "rocprof-go: pass 2: the app exited with status 3; the remaining passes are not run")
}
