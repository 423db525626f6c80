package spill

import (
	"cmp"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

type pair struct{ key, seq uint64 }

func byKey(a, b pair) int { return cmp.Compare(a.key, b.key) }

// TestSorterMergesRunsStably: values sorted in runs on disk come back as one
// stable sort in memory gives them, and the spill directory is left empty.
func TestSorterMergesRunsStably(t *testing.T) {
	for _, run := range []int{1, 7, 1000, 1 << 20} {
		root := t.TempDir()
		s := NewSorter(&Dir{Root: root}, run, byKey)
		rng := rand.New(rand.NewPCG(1, uint64(run)))
		var want []pair
		for i := range 10_000 {
			v := pair{rng.Uint64N(500), uint64(i)} // many equal keys: stability shows
			want = append(want, v)
			require.NoError(t, s.Add(v))
		}
		require.Equal(t, run < 10_000, s.Spilled(), "run %d", run)
		entries, err := os.ReadDir(root)
		require.NoError(t, err)
		require.Empty(t, entries, "spill files are unlinked as soon as created")
		slices.SortStableFunc(want, byKey)
		var got []pair
		require.NoError(t, s.Each(func(v pair) error { got = append(got, v); return nil }))
		require.Equal(t, want, got, "run %d", run)
	}
}

// TestArrayIsFileBacked: an array keeps its values in a mapped spill file,
// none of which stays in the directory.
func TestArrayIsFileBacked(t *testing.T) {
	root := t.TempDir()
	a, err := NewArray[uint32](&Dir{Root: root}, 1<<20)
	require.NoError(t, err)
	for i := range a.Values {
		a.Values[i] = uint32(i * 3)
	}
	require.Equal(t, uint32(3*12345), a.Values[12345])
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Empty(t, entries)
	require.NoError(t, a.Close())
	require.Nil(t, a.Values)
}

// TestUntrustedRootIsRefused: a root other users may change is named in the
// error, with the fix.
func TestUntrustedRootIsRefused(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.Chmod(root, 0o777))
	_, err := NewArray[uint64](&Dir{Root: root}, 10)
	require.ErrorContains(t, err, "cannot be trusted")
	require.ErrorContains(t, err, "TMPDIR")
}
