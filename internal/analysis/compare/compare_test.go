package compare_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis"
	"github.com/rocprof-go/rocprof-go/internal/analysis/compare"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdtest"
)

// kernel is a planted kernel: n dispatches of about dur ns on a grid.
type kernel struct {
	name string
	n    int
	dur  float64
	grid int64
}

var planted = []kernel{{"gemm", 30, 50_000, 4096}, {"axpy", 20, 8_000, 1024}, {"axpy", 10, 3_000, 256}, {"reduce", 10, 20_000, 1024}}

// process builds a process whose durations jitter uniformly by ±jitter
// around their planted values; slow multiplies one kernel's durations on
// grid (0: every grid).
func process(seed uint64, jitter float64, slow string, grid int64, factor float64) rocpdtest.Process {
	rng := rand.New(rand.NewPCG(seed, 99))
	p := rocpdtest.Process{GUID: rocpdtest.RankGUID(int(seed)), PID: 10, PPID: 1, Hostname: "ci", End: 1 << 40}
	t := int64(1000)
	noisy := func(d float64) int64 { return int64(d * (1 + jitter*(2*rng.Float64()-1))) }
	for _, k := range planted {
		for i := 0; i < k.n; i++ {
			d := noisy(k.dur)
			if k.name == slow && (grid == 0 || grid == k.grid) {
				d = int64(float64(d) * factor)
			}
			p.APICalls = append(p.APICalls, rocpdtest.APICall{Category: "HIP_RUNTIME_API_EXT", Name: "hipLaunchKernel",
				TID: 10, Start: t, End: t + noisy(3000)})
			t += 5000
			p.Dispatches = append(p.Dispatches, rocpdtest.Dispatch{Kernel: k.name, TID: 10, Queue: 1, Start: t, End: t + d,
				Grid: [3]int64{k.grid, 1, 1}, Workgroup: [3]int64{64, 1, 1}})
			t += d + 1000
		}
	}
	return p
}

func load(t *testing.T, p rocpdtest.Process) *compare.Run {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.db")
	require.NoError(t, rocpdtest.Write(path, p))
	r, err := compare.Load(path)
	require.NoError(t, err)
	return r
}

// runs loads n runs from consecutive seeds.
func runs(t *testing.T, seed uint64, n int, jitter float64, slow string, grid int64, factor float64) []*compare.Run {
	var out []*compare.Run
	for i := range n {
		out = append(out, load(t, process(seed+uint64(i), jitter, slow, grid, factor)))
	}
	return out
}

func statuses(r *compare.Report) map[string]compare.Status {
	out := map[string]compare.Status{}
	for _, row := range r.Rows {
		k := row.Name
		if row.Config != "" {
			k += " " + strings.Fields(row.Config)[1] // the grid
		}
		out[k] = row.Status
	}
	return out
}

func defaults() compare.Options {
	return compare.Options{Metric: compare.Median, Threshold: compare.DefaultThreshold, MinDelta: compare.DefaultMinDelta}
}

// With the recommended runs per side, a 10% slowdown of one launch shape
// of one kernel is flagged, and only that entry; identical runs with 2%
// jitter are not.
func TestRunsFlagOneLaunchShape(t *testing.T) {
	base := runs(t, 1, compare.RecommendedRuns, 0.02, "", 0, 1)
	same := runs(t, 100, compare.RecommendedRuns, 0.02, "", 0, 1)
	slow := runs(t, 200, compare.RecommendedRuns, 0.02, "axpy", 256, 1.1)

	rep := compare.Compare(base, same, defaults())
	require.Zero(t, rep.Regressions, "%+v", rep.Rows)
	require.False(t, rep.Failed)
	require.Equal(t, 4, rep.Tested, "4 kernel entries and no copies gated; hipLaunchKernel is not gated")

	rep = compare.Compare(base, slow, defaults())
	require.Equal(t, 1, rep.Regressions)
	require.True(t, rep.Failed)
	require.Equal(t, map[string]compare.Status{"axpy 256x1x1": compare.Regression, "axpy 1024x1x1": compare.Unchanged,
		"gemm 4096x1x1": compare.Unchanged, "reduce 1024x1x1": compare.Unchanged, "hipLaunchKernel": compare.Unchanged}, statuses(rep))
	top := rep.Rows[0]
	require.Equal(t, "axpy", top.Name)
	require.Equal(t, "grid 256x1x1 block 64x1x1 lds 512 scratch 0", top.Config)
	require.Equal(t, 2, top.Configs)
	require.Equal(t, compare.ByRuns, top.Basis)
	require.Equal(t, compare.RecommendedRuns, top.Base.Runs)
	require.InDelta(t, 0.1, top.Change, 0.02)
	require.Less(t, top.PAdjusted, 0.01)

	// The other way round the slowdown is an improvement.
	rep = compare.Compare(slow, base, defaults())
	require.Zero(t, rep.Regressions)
	require.Equal(t, 1, rep.Improvements)
}

// Too few runs to test: the entries are insufficient data, never a
// regression, and the report says how many runs it needs.
func TestTooFewRunsAreInsufficient(t *testing.T) {
	base := runs(t, 1, 3, 0.02, "", 0, 1)
	slow := runs(t, 200, 3, 0.02, "gemm", 0, 2)
	rep := compare.Compare(base, slow, defaults())
	require.Zero(t, rep.Regressions)
	for _, r := range rep.Rows {
		require.Equal(t, compare.Insufficient, r.Status, r.Name)
		require.Equal(t, "in 3 and 3 runs: too few for the test at alpha 0.01", r.Note)
	}
	var b bytes.Buffer
	require.NoError(t, compare.Write(&b, rep, "text"))
	require.Contains(t, b.String(), "note: 3 runs against 3: too few for the test to flag a change among 4 gated entries at alpha 0.01; give 6 runs per side")
}

// One run per side: the calls are pooled; a name with fewer than MinCalls
// calls on a side is insufficient data, however much it changed.
func TestOneRunPerSidePoolsCalls(t *testing.T) {
	bp, np := process(1, 0.02, "", 0, 1), process(2, 0.02, "gemm", 0, 1.2)
	bp.APICalls = append(bp.APICalls, rocpdtest.APICall{Category: "HIP_RUNTIME_API_EXT", Name: "hipMemcpy", TID: 10, Start: 1, End: 1000})
	np.APICalls = append(np.APICalls, rocpdtest.APICall{Category: "HIP_RUNTIME_API_EXT", Name: "hipMemcpy", TID: 10, Start: 1, End: 5000})
	rep := compare.Compare([]*compare.Run{load(t, bp)}, []*compare.Run{load(t, np)}, defaults())
	st := statuses(rep)
	require.Equal(t, compare.Regression, st["gemm 4096x1x1"])
	require.Equal(t, compare.Insufficient, st["hipMemcpy"])
	require.Equal(t, 1, rep.Regressions)
	for _, r := range rep.Rows {
		require.Equal(t, compare.ByCalls, r.Basis, r.Name)
	}
	var b bytes.Buffer
	require.NoError(t, compare.Write(&b, rep, "text"))
	require.Contains(t, b.String(), "each entry's calls are pooled, so run-to-run variation is not measured")
}

// synthetic builds runs directly: entries of pure noise (the same
// distribution on both sides), for the family-wise error rate.
func synthetic(rng *rand.Rand, entries, n int, shift float64) []*compare.Run {
	var out []*compare.Run
	for range n {
		r := &compare.Run{Path: "synthetic", Stats: map[compare.Key]*analysis.Stats{}}
		for e := range entries {
			s := analysis.NewStats(true)
			for range 20 {
				s.Add(int64(10_000 * (1 + shift + 0.3*rng.NormFloat64())))
			}
			r.Stats[compare.Key{Domain: analysis.Kernel, Name: fmt.Sprint("k", e)}] = s
		}
		out = append(out, r)
	}
	return out
}

// Holm's procedure keeps the chance that identical runs flag anything at
// all below alpha, whatever the number of entries: 400 comparisons of 40
// noisy entries each (20% per-run spread of the median). Without the
// correction about 40% of them would flag something.
func TestFamilyWiseFalseAlarms(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	opt := defaults()
	opt.Threshold, opt.MinDelta = 0, 0 // the test alone decides
	flagged := 0
	const trials = 400
	for range trials {
		rep := compare.Compare(synthetic(rng, 40, 8, 0), synthetic(rng, 40, 8, 0), opt)
		if rep.Regressions+rep.Improvements > 0 {
			flagged++
		}
	}
	require.LessOrEqual(t, flagged, 8, "%d of %d identical comparisons flagged something (alpha 0.01)", flagged, trials)
	// And a real 50% shift of all 40 entries is seen in most of them.
	rep := compare.Compare(synthetic(rng, 40, 8, 0), synthetic(rng, 40, 8, 0.5), opt)
	require.Greater(t, rep.Regressions, 30)
}

// Only gated domains fail a comparison; the others are reported.
func TestGate(t *testing.T) {
	bp := process(1, 0.02, "", 0, 1)
	np := process(2, 0.02, "", 0, 1)
	for i := range np.APICalls {
		np.APICalls[i].End += 3000 // hipLaunchKernel twice as slow
	}
	base, next := []*compare.Run{load(t, bp)}, []*compare.Run{load(t, np)}
	rep := compare.Compare(base, next, defaults())
	require.Zero(t, rep.Regressions)
	require.Equal(t, 1, rep.Ungated)
	require.False(t, rep.Failed)
	var b bytes.Buffer
	require.NoError(t, compare.Write(&b, rep, "text"))
	require.Regexp(t, `(?m)^regression \(not gated\) +HIP_API +hipLaunchKernel`, b.String())

	opt := defaults()
	opt.Gate, _ = compare.ParseDomains([]string{"all"})
	rep = compare.Compare(base, next, opt)
	require.Equal(t, 1, rep.Regressions)
	require.True(t, rep.Failed)

	opt = defaults()
	opt.Domains, _ = compare.ParseDomains([]string{"hip"})
	rep = compare.Compare(base, next, opt)
	require.Len(t, rep.Rows, 1)
	require.Equal(t, analysis.HIP, rep.Rows[0].Domain)
	_, err := compare.ParseDomains([]string{"gpu"})
	require.ErrorContains(t, err, "unknown domain")
}

// Entries on one side only are explained, and fail only when asked.
func TestMissingEntriesAreExplained(t *testing.T) {
	a := process(1, 0.01, "", 0, 1)
	b := process(2, 0.01, "", 0, 1)
	for i := range a.Dispatches {
		if a.Dispatches[i].Kernel == "reduce" {
			a.Dispatches[i].Kernel = "void reduce<float>(float*, int)" // what -T truncates to "reduce"
		}
	}
	b.Dispatches = append(b.Dispatches, rocpdtest.Dispatch{Kernel: "fresh", TID: 10, Start: 1, End: 100, Grid: [3]int64{64, 1, 1}, Workgroup: [3]int64{64, 1, 1}})
	base, next := []*compare.Run{load(t, a)}, []*compare.Run{load(t, b)}
	rep := compare.Compare(base, next, defaults())
	st := statuses(rep)
	require.Equal(t, compare.New, st["fresh 64x1x1"])
	require.Equal(t, compare.New, st["reduce 1024x1x1"])
	require.Equal(t, compare.Removed, st["void reduce<float>(float*, int) 1024x1x1"])
	require.Equal(t, 3, rep.Missing)
	require.False(t, rep.Failed)
	notes := strings.Join(rep.Warnings, "\n")
	require.Contains(t, notes, "2 entries on one side only: kernel names truncated (-T) on one side only (e.g. ")
	require.Contains(t, notes, "1 entries on one side only: not recorded on the other side")

	opt := defaults()
	opt.FailOnMissing = true
	rep = compare.Compare(base, next, opt)
	require.True(t, rep.Failed)
	require.Zero(t, rep.Regressions)

	// With run.json saying -T on one side, names are compared truncated.
	base[0].Options = map[string]string{"truncate_kernels": "false"}
	next[0].Options = map[string]string{"truncate_kernels": "true"}
	rep = compare.Compare(base, next, defaults())
	require.Equal(t, compare.Unchanged, statuses(rep)["reduce 1024x1x1"])
	require.Equal(t, 1, rep.Missing)
	require.Contains(t, rep.Warnings[0], "kernel names are compared truncated")
}

func TestParseFlags(t *testing.T) {
	for in, want := range map[string]float64{"5%": 0.05, "5": 0.05, " 12.5 % ": 0.125, "0%": 0} {
		got, err := compare.ParseThreshold(in)
		require.NoError(t, err, in)
		require.InDelta(t, want, got, 1e-12, in)
	}
	for _, bad := range []string{"", "x%", "-1%", "NaN"} {
		_, err := compare.ParseThreshold(bad)
		require.Error(t, err, bad)
	}
	_, err := compare.ParseMetric("p99")
	require.ErrorContains(t, err, "total, mean, median or p95")
	require.Equal(t, 8, compare.RunsNeeded(0.01, 20))
	require.Equal(t, 5, compare.RunsNeeded(0.01, 1))
	// A zero (or otherwise meaningless) alpha is DefaultAlpha; it looped
	// forever before.
	require.Equal(t, compare.RunsNeeded(compare.DefaultAlpha, 20), compare.RunsNeeded(0, 20))
	require.Equal(t, compare.RunsNeeded(compare.DefaultAlpha, 3), compare.RunsNeeded(math.NaN(), 3))
}

// writeCSVRun writes a process's kernels and HIP calls as rocprofv3 CSV.
func writeCSVRun(t *testing.T, dir string, p rocpdtest.Process) {
	t.Helper()
	var k strings.Builder
	k.WriteString(`"Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id","Kernel_Name","Correlation_Id","Start_Timestamp","End_Timestamp",` +
		`"LDS_Block_Size","Scratch_Size","VGPR_Count","Accum_VGPR_Count","SGPR_Count","Workgroup_Size_X","Workgroup_Size_Y","Workgroup_Size_Z","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"` + "\n")
	for i, d := range p.Dispatches {
		fmt.Fprintf(&k, "\"KERNEL_DISPATCH\",\"Agent 1\",1,0,10,%d,1,\"%s\",%d,%d,%d,512,0,8,0,16,%d,%d,%d,%d,%d,%d\n", i+1, d.Kernel, i+1, d.Start, d.End,
			d.Workgroup[0], d.Workgroup[1], d.Workgroup[2], d.Grid[0], d.Grid[1], d.Grid[2])
	}
	var h strings.Builder
	h.WriteString(`"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp","End_Timestamp"` + "\n")
	for i, a := range p.APICalls {
		fmt.Fprintf(&h, "\"HIP_RUNTIME_API_EXT\",\"%s\",10,10,%d,%d,%d\n", a.Name, i+1, a.Start, a.End)
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "ci"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ci", "10_kernel_trace.csv"), []byte(k.String()), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ci", "10_hip_api_trace.csv"), []byte(h.String()), 0o644))
}

// A CSV directory compares with a database: launch configurations are read
// from both.
func TestCompareCSVDirectoryWithDatabase(t *testing.T) {
	dir := t.TempDir()
	writeCSVRun(t, dir, process(1, 0.02, "", 0, 1))
	base, err := compare.Load(dir)
	require.NoError(t, err)
	rep := compare.Compare([]*compare.Run{base}, []*compare.Run{load(t, process(3, 0.02, "gemm", 0, 1.2))}, defaults())
	require.Equal(t, 1, rep.Regressions)
	require.Equal(t, "gemm", rep.Rows[0].Name)
	require.Zero(t, rep.Missing, "the same entries on both sides: %+v", rep.Rows)
}

// writeManifest writes a run.json listing files.
func writeManifest(t *testing.T, dir string, options map[string]string, files ...[2]string) {
	t.Helper()
	type file struct {
		Path   string `json:"path"`
		Format string `json:"format"`
	}
	m := struct {
		Options map[string]string `json:"options"`
		Files   []file            `json:"files"`
	}{Options: options}
	for _, f := range files {
		m.Files = append(m.Files, file{f[0], f[1]})
	}
	data, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run.json"), data, 0o644))
}

// Runs are found as users have them: through run.json (whatever else lies
// in the directory), a database, or a CSV directory; anything ambiguous is
// an error naming the candidates.
func TestRunsAreFoundThroughRunJSON(t *testing.T) {
	// A default (ROCpd) run directory, with an older run's CSV files left in it.
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "host"), 0o755))
	require.NoError(t, rocpdtest.Write(filepath.Join(dir, "host", "10_results.db"), process(1, 0.01, "", 0, 1)))
	writeCSVRun(t, filepath.Join(dir, "old"), process(9, 0.01, "", 0, 1))
	writeManifest(t, dir, map[string]string{"truncate_kernels": "true"}, [2]string{"host/10_results.db", "rocpd"})
	r, err := compare.Load(dir)
	require.NoError(t, err)
	require.Equal(t, "true", r.Options["truncate_kernels"])
	calls := int64(0)
	for k, s := range r.Stats {
		if k.Name == "hipLaunchKernel" {
			calls += s.Count
		}
	}
	require.EqualValues(t, 70, calls, "the run's own calls only, not the leftover run's")

	// A CSV run with its run.json: only the listed files.
	csvDir := t.TempDir()
	writeCSVRun(t, csvDir, process(1, 0.01, "", 0, 1))
	writeCSVRun(t, filepath.Join(csvDir, "leftover"), process(2, 0.01, "", 0, 1))
	writeManifest(t, csvDir, nil, [2]string{"ci/10_kernel_trace.csv", "csv"}, [2]string{"ci/10_hip_api_trace.csv", "csv"})
	r, err = compare.Load(csvDir)
	require.NoError(t, err)
	calls = 0
	for k, s := range r.Stats {
		if k.Name == "hipLaunchKernel" {
			calls += s.Count
		}
	}
	require.EqualValues(t, 70, calls)

	// Without run.json, two runs' files in one tree are ambiguous.
	amb := t.TempDir()
	writeCSVRun(t, filepath.Join(amb, "a"), process(1, 0.01, "", 0, 1))
	writeCSVRun(t, filepath.Join(amb, "b"), process(2, 0.01, "", 0, 1))
	_, err = compare.Load(amb)
	require.ErrorContains(t, err, "holds several runs or output sets")
	require.ErrorContains(t, err, filepath.Join(amb, "a", "ci")+": 10_hip_api_trace.csv, 10_kernel_trace.csv")

	// Run directories below a directory: one of them, please.
	parent := t.TempDir()
	for _, d := range []string{"r1", "r2"} {
		require.NoError(t, os.MkdirAll(filepath.Join(parent, d), 0o755))
		require.NoError(t, rocpdtest.Write(filepath.Join(parent, d, "x.db"), process(1, 0.01, "", 0, 1)))
		writeManifest(t, filepath.Join(parent, d), nil, [2]string{"x.db", "rocpd"})
	}
	_, err = compare.Load(parent)
	require.ErrorContains(t, err, "holds several runs")

	// A run that wrote only formats compare cannot read.
	pf := t.TempDir()
	writeManifest(t, pf, nil, [2]string{"x_results.pftrace", "pftrace"})
	_, err = compare.Load(pf)
	require.ErrorContains(t, err, "wrote pftrace only")

	_, err = compare.Load(t.TempDir())
	require.ErrorContains(t, err, "holds no run")
}

func TestReportFormats(t *testing.T) {
	base := runs(t, 1, compare.RecommendedRuns, 0.02, "", 0, 1)
	rep := compare.Compare(base, runs(t, 200, compare.RecommendedRuns, 0.02, "gemm", 0, 1.2), defaults())
	rep.Rows = append(rep.Rows, compare.Row{Domain: analysis.Kernel, Name: `k<a|b> & "x"` + "\x01", Status: compare.New,
		New: &compare.Side{Calls: 1, Value: 5}, Note: "not recorded on the other side"})
	render := func(format string) string {
		var b bytes.Buffer
		require.NoError(t, compare.Write(&b, rep, format))
		return b.String()
	}

	text := render("text")
	require.Contains(t, text, "1 regression(s), 0 improvement(s) in 6 compared entries (metric: median per run; a change counts beyond 5% and 100 ns at p < 0.01; gated: KERNEL_DISPATCH, MEMORY_COPY)")
	require.Regexp(t, `(?m)^regression +KERNEL_DISPATCH +gemm +grid 4096x1x1 block 64x1x1 lds 512 scratch 0 +\d+\.\d+ us +\d+\.\d+ us +\+\d+\.\d+ us +\+\d+\.\d% +<?0\.00\d +8 → 8 runs$`, text)

	md := render("markdown")
	require.Contains(t, md, "### rocprof-go compare: ❌ 1 regression(s)")
	require.Contains(t, md, "| **regression** | KERNEL_DISPATCH | `gemm` | grid 4096x1x1 block 64x1x1 lds 512 scratch 0 |")
	require.Contains(t, md, "`k<a\\|b> & \"x\"")
	require.Contains(t, md, "<details><summary>4 unchanged</summary>")
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| ") {
			require.Equal(t, 11, strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"), line)
		}
	}

	var back compare.Report
	require.NoError(t, json.Unmarshal([]byte(render("json")), &back))
	require.Equal(t, 1, back.Regressions)
	require.Len(t, back.Rows, 6)
	require.Len(t, back.Rows[0].Base.Values, compare.RecommendedRuns)

	junit := render("junit")
	dec := xml.NewDecoder(strings.NewReader(junit))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "JUnit XML is not well-formed")
	}
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal([]byte(junit), &suites))
	require.Equal(t, 6, suites.Tests)
	require.Equal(t, 1, suites.Failures)
	require.Equal(t, "KERNEL_DISPATCH", suites.Suites[0].Name)
	require.Equal(t, "gemm [grid 4096x1x1 block 64x1x1 lds 512 scratch 0]", suites.Suites[0].Cases[0].Name)
	require.Contains(t, suites.Suites[0].Cases[0].Failure.Message, "gemm median rose +")

	require.ErrorContains(t, compare.Write(io.Discard, rep, "html"), "use one of text, markdown, json, junit")
}
