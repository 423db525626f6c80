package tracing_test

import (
	"encoding/binary"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// TestLostChunks: a chunk the writer handed out that reads back without
// its chunk header (a file system that accepted the writes into the
// mapping and did not keep them) is a lost chunk; one the writer counted
// as abandoned (the file could not grow) is not, and neither are chunks
// reserved past the file's end. A spool of a writer before the count
// (flags 0) counts every empty chunk inside the file.
func TestLostChunks(t *testing.T) {
	b := spooltest.New(testProcess)
	for i := 0; i < 4; i++ {
		b.AddRaw(compactAPI(tracing.KindHIPAPI, 1, 7, uint64(i+1), 100, 5, nil))
		b.NewChunk()
	}
	b.AddRaw(compactAPI(tracing.KindHIPAPI, 1, 7, 5, 100, 5, nil))
	whole := b.Bytes()
	chunks := len(whole) / tracing.ChunkSize
	require.Equal(t, 6, chunks, "header and 5 chunks")

	lost := func(data []byte) uint64 {
		r, err := tracing.NewReader(data)
		require.NoError(t, err)
		return r.LostChunks()
	}
	set64 := func(data []byte, off int, v uint64) { binary.LittleEndian.PutUint64(data[off:], v) }
	set32 := func(data []byte, off int, v uint32) { binary.LittleEndian.PutUint32(data[off:], v) }

	r, err := tracing.NewReader(whole)
	require.NoError(t, err)
	p := r.Process()
	require.Zero(t, p.ChunksAbandoned, "the Go writer writes every chunk it reserves")
	set32(whole, 108, tracing.HeaderCountsAbandoned) // as the recorder writes it
	require.Empty(t, p.StoreError())
	require.Zero(t, lost(whole))

	// Chunks 2 and 4 read back as zeros: lost.
	data := append([]byte(nil), whole...)
	clear(data[2*tracing.ChunkSize : 3*tracing.ChunkSize])
	clear(data[4*tracing.ChunkSize : 5*tracing.ChunkSize])
	require.Equal(t, uint64(2), lost(data))

	// One of them was abandoned by the writer (a segment that failed and
	// grew later): one lost.
	set64(data, 96, 1)
	require.Equal(t, uint64(1), lost(data))

	// Three more reserved past the file's end, all abandoned: they account
	// for three of the four abandoned, one lies inside the file.
	set64(data, 64, uint64(chunks+3))
	set64(data, 96, 4)
	require.Equal(t, uint64(1), lost(data))

	// Without the flag (a writer before the count), abandoned is not
	// known: every empty chunk inside the file counts.
	set32(data, 108, 0)
	require.Equal(t, uint64(2), lost(data))

	// The writer's failure is said with its errno.
	set32(data, 104, uint32(syscall.ENOSPC))
	r, err = tracing.NewReader(data)
	require.NoError(t, err)
	info := r.Process()
	require.Equal(t, "no space left on device (errno 28)", info.StoreError())
}
