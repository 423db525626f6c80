package tracing_test

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// A spool cut short while read is returned by TornSince to the function
// that read it (only for the spools it names, only when cut after its
// mark), with the chunks lost from the cut on; once returned it is no
// longer listed as unreported.
func TestTornSinceReturnsTheSpoolsCutShort(t *testing.T) {
	b := spooltest.New(testProcess)
	for i := range 20000 {
		b.Add(tracing.KernelDispatch{AgentNode: 1, TID: 11, QueueID: 1, DispatchID: uint64(i + 1), KernelID: 5,
			CorrelationID: uint64(i + 1), Start: uint64(1000 + 10*i), End: uint64(1005 + 10*i)})
	}
	path, err := b.WriteFile(t.TempDir())
	require.NoError(t, err)
	st, err := os.Stat(path)
	require.NoError(t, err)
	chunks := uint64(st.Size() / tracing.ChunkSize)

	mark := tracing.TornMark()
	require.NoError(t, tracing.TornSince(mark, []string{path}))
	r, err := tracing.Open(path)
	require.NoError(t, err)
	for n := 0; r.Next(); n++ {
		if n == 10 {
			require.NoError(t, os.Truncate(path, 2*tracing.ChunkSize))
		}
	}
	var closed *tracing.TornSpoolError
	require.ErrorAs(t, r.Close(), &closed)
	require.Equal(t, chunks-2, closed.LostChunks, "the chunks from the cut to the spool's end")
	require.Contains(t, closed.Error(), "chunks, up to 64 KiB of records each) are lost")
	require.Contains(t, tracing.UnreportedTornSpools(), closed)

	require.NoError(t, tracing.TornSince(mark, []string{path + ".other"}), "another caller's spools")
	require.NoError(t, tracing.TornSince(tracing.TornMark(), []string{path}), "cut before the mark")
	err = tracing.TornSince(mark, []string{path})
	var torn *tracing.TornSpoolError
	require.ErrorAs(t, err, &torn)
	require.Same(t, closed, torn)
	require.True(t, tracing.OnlyTorn(err))
	require.True(t, tracing.OnlyTorn(errors.Join(err, torn)))
	require.False(t, tracing.OnlyTorn(errors.Join(err, os.ErrNotExist)))
	require.False(t, tracing.OnlyTorn(nil))
	require.NotContains(t, tracing.UnreportedTornSpools(), closed)
}
