package tracing_test

import (
	"bytes"
	"encoding/binary"
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

// A record whose bytes read as zeros between the reader's checks and its
// decoding (its page cut off by a truncation after Next checked it, and
// zero-filled by the fault guard when decoded) is decoded by the format
// Next checked, not the one read again: before, a compact HIP record
// (32 bytes) read as the full format (48 and more) and the decoder panicked
// with "index out of range [7] with length 0" (seen under
// TestRunReturnsASpoolCutShortWhileRead, in output.Write's scan).
func TestRecordZeroedAfterNextDecodesSafely(t *testing.T) {
	rec := make([]byte, tracing.APICompactSize)
	binary.LittleEndian.PutUint32(rec[0:], uint32(len(rec)))
	binary.LittleEndian.PutUint16(rec[4:], uint16(tracing.KindHIPAPI))
	rec[6] = 2    // compact, ns stamps
	rec[7] = 0xC5 // committed
	binary.LittleEndian.PutUint16(rec[8:], 3)
	rec[10] = byte(tracing.DomainHIPRuntime)
	binary.LittleEndian.PutUint32(rec[12:], 250)
	binary.LittleEndian.PutUint64(rec[16:], 18)
	binary.LittleEndian.PutUint64(rec[24:], 7000)
	b := spooltest.New(testProcess)
	b.AddRaw(rec)
	data := b.Bytes()
	r, err := tracing.NewReader(data)
	require.NoError(t, err)
	require.True(t, r.Next())
	at := bytes.Index(data[tracing.ChunkSize:], rec) + tracing.ChunkSize
	require.Greater(t, at, tracing.ChunkSize)
	clear(data[at : at+len(rec)]) // what the guard's zero pages read as
	var c tracing.APICall
	require.NotPanics(t, func() { c = r.APICall() })
	require.Zero(t, c.CorrelationID)
	require.Empty(t, c.Args)
}
