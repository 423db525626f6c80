package summary_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis"
	"github.com/rocprof-go/rocprof-go/internal/analysis/summary"
)

// incompleteRun writes a CSV run whose run.json says how it ended.
func incompleteRun(t *testing.T, ending string) string {
	dir := t.TempDir()
	kt := "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n" +
		"\"KERNEL_DISPATCH\",\"Agent 1\",1,0,77,1,3,\"gemm\",5,1000,3000\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "77_kernel_trace.csv"), []byte(kt), 0o644))
	manifest := `{"version":"x","exit_status":0,` + ending + `"files":[{"path":"77_kernel_trace.csv","format":"csv","domain":"KERNEL_DISPATCH","records":1}]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run.json"), []byte(manifest), 0o644))
	return dir
}

// summary refuses a run whose run.json says it timed out, crashed or lost
// records, naming the run and why, unless AllowIncomplete (issue 31).
func TestSummaryRefusesIncompleteRuns(t *testing.T) {
	cases := map[string]string{
		`"timed_out":true,"exit_status":124,`:        "it timed out",
		`"exit_status":134,`:                         "killed by signal 6 (exit status 134)",
		`"lost_records":[{"pid":1,"dropped":5}],`:    "records of 1 process(es) were lost",
		`"skipped_spools":["/x/1.spool: torn"],`:     "1 spool(s) could not be read",
		`"passes":[{"dir":"p","exit_status":139}],`:  "killed by signal 11",
		`"concurrent_runs":[{"timed_out":true}],`:    "it timed out",
		`"lost_domains":[{"pid":1,"domain":"HIP"}],`: "1 requested domain(s) were not collected",
	}
	for ending, why := range cases {
		dir := incompleteRun(t, ending)
		_, err := summary.Build([]string{dir}, summary.Options{})
		var ie *analysis.IncompleteError
		require.ErrorAs(t, err, &ie, ending)
		require.ErrorContains(t, err, "run "+dir+" is incomplete: ")
		require.ErrorContains(t, err, why)
		require.ErrorContains(t, err, "--allow-incomplete")
		s, err := summary.Build([]string{dir}, summary.Options{AllowIncomplete: true})
		require.NoError(t, err)
		require.Len(t, s.TopKernels, 1)
	}
	// A complete run (and an app's own non-zero exit) is read.
	for _, ending := range []string{"", `"exit_status":3,`} {
		_, err := summary.Build([]string{incompleteRun(t, ending)}, summary.Options{})
		require.NoError(t, err)
	}
}
