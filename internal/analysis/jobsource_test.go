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
