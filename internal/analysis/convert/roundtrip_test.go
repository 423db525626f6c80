package convert_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/convert"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdtest"
	"github.com/rocprof-go/rocprof-go/internal/analysis/summary"
	"github.com/rocprof-go/rocprof-go/internal/output"
	rocpdout "github.com/rocprof-go/rocprof-go/internal/output/rocpd"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// csvFiles writes the CSV files of the spools in dir and returns them by
// name (agent_info.csv left out: the database keeps only a few agent fields).
func csvFiles(t *testing.T, spools, out string) map[string]string {
	t.Helper()
	_, err := output.Write(output.Config{Dir: out, PrefixTemplate: "run", Formats: []output.Format{output.FormatCSV}}, spools)
	require.NoError(t, err)
	return readCSVs(t, out)
}

func readCSVs(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".csv") || strings.HasSuffix(e.Name(), "agent_info.csv") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		files[e.Name()] = string(b)
	}
	return files
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The done-when: converting the run's database gives the same CSV
// rows and columns as writing CSV during the run — through the record
// stream (database → spool → CSV writer) and through convert's own CSV.
func TestConvertGivesTheRunsCSV(t *testing.T) {
	run := t.TempDir()
	_, err := rocpdtest.RunSpool(run, 4242, 24)
	require.NoError(t, err)
	_, err = rocpdtest.RunSpool(run, 4243, 9)
	require.NoError(t, err)
	duringRun := csvFiles(t, run, t.TempDir())
	require.Equal(t, []string{"run_counter_collection.csv", "run_hip_api_trace.csv", "run_hsa_api_trace.csv",
		"run_kernel_trace.csv", "run_marker_api_trace.csv", "run_memory_allocation_trace.csv",
		"run_memory_copy_trace.csv", "run_scratch_memory_trace.csv"}, keys(duringRun))

	// The run's database, one per process as rocprofv3's default layout.
	spools, err := tracing.List(run)
	require.NoError(t, err)
	var dbs []*rocpdread.DB
	for i, s := range spools {
		path := filepath.Join(t.TempDir(), "results.db")
		require.NoError(t, rocpdout.Write(path, &output.Input{Spools: []string{s}}), i)
		db, err := rocpdread.Open(path)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		dbs = append(dbs, db)
	}

	back := t.TempDir()
	paths, err := convert.Spools(back, dbs)
	require.NoError(t, err)
	require.Len(t, paths, 2)
	viaStream := csvFiles(t, back, t.TempDir())
	for _, name := range keys(duringRun) {
		require.Equal(t, duringRun[name], viaStream[name], name)
	}
	require.Equal(t, keys(duringRun), keys(viaStream))

	// The same through Run, which CLI convert calls.
	out := t.TempDir()
	_, err = convert.Run(dbs, convert.Options{Formats: csvOnly, Dir: out, Prefix: "run"})
	require.NoError(t, err)
	viaRun := readCSVs(t, out)
	require.Equal(t, duringRun, viaRun)
}

// A database converted to a database summarises like the original, and the
// other formats are written.
func TestConvertToOtherFormats(t *testing.T) {
	dbs := openSample(t, 0, 1)
	dir := t.TempDir()
	res, err := convert.Run(dbs, convert.Options{Formats: []output.Format{output.FormatROCpd, output.FormatJSON,
		output.FormatPerfetto}, Dir: dir, Prefix: "conv"})
	require.NoError(t, err)
	require.Equal(t, 2, res.Spools)
	require.Equal(t, []string{filepath.Join(dir, "conv_results.db"), filepath.Join(dir, "conv_results.json"),
		filepath.Join(dir, "conv_results.pftrace")}, res.Paths)
	for _, p := range res.Paths {
		st, err := os.Stat(p)
		require.NoError(t, err)
		require.Positive(t, st.Size())
	}
	before, err := summary.Build([]string{dbs[0].Path, dbs[1].Path}, summary.Options{})
	require.NoError(t, err)
	after, err := summary.Build([]string{res.Paths[0]}, summary.Options{})
	require.NoError(t, err)
	round(&before.Total)
	round(&after.Total)
	require.Equal(t, before.Total.Tables, after.Total.Tables)
}

// Hive-partitioned Parquet puts each rank's tables in its own partition,
// the layout docs/analysis.md's DuckDB query reads.
func TestConvertHiveParquet(t *testing.T) {
	dbs := openSample(t, 0, 1)
	dir := t.TempDir()
	res, err := convert.Run(dbs, convert.Options{Formats: []output.Format{output.FormatParquet}, Dir: dir,
		Prefix: "run", ParquetHive: true})
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "domain=*/rank=0/host=node0"), filepath.Join(dir, "domain=*/rank=1/host=node0")}, res.Paths)
	for r, pid := range []int{1000, 1001} {
		for table, rows := range map[string]int64{"kernels": 17, "hip_api": 21, "marker_api": 2, "memory_copy": 2} {
			path := filepath.Join(dir, "domain="+table, fmt.Sprintf("rank=%d", r), "host=node0", fmt.Sprintf("run-%d.parquet", pid))
			f, err := file.OpenParquetFile(path, false)
			require.NoError(t, err, path)
			require.Equal(t, rows, f.NumRows(), path)
			require.NoError(t, f.Close())
		}
	}
}
