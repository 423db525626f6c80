package analysis

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// rocprofv3 (and rocprof-go, which prints as it does) writes string cells in
// quotes without escaping the quotes inside: a ROCTx message holding JSON
// is one cell whatever its quotes and commas (issue 31: it was read as a
// 20-minute range named `{"phase":"fwd`).
func TestCSVMarkerMessagesWithQuotesCommasAndNewlines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "100_marker_api_trace.csv")
	rows := `"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp","End_Timestamp"
"MARKER_CORE_RANGE_API","{"phase":"fwd","layer":3}",100,100,1,1000,1500
"MARKER_CORE_RANGE_API","plain",100,100,2,2000,2100
"MARKER_CORE_RANGE_API","a","b",100,100,3,3000,3300
"MARKER_CORE_RANGE_API","say "hi"",100,100,4,4000,4400
"MARKER_CORE_RANGE_API","two
lines, "quoted"",100,100,5,5000,5500
"MARKER_CORE_RANGE_API","",100,100,6,6000,6600
"MARKER_CORE_RANGE_API","end",100,100,7,7000,7700
`
	require.NoError(t, os.WriteFile(path, []byte(rows), 0o644))
	type got struct {
		name       string
		start, end int64
	}
	var events []got
	require.NoError(t, ScanCSVFile(path, "", func(e *Event) error {
		events = append(events, got{e.Name, e.Start, e.End})
		return nil
	}))
	require.Equal(t, []got{
		{`{"phase":"fwd","layer":3}`, 1000, 1500},
		{"plain", 2000, 2100},
		{`a","b`, 3000, 3300},
		{`say "hi"`, 4000, 4400},
		{"two\nlines, \"quoted\"", 5000, 5500},
		{"", 6000, 6600},
		{"end", 7000, 7700},
	}, events)
}

// A kernel trace's name column sits between numbers on both sides.
func TestCSVKernelNameWithQuotes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "100_kernel_trace.csv")
	rows := `"Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id","Kernel_Name","Correlation_Id","Start_Timestamp","End_Timestamp","LDS_Block_Size","Scratch_Size","VGPR_Count","Accum_VGPR_Count","SGPR_Count","Workgroup_Size_X","Workgroup_Size_Y","Workgroup_Size_Z","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"
"KERNEL_DISPATCH","Agent 1",1,0,100,1,1,"k<"x",1>(int, char const*)",1,1000,2000,0,0,8,0,16,64,1,1,64,1,1
`
	require.NoError(t, os.WriteFile(path, []byte(rows), 0o644))
	var names []string
	require.NoError(t, ScanCSVFile(path, "", func(e *Event) error {
		names = append(names, e.Name)
		require.Equal(t, int64(1000), e.Start)
		require.Equal(t, int64(2000), e.End)
		require.Equal(t, [3]int64{64, 1, 1}, e.Launch.Grid)
		return nil
	}))
	require.Equal(t, []string{`k<"x",1>(int, char const*)`}, names)
}
