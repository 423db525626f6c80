package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
)

// builtLibs points the CLI at the libraries `make build` made.
func builtLibs(t testing.TB) string {
	build := filepath.Join("..", "..", "build")
	dir := t.TempDir()
	for _, p := range []string{"lib/librocprof-go-preload.so", "lib/librocprof-go-shim.so", "vgpu/librocprof-go-vgpu.so"} {
		src, err := filepath.Abs(filepath.Join(build, p))
		require.NoError(t, err)
		require.FileExists(t, src, "run make build first")
		require.NoError(t, os.Symlink(src, filepath.Join(dir, filepath.Base(p))))
	}
	return launch.LibDirEnv + "=" + dir
}

// A kernel trace the HSA runtime could not give (the app's launcher dropped
// HSA_TOOLS_LIB): the CLI says which domains were lost and why, records them
// in run.json, and exits 1 although the app exited 0.
func TestLostDomainsExitNonZero(t *testing.T) {
	app, err := filepath.Abs(filepath.Join("..", "..", "build", "testdata", "multistream"))
	require.NoError(t, err)
	out := t.TempDir()
	r := runCLI(t, []string{builtLibs(t)}, "--virtual-gpu", "--kernel-trace", "-d", out, "-o", "run",
		"--", "env", "-u", "HSA_TOOLS_LIB", app, "1", "1")
	require.Equal(t, 1, r.code, "stderr: %s", r.stderr)
	require.Contains(t, r.stdout, "streams=1 iterations=1", "the app ran to the end")
	require.Contains(t, r.stderr, "rocprof-go: error: requested domains were not collected:")
	require.Regexp(t, `pid \d+: kernel_trace: the HSA runtime did not load rocprof-go's shim \(HSA_TOOLS_LIB\)`, r.stderr)
	raw, err := os.ReadFile(filepath.Join(out, "run.json"))
	require.NoError(t, err)
	var m struct {
		ExitStatus int `json:"exit_status"`
		Lost       []struct {
			PID     int      `json:"pid"`
			Domains []string `json:"domains"`
			Reason  string   `json:"reason"`
		} `json:"lost_domains"`
	}
	require.NoError(t, json.Unmarshal(raw, &m))
	require.Equal(t, 0, m.ExitStatus, "the app's own status")
	require.Len(t, m.Lost, 1)
	require.Equal(t, []string{"kernel_trace"}, m.Lost[0].Domains)
	require.NotZero(t, m.Lost[0].PID)
}
