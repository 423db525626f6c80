package imbalance

import (
	"bytes"
	"context"
	"encoding/csv"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/jobgen"
	"github.com/rocprof-go/rocprof-go/internal/duckdb"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// expected computes the table of a synthetic job from its formula.
func expected(j jobgen.Job) []Row {
	type key struct{ k, s int }
	perRank := map[key][]int64{}
	calls := map[key]int64{}
	for r := range j.Ranks {
		sums := map[key]int64{}
		for i := range j.Dispatches {
			k, s := j.Shape(i)
			sums[key{k, s}] += int64(j.Duration(r, i))
			calls[key{k, s}]++
		}
		for kk, v := range sums {
			perRank[kk] = append(perRank[kk], v)
		}
	}
	var rows []Row
	for kk, sums := range perRank {
		// ranks run in order, so sums[r] is rank r's
		r := Row{Kernel: jobgen.KernelName(kk.k), Grid: jobgen.Grid(kk.s), Workgroup: jobgen.Workgroup(kk.s),
			Calls: calls[kk], Ranks: int64(len(sums))}
		sorted := slices.Clone(sums)
		slices.Sort(sorted)
		for _, v := range sums {
			r.TotalNs += v
		}
		r.MinNs, r.MaxNs = sorted[0], sorted[len(sorted)-1]
		n := len(sorted)
		if n%2 == 1 {
			r.MedianNs = float64(sorted[n/2])
		} else {
			r.MedianNs = float64(sorted[n/2-1]+sorted[n/2]) / 2
		}
		r.Slowest = int64(slices.Index(sums, r.MaxNs))
		r.SlowHost = j.Host(int(r.Slowest))
		r.Ratio = float64(r.MaxNs) / r.MedianNs
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b Row) int {
		if a.TotalNs != b.TotalNs {
			return int(b.TotalNs - a.TotalNs)
		}
		if a.Kernel != b.Kernel {
			if a.Kernel < b.Kernel {
				return -1
			}
			return 1
		}
		return int(a.Grid[0]) - int(b.Grid[0])
	})
	return rows
}

// The imbalance table of an 8-rank job on two hosts, from its
// hive-partitioned Parquet files through the DuckDB engine, equals the
// formula's: rank 5's kernel_000 takes 5 µs longer per dispatch.
func TestImbalanceTableOfAnEightRankJob(t *testing.T) {
	t.Setenv(duckdb.EnvVar, testsys.Artifact(t, duckdb.Name))
	dir := t.TempDir()
	j := jobgen.Job{Ranks: 8, Dispatches: 60, Kernels: 3, RanksPerHost: 4, SlowRank: 5, SlowNs: 5000, Parquet: true}
	require.NoError(t, jobgen.Write(dir, j))
	require.FileExists(t, dir+"/domain=kernels/rank=5/host=node1/node1-10005.parquet")

	tbl, err := Build(context.Background(), dir, duckdb.Options{})
	require.NoError(t, err)
	require.EqualValues(t, 8, tbl.Ranks)
	want := expected(j)
	require.Len(t, want, 6)
	require.Equal(t, want, tbl.Rows)

	// kernel_000 in its first shape, written out: on each rank 10
	// dispatches of 1,000 ns plus 3 ns per (rank mod 7), and 5,000 ns more
	// on rank 5 (which slows both shapes of kernel_000: the other one is
	// first, at 500 ns more per dispatch).
	require.Equal(t, "kernel_000", tbl.Rows[0].Kernel)
	require.Equal(t, [3]uint32{8192, 1, 1}, tbl.Rows[0].Grid)
	i := slices.IndexFunc(tbl.Rows, func(r Row) bool { return r.Kernel == "kernel_000" && r.Grid[0] == 4096 })
	top := tbl.Rows[i]
	require.EqualValues(t, 80, top.Calls)
	require.EqualValues(t, 8, top.Ranks)
	require.EqualValues(t, 10*(8*1000+3*(0+1+2+3+4+5+6+0))+50_000, top.TotalNs)
	require.EqualValues(t, 10_000, top.MinNs)           // ranks 0 and 7
	require.Equal(t, (10_060+10_090)/2.0, top.MedianNs) // ranks 2 and 3
	require.EqualValues(t, 10_150+50_000, top.MaxNs)    // rank 5
	require.EqualValues(t, 5, top.Slowest)
	require.Equal(t, "node1", top.SlowHost)
	require.InDelta(t, 60_150/10_075.0, top.Ratio, 1e-12)

	var buf bytes.Buffer
	require.NoError(t, Write(&buf, tbl, "csv"))
	recs, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Equal(t, CSVHeader, recs[0])
	require.Len(t, recs, 7)
	require.Equal(t, []string{"kernel_000", "4096", "1", "1", "64", "1", "1", "80", "8", strconv.FormatInt(top.TotalNs, 10),
		"10000", "10075", "60150", "5", "node1", "5.9702"}, recs[1+i])
}

// The layout rocprof-go wrote before host= partitions (rank=<n>/ alone)
// reads too, without the slowest host; a directory without the table is
// an error naming the options that write it.
func TestImbalanceLayouts(t *testing.T) {
	_, _, err := Layout(t.TempDir())
	require.ErrorContains(t, err, "--parquet-hive")
	require.Contains(t, Query("x", false), "NULL AS slowest_host")
	require.Contains(t, Query("x", true), "first(host ORDER BY rank_ns DESC, rank) AS slowest_host")
}
