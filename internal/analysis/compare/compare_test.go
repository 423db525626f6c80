package compare_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
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

// kernel is a planted kernel: n dispatches of about dur ns.
type kernel struct {
	name string
	n    int
	dur  float64
}

var planted = []kernel{{"gemm", 300, 50_000}, {"axpy", 200, 8_000}, {"reduce", 100, 20_000}}

// run builds a process whose durations jitter uniformly by ±jitter around
// their planted values; slow multiplies one kernel's durations.
func run(seed uint64, jitter float64, slow string, factor float64) rocpdtest.Process {
	rng := rand.New(rand.NewPCG(seed, 99))
	p := rocpdtest.Process{GUID: rocpdtest.RankGUID(int(seed)), PID: 10, PPID: 1, Hostname: "ci", End: 1 << 40}
	t := int64(1000)
	noisy := func(d float64) int64 { return int64(d * (1 + jitter*(2*rng.Float64()-1))) }
	for _, k := range planted {
		for i := 0; i < k.n; i++ {
			d := noisy(k.dur)
			if k.name == slow {
				d = int64(float64(d) * factor)
			}
			p.APICalls = append(p.APICalls, rocpdtest.APICall{Category: "HIP_RUNTIME_API_EXT", Name: "hipLaunchKernel",
				TID: 10, Start: t, End: t + noisy(3000)})
			t += 5000
			p.Dispatches = append(p.Dispatches, rocpdtest.Dispatch{Kernel: k.name, TID: 10, Queue: 1, Start: t, End: t + d,
				Grid: [3]int64{64, 1, 1}, Workgroup: [3]int64{64, 1, 1}})
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

func statuses(r *compare.Report) map[string]compare.Status {
	out := map[string]compare.Status{}
	for _, row := range r.Rows {
		out[row.Name] = row.Status
	}
	return out
}

func TestPlantedSlowdownIsFlaggedAndNoisePasses(t *testing.T) {
	base := load(t, run(1, 0.02, "", 1))
	noise := load(t, run(2, 0.02, "", 1))
	slow := load(t, run(3, 0.02, "axpy", 1.2))
	for _, m := range compare.Metrics {
		t.Run(string(m), func(t *testing.T) {
			opt := compare.Options{Metric: m, Threshold: 0.05}
			rep := compare.Compare(base, noise, opt)
			require.Zero(t, rep.Regressions, "noise flagged: %+v", rep.Rows)
			require.Zero(t, rep.Improvements)
			require.Len(t, rep.Rows, 4) // three kernels and hipLaunchKernel

			rep = compare.Compare(base, slow, opt)
			require.Equal(t, 1, rep.Regressions)
			require.Equal(t, map[string]compare.Status{"axpy": compare.Regression, "gemm": compare.Unchanged,
				"reduce": compare.Unchanged, "hipLaunchKernel": compare.Unchanged}, statuses(rep))
			require.Equal(t, "axpy", rep.Rows[0].Name)
			require.InDelta(t, 0.2, rep.Rows[0].Change, 0.03)

			// The other way round the slowdown is an improvement.
			rep = compare.Compare(slow, base, opt)
			require.Zero(t, rep.Regressions)
			require.Equal(t, 1, rep.Improvements)
		})
	}
}

// A rise beyond the threshold that the spread of few dispatches explains
// is not a regression; with the noise test off it would be.
func TestRiseWithinNoiseIsNotARegression(t *testing.T) {
	mk := func(seed uint64, durs ...int64) *compare.Run {
		p := rocpdtest.Process{GUID: rocpdtest.RankGUID(int(seed)), PID: 10, PPID: 1, Hostname: "ci", End: 1 << 40}
		t0 := int64(0)
		for _, d := range durs {
			p.Dispatches = append(p.Dispatches, rocpdtest.Dispatch{Kernel: "spiky", TID: 10, Start: t0, End: t0 + d})
			t0 += d + 10
		}
		return load(t, p)
	}
	base := mk(1, 100, 10_000, 100, 10_000, 100, 10_000)
	next := mk(2, 100, 12_000, 100, 10_000, 100, 10_500)
	rep := compare.Compare(base, next, compare.Options{Metric: compare.Mean, Threshold: 0.05})
	require.Equal(t, compare.Unchanged, rep.Rows[0].Status)
	require.Greater(t, rep.Rows[0].Change, 0.05)
	require.Greater(t, rep.Rows[0].Noise, rep.Rows[0].Delta)

	rep = compare.Compare(base, next, compare.Options{Metric: compare.Mean, Threshold: 0.05, Sigmas: 1e-9})
	require.Equal(t, compare.Regression, rep.Rows[0].Status)
}

func TestNewRemovedAndDomainFilter(t *testing.T) {
	a := run(1, 0.01, "", 1)
	b := run(2, 0.01, "", 1)
	b.Dispatches = append(b.Dispatches, rocpdtest.Dispatch{Kernel: "fresh", TID: 10, Start: 1, End: 100})
	for i := range a.Dispatches {
		if a.Dispatches[i].Kernel == "reduce" {
			a.Dispatches[i].Kernel = "old_reduce"
		}
	}
	rep := compare.Compare(load(t, a), load(t, b), compare.Options{Metric: compare.Total, Threshold: 0.05})
	st := statuses(rep)
	require.Equal(t, compare.New, st["fresh"])
	require.Equal(t, compare.New, st["reduce"])
	require.Equal(t, compare.Removed, st["old_reduce"])
	require.Zero(t, rep.Regressions)

	d, err := compare.ParseDomains([]string{"hip"})
	require.NoError(t, err)
	rep = compare.Compare(load(t, a), load(t, b), compare.Options{Metric: compare.Total, Domains: d})
	require.Len(t, rep.Rows, 1)
	require.Equal(t, analysis.HIP, rep.Rows[0].Domain)
	_, err = compare.ParseDomains([]string{"gpu"})
	require.ErrorContains(t, err, "unknown domain")
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
}

// writeCSVRun writes a process's kernels and HIP calls as rocprofv3 CSV.
func writeCSVRun(t *testing.T, p rocpdtest.Process) string {
	t.Helper()
	dir := t.TempDir()
	var k strings.Builder
	k.WriteString(`"Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id","Kernel_Name","Correlation_Id","Start_Timestamp","End_Timestamp"` + "\n")
	for i, d := range p.Dispatches {
		fmt.Fprintf(&k, "\"KERNEL_DISPATCH\",\"Agent 1\",1,0,10,%d,1,\"%s\",%d,%d,%d\n", i+1, d.Kernel, i+1, d.Start, d.End)
	}
	var h strings.Builder
	h.WriteString(`"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp","End_Timestamp"` + "\n")
	for i, a := range p.APICalls {
		fmt.Fprintf(&h, "\"HIP_RUNTIME_API_EXT\",\"%s\",10,10,%d,%d,%d\n", a.Name, i+1, a.Start, a.End)
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "ci"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ci", "10_kernel_trace.csv"), []byte(k.String()), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ci", "10_hip_api_trace.csv"), []byte(h.String()), 0o644))
	return dir
}

func TestCompareCSVDirectoryWithDatabase(t *testing.T) {
	base, err := compare.Load(writeCSVRun(t, run(1, 0.02, "", 1)))
	require.NoError(t, err)
	rep := compare.Compare(base, load(t, run(3, 0.02, "gemm", 1.2)), compare.Options{Metric: compare.Median, Threshold: 0.05})
	require.Equal(t, 1, rep.Regressions)
	require.Equal(t, "gemm", rep.Rows[0].Name)

	_, err = compare.Load(t.TempDir())
	require.ErrorContains(t, err, "holds no trace CSV files")
}

func TestReportFormats(t *testing.T) {
	base := load(t, run(1, 0.02, "", 1))
	rep := compare.Compare(base, load(t, run(3, 0.02, "axpy", 1.2)), compare.Options{Metric: compare.Mean, Threshold: 0.05})
	rep.Rows = append(rep.Rows, compare.Row{Domain: analysis.Kernel, Name: `k<a|b> & "x"` + "\x01", Status: compare.New,
		New: &compare.Side{Calls: 1, Value: 5}})
	render := func(format string) string {
		var b bytes.Buffer
		require.NoError(t, compare.Write(&b, rep, format))
		return b.String()
	}

	text := render("text")
	require.Contains(t, text, "1 regression(s), 0 improvement(s) in 5 compared names (metric mean, threshold 5%")
	require.Regexp(t, `(?m)^regression +KERNEL_DISPATCH +axpy +\d\.\d+ us +9\.\d+ us +\+1\.\d+ us +\+\d+\.\d% +±\d+ ns +200 → 200$`, text)

	md := render("markdown")
	require.Contains(t, md, "### rocprof-go compare: ❌ 1 regression(s)")
	require.Contains(t, md, "| **regression** | KERNEL_DISPATCH | `axpy` |")
	require.Contains(t, md, "`k<a\\|b> & \"x\"")
	require.Contains(t, md, "<details><summary>3 unchanged</summary>")
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| ") {
			require.Equal(t, 10, strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"), line)
		}
	}

	var back compare.Report
	require.NoError(t, json.Unmarshal([]byte(render("json")), &back))
	require.Equal(t, 1, back.Regressions)
	require.Len(t, back.Rows, 5)

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
	require.Equal(t, 5, suites.Tests)
	require.Equal(t, 1, suites.Failures)
	require.Equal(t, "KERNEL_DISPATCH", suites.Suites[0].Name)
	require.Equal(t, "axpy", suites.Suites[0].Cases[0].Name)
	require.Contains(t, suites.Suites[0].Cases[0].Failure.Message, "axpy mean rose +1.")

	require.ErrorContains(t, compare.Write(io.Discard, rep, "html"), "use one of text, markdown, json, junit")
}
