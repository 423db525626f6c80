package tracing_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// TestMarkAndSeek: a record noted with Mark decodes the same after a Seek
// from anywhere (its chunk's writer and clock come back with it), and Next
// after a Seek continues with the record that follows it in spool order.
func TestMarkAndSeek(t *testing.T) {
	const half = 1 << 31 // 0.5 ns per tick
	b := spooltest.New(testProcess)
	b.AddRaw(clockRec(1_000_000, 5_000_000_000, half))
	b.AddRaw(tickCall(1, 1, 1_000_400, 100)) // thread 1, first clock
	b.AddRaw(threadRec(42))
	b.AddRaw(clockRec(2_000_000, 7_000_000_000, 3<<31))
	b.AddRaw(tickCall(2, 2, 2_000_010, 4)) // thread 42, second clock
	b.NewChunk()
	b.AddRaw(compactAPI(tracing.KindHIPAPI, 1, 7, 3, 100, 5, nil)) // thread 1 (header), no clock
	r, err := tracing.NewReader(b.Bytes())
	require.NoError(t, err)
	var m tracing.Marks
	var pos []tracing.Pos
	var want []tracing.APICall
	for r.Next() {
		pos = append(pos, m.Mark(r))
		want = append(want, r.APICall())
	}
	require.Len(t, want, 3)
	require.Equal(t, uint32(42), want[1].TID)
	for _, i := range []int{2, 0, 1, 2, 1, 0} {
		m.Seek(r, pos[i])
		require.Equal(t, want[i], r.APICall(), "record %d", i)
	}
	m.Seek(r, pos[0])
	require.True(t, r.Next())
	require.Equal(t, want[1], r.APICall(), "Next continues after the sought record")
	require.True(t, r.Next())
	require.Equal(t, want[2], r.APICall())
	require.False(t, r.Next())
}
