package jobdir

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPathsAndNewestJob(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, filepath.Join(dir, Name, Key("j1"), "rank-3.json"), Path(dir, "j1", "3"))
	require.Equal(t, "rank-a_b.json", filepath.Base(Path(dir, "j1", "a/b")))
	require.NotEqual(t, Key("j1"), Key("j2"))
	require.Nil(t, Newest(dir))

	write := func(job, rank string, at time.Time) string {
		p := Path(dir, job, rank)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("{}"), 0o644))
		require.NoError(t, os.Chtimes(p, at, at))
		return p
	}
	now := time.Now()
	old0 := write("old", "0", now.Add(-time.Hour))
	write("old", "1", now.Add(-time.Hour))
	a := write("new", "0", now)
	b := write("new", "1", now.Add(-2*time.Hour))
	require.ElementsMatch(t, []string{a, b}, Newest(dir), "the job written last, all its ranks")
	// A link or FIFO planted among the ranks is not a manifest.
	require.NoError(t, os.Symlink(old0, filepath.Join(filepath.Dir(a), "rank-9.json")))
	require.ElementsMatch(t, []string{a, b}, Newest(dir))
}

func TestOfListsOneJobsRanks(t *testing.T) {
	dir := t.TempDir()
	for _, r := range []string{"0", "1"} {
		p := Path(dir, "j", r)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("{}"), 0o644))
	}
	require.Len(t, Of(dir, "j"), 2)
	require.Nil(t, Of(dir, "other"))
}
