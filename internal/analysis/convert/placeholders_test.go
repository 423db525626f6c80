package convert_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/convert"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdtest"
	"github.com/rocprof-go/rocprof-go/internal/output"
)

// Issue 33: `convert -o 'rank%rank%'` wrote one file literally named
// rank%rank%... with every rank in it. The prefix resolves per process of
// the inputs, as in a run: one set of files per rank, of every format.
func TestConvertResolvesPlaceholdersPerRank(t *testing.T) {
	var inputs []string
	for r := 0; r < 3; r++ {
		p := filepath.Join(t.TempDir(), "results.db")
		require.NoError(t, rocpdtest.Write(p, rocpdtest.Sample(r)))
		inputs = append(inputs, p)
	}
	merged := filepath.Join(t.TempDir(), "all.db")
	_, err := rocpdread.Merge(context.Background(), merged, inputs)
	require.NoError(t, err)
	db, err := rocpdread.Open(merged)
	require.NoError(t, err)
	defer db.Close()

	dir := t.TempDir()
	res, err := convert.Run([]*rocpdread.DB{db}, convert.Options{
		Formats: []output.Format{output.FormatCSV, output.FormatJSON, output.FormatPerfetto}, Dir: dir, Prefix: "rank%rank%"})
	require.NoError(t, err)
	var names []string
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		require.NotContains(t, e.Name(), "%", "a placeholder left in a file name")
		if strings.HasSuffix(e.Name(), "_kernel_trace.csv") || !strings.HasSuffix(e.Name(), ".csv") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	require.Equal(t, []string{"rank0_kernel_trace.csv", "rank0_results.json", "rank0_results.pftrace",
		"rank1_kernel_trace.csv", "rank1_results.json", "rank1_results.pftrace",
		"rank2_kernel_trace.csv", "rank2_results.json", "rank2_results.pftrace"}, names)
	require.Len(t, res.Paths, 6)
	// Each rank's files hold that rank alone: 17 dispatches each.
	for r := 0; r < 3; r++ {
		k := lines(t, filepath.Join(dir, "rank"+string(rune('0'+r))+"_kernel_trace.csv"))
		require.Len(t, k, 1+17)
	}
	// Without placeholders, one set holds every input, as before.
	dir = t.TempDir()
	res, err = convert.Run([]*rocpdread.DB{db}, convert.Options{Formats: []output.Format{output.FormatPerfetto}, Dir: dir, Prefix: "all"})
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "all_results.pftrace")}, res.Paths)
}
