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
