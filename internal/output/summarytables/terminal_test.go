package summarytables

import (
	"bytes"
	"encoding"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// A ROCTx message holding escape sequences (clear the screen, set the
// window title, a newline, C1 CSI, a right-to-left override) is printed
// escaped on the terminal and kept as it is (valid UTF-8) in a file
// (issue 31).
func TestSummaryEscapesControlsOnTheTerminal(t *testing.T) {
	const msg = "step\x1b[2J\x1b]0;pwned\x07\nnext\u009b31m\u202eevil"
	b := spooltest.New(outputtest.Info(500))
	outputtest.Emit(500, 4, func(r encoding.BinaryAppender) { b.Add(r) })
	b.Add(tracing.Marker{Domain: tracing.DomainMarkerCoreRange, Function: tracing.MarkerMark, TID: 500,
		CorrelationID: 77, Start: 500_000_100, End: 500_000_100, Message: []byte(msg)})
	p, err := b.WriteFile(t.TempDir())
	require.NoError(t, err)
	in := &model.Input{Spools: []string{p}, Config: model.Config{Summary: true}}

	var term bytes.Buffer
	require.NoError(t, Write(&term, in, true))
	out := term.String()
	require.Contains(t, out, `step\x1b[2J\x1b]0;pwned\x07\x0anext\u009b31m\u202eevil`)
	for _, c := range []string{"\x1b", "\x07", "\u009b", "\u202e", "\nnext"} {
		require.NotContains(t, out, c)
	}

	var file bytes.Buffer
	require.NoError(t, Write(&file, in, false))
	require.Contains(t, file.String(), msg)

	require.Equal(t, "plain ✓", model.TerminalString("plain ✓"))
	require.Equal(t, `a\x09b\x7f`+"\uFFFD", model.TerminalString("a\tb\x7f\xff"))
}
