package pipeline

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
)

// TestHIPTraceWritesAgentInfo: --hip-trace alone writes agent_info.csv, as
// rocprofv3 does with any CSV output (the shim is loaded to describe the
// agents and intercepts nothing: no kernel or copy record), and the ROCpd
// database has its agents too.
func TestHIPTraceWritesAgentInfo(t *testing.T) {
	t.Setenv(launch.LibDirEnv, builtLibDir(t))
	app := sampleApp(t, "multistream")
	out := t.TempDir()
	var progress bytes.Buffer
	res, err := Run(context.Background(), Options{Stdout: &bytes.Buffer{}, Progress: &progress, Args: []string{
		"--virtual-gpu", "--hip-trace", "-f", "csv", "rocpd", "-d", out, "-o", "run"}}, []string{app})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus)
	require.Equal(t, []string{"run_agent_info.csv", "run_hip_api_trace.csv", "run_results.db"}, listFiles(t, out))
	rows := readCSV(t, filepath.Join(out, "run_agent_info.csv"))
	require.Len(t, rows, 1+2, "the virtual machine's CPU and GPU")
	require.Equal(t, []string{"CPU", "GPU"}, column(rows, "Agent_Type"))
	require.Equal(t, []string{"0", "1"}, column(rows, "Logical_Node_Id"))
	require.Equal(t, "gfx90a", column(rows, "Name")[1])
	require.Equal(t, "CPU|0\nGPU|1", sqlite3(t, filepath.Join(out, "run_results.db"),
		"SELECT type, logical_index FROM rocpd_info_agent ORDER BY logical_index"))
	require.NotContains(t, progress.String(), "warning")
}
