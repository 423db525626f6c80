package rocpdread_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdtest"
)

// mergeRanks is how many ranks TestMergeHasNoRankLimit merges:
// ROCPROF_MERGE_RANKS changes it (2000 measured in docs/analysis.md).
func mergeRanks(t *testing.T) int {
	if v := os.Getenv("ROCPROF_MERGE_RANKS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err)
		return n
	}
	return 600
}

// Issue 33: merge stopped at 500 ranks ("too many terms in compound
// SELECT": each plain view was one UNION ALL over every rank's table), and
// merging merged files hit the same wall. Beyond SQLite's limit the views
// unite part views.
func TestMergeHasNoRankLimit(t *testing.T) {
	n := mergeRanks(t)
	start := time.Now()
	inputs := writeRanks(t, n)
	wrote := time.Since(start)
	one := counts(t, inputs[0])

	start = time.Now()
	out := filepath.Join(t.TempDir(), "all.db")
	res, err := rocpdread.Merge(context.Background(), out, inputs)
	require.NoError(t, err)
	merged := time.Since(start)
	require.Equal(t, n, res.Images)
	got := counts(t, out)
	for base, c := range one {
		// Every sample rank has as many rows of each table.
		require.Equal(t, c*int64(n), got[base], base)
	}
	db, err := rocpdread.Open(out)
	require.NoError(t, err)
	require.Len(t, db.Images, n)
	var calls int64
	require.NoError(t, db.SQL.QueryRow(`SELECT total_calls FROM top_kernels WHERE name = 'gemm(float*, float*, float*)'`).Scan(&calls))
	require.EqualValues(t, 10*n, calls, "the carried-over data view sees every rank")
	require.NoError(t, db.Close())

	// A merged file of more than 500 images merges again.
	extra := filepath.Join(t.TempDir(), "extra.db")
	require.NoError(t, rocpdtest.Write(extra, rocpdtest.Sample(n)))
	again := filepath.Join(t.TempDir(), "again.db")
	res, err = rocpdread.Merge(context.Background(), again, []string{out, extra})
	require.NoError(t, err)
	require.Equal(t, n+1, res.Images)
	for base, c := range counts(t, again) {
		require.Equal(t, got[base]+one[base], c, base)
	}
	t.Logf("%d ranks: wrote the inputs in %s, merged them in %s", n, wrote.Round(time.Millisecond), merged.Round(time.Millisecond))
}
