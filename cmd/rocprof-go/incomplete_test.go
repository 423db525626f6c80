package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// compare and summary refuse a run whose run.json says it timed out
// (issue 31), naming it and why; --allow-incomplete reads it.
func TestCompareAndSummaryRefuseIncompleteRuns(t *testing.T) {
	run := func(manifest string) string {
		dir := t.TempDir()
		kt := "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n" +
			"\"KERNEL_DISPATCH\",\"Agent 1\",1,0,77,1,3,\"gemm\",5,1000,3000\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, "77_kernel_trace.csv"), []byte(kt), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "run.json"), []byte(manifest), 0o644))
		return dir
	}
	files := `"files":[{"path":"77_kernel_trace.csv","format":"csv"}]`
	base := run(`{"exit_status":0,` + files + `}`)
	next := run(`{"exit_status":124,"timed_out":true,` + files + `}`)

	r := runCLI(t, nil, "compare", base, next)
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stderr, "rocprof-go: error: run "+next+" is incomplete: it timed out")
	require.Empty(t, r.stdout)
	r = runCLI(t, nil, "compare", "--allow-incomplete", base, next)
	require.Equal(t, 0, r.code, r.stderr)

	r = runCLI(t, nil, "summary", "-i", next)
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stderr, "run "+next+" is incomplete: it timed out")
	r = runCLI(t, nil, "summary", "--allow-incomplete", "-i", next)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "gemm")
}
