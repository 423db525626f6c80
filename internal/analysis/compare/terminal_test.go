package compare

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis"
)

// The text report printed to the terminal shows a name's control
// characters escaped; the report itself keeps them (issue 31).
func TestReportForTerminalEscapesNames(t *testing.T) {
	name := "k\x1b]0;owned\x07\x1b[2J"
	r := &Report{Base: []string{"a"}, New: []string{"b"}, Metric: Median, Alpha: 0.05,
		Rows:     []Row{{Domain: analysis.Kernel, Name: name, Status: New, Note: "only in \x1b[1mnew"}},
		Warnings: []string{"run \x1b[5m"}}
	var b bytes.Buffer
	require.NoError(t, Write(&b, r.ForTerminal(), "text"))
	require.Contains(t, b.String(), `k\x1b]0;owned\x07\x1b[2J`)
	require.NotContains(t, b.String(), "\x1b")
	require.NotContains(t, b.String(), "\x07")
	require.Equal(t, name, r.Rows[0].Name)
}
