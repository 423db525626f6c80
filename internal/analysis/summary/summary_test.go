package summary_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdtest"
	"github.com/rocprof-go/rocprof-go/internal/analysis/summary"
)

func ranks(t *testing.T, n int) []string {
	t.Helper()
	dir := t.TempDir()
	var out []string
	for r := 0; r < n; r++ {
		p := filepath.Join(dir, fmt.Sprintf("rank%d.db", r))
		require.NoError(t, rocpdtest.Write(p, rocpdtest.Sample(r)))
		out = append(out, p)
	}
	return out
}

func find(t *testing.T, g summary.Group, d analysis.Domain, name string) summary.Row {
	t.Helper()
	for _, tb := range g.Tables {
		if tb.Domain != d {
			continue
		}
		for _, r := range tb.Rows {
			if r.Name == name {
				return r
			}
		}
	}
	t.Fatalf("no %s row %q", d, name)
	return summary.Row{}
}

func TestBuildTwoRanks(t *testing.T) {
	s, err := summary.Build(ranks(t, 2), summary.Options{Top: 2, ByRank: true})
	require.NoError(t, err)

	// gemm: 10 dispatches per rank of 10000 + (i%3)*50 ns, +100 ns on rank 1.
	gemm := find(t, s.Total, analysis.Kernel, "gemm(float*, float*, float*)")
	require.Equal(t, int64(20), gemm.Calls)
	require.Equal(t, int64(100450+101450), gemm.TotalNs)
	require.Equal(t, int64(10000), gemm.MinNs)
	require.Equal(t, int64(10200), gemm.MaxNs)
	require.InDelta(t, 10095.0, gemm.AverageNs, 1e-9)

	require.Len(t, s.TopKernels, 2)
	require.Equal(t, "gemm(float*, float*, float*)", s.TopKernels[0].Name)
	require.Equal(t, "axpy(float, float*)", s.TopKernels[1].Name)

	var domains []analysis.Domain
	for _, tb := range s.Total.Tables {
		domains = append(domains, tb.Domain)
		var pct float64
		for _, r := range tb.Rows {
			pct += r.Percent
		}
		require.InDelta(t, 100, pct, 1e-6, tb.Domain)
	}
	require.Equal(t, []analysis.Domain{analysis.Kernel, analysis.HIP, analysis.HSA, analysis.Marker,
		analysis.Copy, analysis.Allocation}, domains)

	marker := find(t, s.Total, analysis.Marker, "compute phase")
	require.Equal(t, int64(2), marker.Calls)
	require.Equal(t, int64(2), find(t, s.Total, analysis.Marker, "checkpoint").Calls)
	require.Equal(t, int64(2), find(t, s.Total, analysis.Allocation, "MEMORY_ALLOCATION_FREE").Calls)
	require.Equal(t, int64(34+8), find(t, s.Total, analysis.HIP, "hipLaunchKernel").Calls+find(t, s.Total, analysis.HIP, "hipMalloc").Calls)

	require.Len(t, s.ByRank, 2)
	for r, g := range s.ByRank {
		require.Equal(t, r, g.Rank)
		require.Equal(t, fmt.Sprintf("rank %d", r), g.Process)
		require.Equal(t, int64(10), find(t, g, analysis.Kernel, "gemm(float*, float*, float*)").Calls)
	}
	require.Equal(t, int64(100450), find(t, s.ByRank[0], analysis.Kernel, "gemm(float*, float*, float*)").TotalNs)
}

func TestWriteFormats(t *testing.T) {
	s, err := summary.Build(ranks(t, 2), summary.Options{ByRank: true})
	require.NoError(t, err)
	cases := []struct {
		format string
		check  func(t *testing.T, out string)
	}{
		{"text", func(t *testing.T, out string) {
			require.Contains(t, out, "TOP 3 KERNELS:")
			require.Contains(t, out, "KERNEL_DISPATCH SUMMARY:")
			require.Contains(t, out, "RANK 1 (PID 1001@node0): HIP_API SUMMARY:")
			require.Regexp(t, `gemm\(float\*, float\*, float\*\) +\| +20 \| +201900 \|`, out)
		}},
		{"csv", func(t *testing.T, out string) {
			recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			require.NoError(t, err)
			require.Equal(t, "Section", recs[0][0])
			require.Equal(t, []string{"top_kernels", "KERNEL_DISPATCH", "", "", "gemm(float*, float*, float*)", "20", "201900"}, recs[1][:7])
			var byRank int
			for _, r := range recs {
				if r[0] == "by_rank" && r[4] == "gemm(float*, float*, float*)" {
					byRank++
				}
			}
			require.Equal(t, 2, byRank)
		}},
		{"json", func(t *testing.T, out string) {
			var back summary.Summary
			require.NoError(t, json.Unmarshal([]byte(out), &back))
			require.Equal(t, s.TopKernels, back.TopKernels)
			require.Len(t, back.ByRank, 2)
		}},
	}
	for _, c := range cases {
		t.Run(c.format, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, summary.Write(&b, s, c.format))
			c.check(t, b.String())
		})
	}
	require.ErrorContains(t, summary.Write(&bytes.Buffer{}, s, "xml"), "use one of text, csv, json")
}

func TestBuildFromCSVDirectory(t *testing.T) {
	dir := t.TempDir()
	host := filepath.Join(dir, "host")
	require.NoError(t, os.MkdirAll(host, 0o755))
	kt := `"Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id","Kernel_Name","Correlation_Id","Start_Timestamp","End_Timestamp","LDS_Block_Size","Scratch_Size","VGPR_Count","Accum_VGPR_Count","SGPR_Count","Workgroup_Size_X","Workgroup_Size_Y","Workgroup_Size_Z","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"
"KERNEL_DISPATCH","Agent 1",1,0,77,1,3,"void foo<int, 2>(int*)",5,1000,3000,0,0,8,0,16,64,1,1,1024,1,1
"KERNEL_DISPATCH","Agent 1",1,0,77,2,3,"void foo<int, 2>(int*)",6,4000,5000,0,0,8,0,16,64,1,1,1024,1,1
"KERNEL_DISPATCH","Agent 1",1,0,77,3,4,"bar "quoted"",7,6000,6500,0,0,8,0,16,64,1,1,1024,1,1
`
	hip := `"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp","End_Timestamp"
"HIP_RUNTIME_API_EXT","hipLaunchKernel",77,77,5,900,950
"HIP_COMPILER_API_EXT","__hipRegisterFatBinary",77,77,1,10,20
`
	require.NoError(t, os.WriteFile(filepath.Join(host, "77_kernel_trace.csv"), []byte(kt), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(host, "77_hip_api_trace.csv"), []byte(hip), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(host, "77_kernel_stats.csv"), []byte("ignored"), 0o644))

	s, err := summary.Build([]string{dir}, summary.Options{ByRank: true})
	require.NoError(t, err)
	foo := find(t, s.Total, analysis.Kernel, "void foo<int, 2>(int*)")
	require.Equal(t, int64(2), foo.Calls)
	require.Equal(t, int64(3000), foo.TotalNs)
	require.Equal(t, int64(500), find(t, s.Total, analysis.Kernel, `bar "quoted"`).TotalNs)
	require.Equal(t, int64(2), find(t, s.Total, analysis.HIP, "hipLaunchKernel").Calls+
		find(t, s.Total, analysis.HIP, "__hipRegisterFatBinary").Calls)
	// Both files are one process: pid 77 from Process_Id and from the name.
	require.Len(t, s.ByRank, 1)
	require.Equal(t, "pid 77", s.ByRank[0].Process)
}

func TestBuildOnWriterDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.db")
	require.NoError(t, rocpdtest.WriterDB(path, t.TempDir(), 4242, 6))
	s, err := summary.Build([]string{path}, summary.Options{ByRank: true})
	require.NoError(t, err)
	calls := map[analysis.Domain]int64{}
	for _, r := range s.Total.Domains {
		calls[analysis.Domain(r.Name)] = r.Calls
	}
	// 6 iterations: 2 HIP + 1 HSA call, a dispatch and a copy each; every
	// third a range, a mark, an allocation pair and a scratch allocation;
	// one profiler pause.
	require.Equal(t, map[analysis.Domain]int64{analysis.Kernel: 6, analysis.HIP: 12, analysis.HSA: 6,
		analysis.Marker: 5, analysis.Copy: 6, analysis.Allocation: 4, analysis.Scratch: 2}, calls)
	require.Len(t, s.TopKernels, 2)
	require.Equal(t, "void axpy::kernel<float>(float, float*)", s.TopKernels[0].Name)
	require.Equal(t, "gemm(float*, float*, float*)", s.TopKernels[1].Name)
	require.Equal(t, int64(3), s.TopKernels[1].Calls)
	require.Equal(t, int64(2), find(t, s.Total, analysis.Marker, "step").Calls)
	require.Equal(t, int64(1), find(t, s.Total, analysis.Marker, "roctxProfilerPause").Calls)
	require.Len(t, s.ByRank, 1)
	require.Equal(t, "pid 4242@host", s.ByRank[0].Process)
}

func TestTextTitlesPerProcess(t *testing.T) {
	p := rocpdtest.Sample(0)
	p.Env = nil // no rank: listed by pid and host
	p.Hostname = "Node-A"
	path := filepath.Join(t.TempDir(), "r.db")
	require.NoError(t, rocpdtest.Write(path, p))
	s, err := summary.Build([]string{path}, summary.Options{ByRank: true})
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, summary.Write(&b, s, "text"))
	require.Contains(t, b.String(), "\nPID 1000@Node-A: KERNEL_DISPATCH SUMMARY:\n")

	empty := &summary.Summary{Inputs: []string{"a.db"}}
	b.Reset()
	require.NoError(t, summary.Write(&b, empty, "text"))
	require.Equal(t, "no records in a.db\n", b.String())
}

// ROCpd inputs with counters get a counter table: per kernel and counter,
// the dispatches that have it and their values summed over instances
// (the sample gives gemm's first dispatch SQ_WAVES 4x8 and GRBM_COUNT 0.5,
// and axpy's first SQ_WAVES 2x4, in each rank).
func TestCounterTable(t *testing.T) {
	s, err := summary.Build(ranks(t, 2), summary.Options{})
	require.NoError(t, err)
	require.Equal(t, []summary.CounterRow{
		{Kernel: "gemm(float*, float*, float*)", Counter: "GRBM_COUNT", Dispatches: 2, Total: 1, Average: 0.5, Min: 0.5, Max: 0.5},
		{Kernel: "gemm(float*, float*, float*)", Counter: "SQ_WAVES", Dispatches: 2, Total: 64, Average: 32, Min: 32, Max: 32},
		{Kernel: "axpy(float, float*)", Counter: "SQ_WAVES", Dispatches: 2, Total: 16, Average: 8, Min: 8, Max: 8},
	}, s.Counters)

	var b bytes.Buffer
	require.NoError(t, summary.Write(&b, s, "text"))
	require.Contains(t, b.String(), "COUNTER SUMMARY (per dispatch, summed over instances):")
	require.Regexp(t, `gemm\(float\*, float\*, float\*\) +\| SQ_WAVES +\| +2 \| +64 \| +32 \| +32 \| +32\n`, b.String())

	b.Reset()
	require.NoError(t, summary.Write(&b, s, "csv"))
	recs, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	require.NoError(t, err, "one table: every row has the header's columns")
	last := recs[len(recs)-1]
	require.Equal(t, []string{"counters", "COUNTER_COLLECTION", "", "", "axpy(float, float*)", "2", "16.000000", "8.000000", "", "8.000000", "8.000000", "", "SQ_WAVES", "", "", ""}, last)

	// A run without counters has no counter table.
	b.Reset()
	s.Counters = nil
	require.NoError(t, summary.Write(&b, s, "text"))
	require.NotContains(t, b.String(), "COUNTER SUMMARY")
}

// -u/--summary-units: rocprofv3's sec, msec, usec and nsec; text and CSV
// durations in that unit down to the nanosecond, JSON in nanoseconds.
func TestSummaryUnits(t *testing.T) {
	s, err := summary.Build(ranks(t, 2), summary.Options{})
	require.NoError(t, err)
	// gemm: 20 dispatches, 201900 ns in all, 10000 to 10200 ns each.
	for _, c := range []struct{ unit, total, min, header string }{
		{"nsec", "201900", "10000", "DURATION (nsec)"},
		{"usec", "201.900", "10.000", "DURATION (usec)"},
		{"msec", "0.201900", "0.010000", "DURATION (msec)"},
		{"sec", "0.000201900", "0.000010000", "DURATION (sec)"},
	} {
		var b bytes.Buffer
		require.NoError(t, summary.WriteUnits(&b, s, "text", c.unit))
		require.Contains(t, b.String(), c.header, c.unit)
		require.Regexp(t, `gemm\(float\*, float\*, float\*\) +\| +20 \| +`+regexp.QuoteMeta(c.total)+` \| .* \| +`+regexp.QuoteMeta(c.min)+` \|`, b.String(), c.unit)

		b.Reset()
		require.NoError(t, summary.WriteUnits(&b, s, "csv", c.unit))
		recs, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
		require.NoError(t, err)
		require.Equal(t, c.total, recs[1][6], c.unit)
		require.Equal(t, c.min, recs[1][9], c.unit)
	}
	var b bytes.Buffer
	require.NoError(t, summary.WriteUnits(&b, s, "csv", "usec"))
	require.True(t, strings.HasPrefix(b.String(), "Section,Domain,Process,Rank,Name,Calls,TotalDurationUsec,AverageUsec,Percentage,MinUsec,MaxUsec,StdDev,Counter,Instruction,Offset,StallReasons\n"), b.String()[:120])
	b.Reset()
	require.NoError(t, summary.WriteUnits(&b, s, "json", "usec"))
	require.Contains(t, b.String(), `"total_ns": 201900`)
	require.ErrorContains(t, summary.WriteUnits(&bytes.Buffer{}, s, "text", "minutes"), "use one of sec, msec, usec, nsec")
}
