package summary_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis"
	"github.com/rocprof-go/rocprof-go/internal/analysis/summary"
)

// A CSV run whose markers hold JSON, escape sequences and bytes that are
// not UTF-8 (issue 31): the JSON message is one marker of 500 ns; on the
// terminal (ForTerminal) control characters print escaped, in a file the
// text is kept, repaired to valid UTF-8.
func TestSummaryOfHostileMarkerNames(t *testing.T) {
	dir := t.TempDir()
	markers := "\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n" +
		"\"MARKER_CORE_RANGE_API\",\"{\"phase\":\"fwd\",\"layer\":3}\",77,77,1,1000,1500\n" +
		"\"MARKER_CORE_RANGE_API\",\"red\x1b[31m\x1b]0;title\x07\",77,77,2,2000,2100\n" +
		"\"MARKER_CORE_RANGE_API\",\"bad\xff\",77,77,3,3000,3010\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "77_marker_api_trace.csv"), []byte(markers), 0o644))
	s, err := summary.Build([]string{dir}, summary.Options{})
	require.NoError(t, err)
	row := find(t, s.Total, analysis.Marker, `{"phase":"fwd","layer":3}`)
	require.Equal(t, int64(1), row.Calls)
	require.Equal(t, int64(500), row.TotalNs)
	find(t, s.Total, analysis.Marker, "bad\uFFFD")

	var file, term bytes.Buffer
	require.NoError(t, summary.WriteUnits(&file, s, "text", "nsec"))
	require.Contains(t, file.String(), "red\x1b[31m\x1b]0;title\x07")
	require.NoError(t, summary.WriteUnits(&term, s.ForTerminal(), "text", "nsec"))
	require.Contains(t, term.String(), `red\x1b[31m\x1b]0;title\x07`)
	require.NotContains(t, term.String(), "\x1b")
	require.NotContains(t, term.String(), "\x07")
	// ForTerminal copies: the summary itself keeps its names.
	find(t, s.Total, analysis.Marker, "red\x1b[31m\x1b]0;title\x07")
}

// counter_collection.csv as rocprofv3 writes it: a kernel name's quotes are
// not escaped (encoding/csv rejected the file).
func TestCounterCSVWithQuotedKernelName(t *testing.T) {
	dir := t.TempDir()
	kt := "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n" +
		"\"KERNEL_DISPATCH\",\"Agent 1\",1,0,77,1,3,\"k<\"a\",1>(int)\",5,1000,3000\n"
	cc := "\"Correlation_Id\",\"Dispatch_Id\",\"Agent_Id\",\"Queue_Id\",\"Process_Id\",\"Thread_Id\",\"Grid_Size\",\"Kernel_Id\",\"Kernel_Name\",\"Workgroup_Size\",\"LDS_Block_Size\",\"Scratch_Size\",\"VGPR_Count\",\"Accum_VGPR_Count\",\"SGPR_Count\",\"Counter_Name\",\"Counter_Value\",\"Start_Timestamp\",\"End_Timestamp\"\n" +
		"5,1,\"Agent 1\",1,77,77,64,3,\"k<\"a\",1>(int)\",64,0,0,8,0,16,\"SQ_WAVES\",4.000000,1000,3000\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "77_kernel_trace.csv"), []byte(kt), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "77_counter_collection.csv"), []byte(cc), 0o644))
	s, err := summary.Build([]string{dir}, summary.Options{})
	require.NoError(t, err)
	require.Equal(t, []summary.CounterRow{{Kernel: `k<"a",1>(int)`, Counter: "SQ_WAVES", Dispatches: 1, Total: 4, Average: 4, Min: 4, Max: 4}}, s.Counters)
}
