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
	x.Add(1, 11, 12, "deep") // nothing strictly inside (ids are unique): never found
	x.Add(2, 4, 6, "other thread")
	for corr, want := range map[uint64]string{
		2: "outer", 4: "inner", 7: "inner", 9: "outer", 13: "sibling", 14: "sibling",
		16: "outer", 19: "outer",
	} {
		got, ok := x.Find(1, corr)
		require.True(t, ok, "corr %d", corr)
		require.Equal(t, want, got, "corr %d", corr)
	}
	for _, corr := range []uint64{1, 21, 100} {
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

// TestMarksNameLikeRocprofv3 follows rocprofv3's kernel-rename stack: a mark
// pushes its message for good, a pop pops whatever is on top (a mark too).
func TestMarksNameLikeRocprofv3(t *testing.T) {
	x := New()
	x.AddMark(1, 2, "first")       // stack: first
	x.Add(1, 4, 10, "range")       // push at 4: first range; pop at 10: first
	x.AddMark(1, 12, "second")     // first second
	x.Add(1, 14, 20, "outer")      // first second outer ... pop at 20
	x.AddMark(1, 16, "inner mark") // first second outer "inner mark"; the pop at 20 pops the mark
	for corr, want := range map[uint64]string{
		3: "first", 5: "range", 11: "first", 13: "second", 15: "outer", 17: "inner mark",
		21: "outer", 100: "outer",
	} {
		got, ok := x.Find(1, corr)
		require.True(t, ok, "corr %d", corr)
		require.Equal(t, want, got, "corr %d", corr)
	}
	_, ok := x.Find(1, 1)
	require.False(t, ok, "before the first mark")
}
