package compare

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func csvRun(t *testing.T, manifest string) string {
	dir := t.TempDir()
	kt := "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n" +
		"\"KERNEL_DISPATCH\",\"Agent 1\",1,0,77,1,3,\"gemm\",5,1000,3000\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "77_kernel_trace.csv"), []byte(kt), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run.json"), []byte(manifest), 0o644))
	return dir
}

// A run whose run.json says it timed out fails the comparison, whatever
// its numbers, unless AllowIncomplete; the report names the run and why
// (issue 31: a CI gate passed on a run that had timed out).
func TestIncompleteRunFailsTheComparison(t *testing.T) {
	files := `"files":[{"path":"77_kernel_trace.csv","format":"csv"}]`
	base := csvRun(t, `{"exit_status":0,`+files+`}`)
	next := csvRun(t, `{"exit_status":124,"timed_out":true,`+files+`}`)
	load := func(p string) *Run {
		r, err := Load(p)
		require.NoError(t, err)
		return r
	}
	rep := Compare([]*Run{load(base)}, []*Run{load(next)}, Options{Alpha: DefaultAlpha})
	require.True(t, rep.Failed)
	require.Zero(t, rep.Regressions)
	require.Len(t, rep.Incomplete, 1)
	require.Contains(t, rep.Incomplete[0], "run "+next+" is incomplete: it timed out")
	rep = Compare([]*Run{load(base)}, []*Run{load(next)}, Options{Alpha: DefaultAlpha, AllowIncomplete: true})
	require.False(t, rep.Failed)
	require.Empty(t, rep.Incomplete)
}
