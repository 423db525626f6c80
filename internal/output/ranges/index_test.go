package ranges

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFindInnermost(t *testing.T) {
	x := New()
	// Thread 1: outer [1, 20] { inner [3, 8] { } sibling [10, 15] { deep [11, 12] } }
	x.Add(1, 1, 20, "outer")
	x.Add(1, 10, 15, "sibling")
	x.Add(1, 3, 8, "inner")
	x.Add(1, 11, 12, "deep") // nothing strictly inside: never found
	x.Add(2, 4, 6, "other thread")
	for corr, want := range map[uint64]string{
		2: "outer", 4: "inner", 7: "inner", 8: "outer", 9: "outer", 11: "sibling",
		12: "sibling", 14: "sibling", 16: "outer", 19: "outer",
	} {
		got, ok := x.Find(1, corr)
		require.True(t, ok, "corr %d", corr)
		require.Equal(t, want, got, "corr %d", corr)
	}
	for _, corr := range []uint64{1, 20, 21, 100} {
		_, ok := x.Find(1, corr)
		require.False(t, ok, "corr %d is outside every range", corr)
	}
	got, ok := x.Find(2, 5)
	require.True(t, ok)
	require.Equal(t, "other thread", got)
	_, ok = x.Find(3, 5)
	require.False(t, ok)

	// Adding after a Find re-sorts.
	x.Add(1, 4, 6, "innermost")
	got, _ = x.Find(1, 5)
	require.Equal(t, "innermost", got)
	x.Add(1, 30, 30, "bad") // pop not after push: ignored
	_, ok = x.Find(1, 30)
	require.False(t, ok)
}
