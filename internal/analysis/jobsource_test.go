package analysis

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/jobdir"
)

// A directory a job's ranks wrote into is one run: every rank's files
// (run.json is only the last rank's). A run that was no rank, written
// there after the job, is that run alone.
func TestResolveTakesTheJobOfTheLastRank(t *testing.T) {
	dir := t.TempDir()
	write := func(path, body string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	}
	for _, r := range []string{"0", "1"} {
		write(jobdir.Path(dir, "J", r), `{"rank":{"job":"J","rank":"`+r+`"},"files":[{"path":"r`+r+`.db","format":"rocpd"}]}`)
	}
	write(filepath.Join(dir, "run.json"), `{"rank":{"job":"J","rank":"1"},"files":[{"path":"r1.db","format":"rocpd"}]}`)
	src, err := Resolve(dir)
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "r0.db"), filepath.Join(dir, "r1.db")}, src.Databases)

	write(filepath.Join(dir, "run.json"), `{"files":[{"path":"solo.db","format":"rocpd"}]}`)
	src, err = Resolve(dir)
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "solo.db")}, src.Databases)
}

// A job whose ranks are fewer than its size is not the whole job: the
// missing ranks are named among the run's problems, and summary and
// compare refuse it unless --allow-incomplete (CheckComplete). Before,
// a 2-rank job with one manifest read as complete.
func TestResolveNamesAJobsMissingRanks(t *testing.T) {
	dir := t.TempDir()
	write := func(path, body string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	}
	rank := func(r, size string) string {
		return `{"rank":{"job":"J","rank":"` + r + `","size":"` + size + `","shared_directory":true},"files":[{"path":"r` + r + `.db","format":"rocpd"}]}`
	}
	write(jobdir.Path(dir, "J", "0"), rank("0", "4"))
	write(jobdir.Path(dir, "J", "2"), rank("2", "4"))
	write(filepath.Join(dir, "run.json"), rank("2", "4"))
	src, err := Resolve(dir)
	require.NoError(t, err)
	require.Equal(t, []string{"2 of the job's 4 ranks left no manifest (rank 1, 3): their rocprof-go was killed or failed before writing it, or wrote elsewhere"}, src.Problems)
	var inc *IncompleteError
	require.ErrorAs(t, src.CheckComplete(false), &inc)
	require.NoError(t, src.CheckComplete(true))

	// Ranks that each wrote into a directory of their own (-d 'prof/%rank%'):
	// none is missing here.
	own := t.TempDir()
	write(jobdir.Path(own, "J", "0"), `{"rank":{"job":"J","rank":"0","size":"4","shared_directory":false},"files":[{"path":"r0.db","format":"rocpd"}]}`)
	src, err = Resolve(own)
	require.NoError(t, err)
	require.Empty(t, src.Problems)

	write(jobdir.Path(dir, "J", "1"), rank("1", "4"))
	write(jobdir.Path(dir, "J", "3"), rank("3", "4"))
	src, err = Resolve(dir)
	require.NoError(t, err)
	require.Empty(t, src.Problems)
	require.Len(t, src.Databases, 4)
}
