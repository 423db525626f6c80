package rocprof

import (
	"io"

	"github.com/rocprof-go/rocprof-go/internal/analysis/compare"
)

// Comparing stored runs: what `rocprof-go compare` does, for Go programs
// (a CI gate written in Go, a dashboard). Each side is one or more runs —
// run directories (found through their run.json: a ROCpd database or CSV
// traces, whichever the run wrote), ROCpd databases, or CSV directories.
// Kernels are compared per launch configuration, copies per direction and
// size class, APIs per function; with RecommendedRuns runs per side each
// run is one sample of a Mann–Whitney U test.
//
//	rep, err := rocprof.Compare([]string{"base1", "base2", "base3", "base4", "base5"},
//		[]string{"new1", "new2", "new3", "new4", "new5"}, rocprof.CompareOptions{Threshold: 0.05})
//	if err != nil { ... }
//	if rep.Failed { ... } // a gated regression (kernels, copies by default)

type (
	// CompareOptions control Compare; the zero value takes the defaults
	// (median per run, 5%, 100 ns, alpha 0.05, kernels and copies gated)
	// but for Threshold and MinDelta, which are taken as given:
	// DefaultCompareOptions has them set.
	CompareOptions = compare.Options
	// CompareReport is a comparison's verdict, entry by entry.
	CompareReport = compare.Report
	// CompareRow is one entry (kernel and launch configuration, API
	// function, copy direction and size class, ...) of a CompareReport.
	CompareRow = compare.Row
	// CompareStatus is a row's verdict.
	CompareStatus = compare.Status
	// CompareMetric is what each run's durations of an entry are summed up by.
	CompareMetric = compare.Metric
	// CompareDomain is an output domain as CompareOptions name them
	// (ParseCompareDomains).
	CompareDomain = compare.Domain
	// CompareSide is one side's numbers in a CompareRow.
	CompareSide = compare.Side
	// CompareBasis says what a row's samples are (runs or calls).
	CompareBasis = compare.Basis
)

// Compare verdicts.
const (
	Regression   = compare.Regression
	Improvement  = compare.Improvement
	Unchanged    = compare.Unchanged
	Insufficient = compare.Insufficient
	NewEntry     = compare.New
	RemovedEntry = compare.Removed
)

// RecommendedRuns is the number of runs per side the comparison's test
// needs to tell a change from run-to-run noise at the default alpha.
const RecommendedRuns = compare.RecommendedRuns

// DefaultCompareOptions are the CLI's defaults.
func DefaultCompareOptions() CompareOptions {
	return CompareOptions{Metric: compare.Median, Threshold: compare.DefaultThreshold,
		MinDelta: compare.DefaultMinDelta, Alpha: compare.DefaultAlpha}
}

// ParseCompareDomains reads domain names as --domain and --gate take them
// (kernel, copy, hip, hsa, marker, alloc, scratch, rccl, all, or
// rocprofv3's domain names such as KERNEL_DISPATCH).
func ParseCompareDomains(names []string) ([]CompareDomain, error) {
	return compare.ParseDomains(names)
}

// Compare loads the runs of both sides and compares them.
func Compare(base, next []string, opt CompareOptions) (*CompareReport, error) {
	load := func(paths []string) ([]*compare.Run, error) {
		var runs []*compare.Run
		for _, p := range paths {
			r, err := compare.Load(p)
			if err != nil {
				return nil, err
			}
			runs = append(runs, r)
		}
		return runs, nil
	}
	b, err := load(base)
	if err != nil {
		return nil, err
	}
	n, err := load(next)
	if err != nil {
		return nil, err
	}
	return compare.Compare(b, n, opt), nil
}

// CompareFormats are the report formats WriteCompareReport writes.
var CompareFormats = compare.Formats

// WriteCompareReport renders a report as text, markdown, json or junit.
func WriteCompareReport(w io.Writer, rep *CompareReport, format string) error {
	return compare.Write(w, rep, format)
}

// ParseCompareMetric reads a --metric value: median, mean, p95 or total.
func ParseCompareMetric(s string) (CompareMetric, error) { return compare.ParseMetric(s) }

// ParseCompareThreshold reads a --threshold value: "5%" or "5" is 0.05.
func ParseCompareThreshold(s string) (float64, error) { return compare.ParseThreshold(s) }
