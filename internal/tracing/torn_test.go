package tracing_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

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
