package pipeline

import (
	"context"
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
