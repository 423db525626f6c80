package compare

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/analysis"
	"github.com/rocprof-go/rocprof-go/internal/kernelname"
)

// Metric is what each run's durations of one entry are summed up by.
type Metric string

// Metrics.
const (
	Total  Metric = "total"
	Mean   Metric = "mean"
	Median Metric = "median"
	P95    Metric = "p95"
)

// Metrics lists the valid metrics.
var Metrics = []Metric{Total, Mean, Median, P95}

// ParseMetric validates a --metric value.
func ParseMetric(s string) (Metric, error) {
	for _, m := range Metrics {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown metric %q: use total, mean, median or p95", s)
}

// ParseThreshold reads "5%" or "5" (both five percent) as 0.05.
func ParseThreshold(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("bad threshold %q: give a percentage such as 5%%", s)
	}
	return v / 100, nil
}

// Defaults. Alpha is family-wise: the chance that identical runs show any
// gated regression at all is at most DefaultAlpha (Holm's procedure over
// the gated entries). With RecommendedRuns runs per side the U test can
// reach p = 0.00016 (every run of one side slower than every run of the
// other), enough for dozens of gated entries, and still 0.0003 with one
// run out of line.
const (
	DefaultThreshold = 0.05
	DefaultMinDelta  = 100 // ns
	DefaultAlpha     = 0.01
	RecommendedRuns  = 8
	// MinCalls is the fewest calls per side a name needs to be decided from
	// its calls (when there are too few runs per side to test runs).
	MinCalls = 8
)

// DefaultGate is the domains whose changes fail a comparison unless
// asked otherwise: the GPU's. Host API durations depend on the host's
// load and CPU far more than on the change under test.
var DefaultGate = []analysis.Domain{analysis.Kernel, analysis.Copy}

// Options control Compare.
type Options struct {
	Metric    Metric  // per run (default median)
	Threshold float64 // smallest relative change that counts (default 5%)
	// MinDelta is the smallest absolute change, in ns, that counts.
	MinDelta float64
	// Alpha is the significance level of the Mann–Whitney U test
	// (0: DefaultAlpha).
	Alpha float64
	// Domains restricts the comparison (nil: every domain).
	Domains []analysis.Domain
	// Gate is the domains whose regressions fail the comparison
	// (nil: DefaultGate).
	Gate []analysis.Domain
	// FailOnMissing makes names found on one side only fail the comparison.
	FailOnMissing bool
	// AllowIncomplete lets runs whose run.json says they are incomplete
	// (timed out, killed by a signal, records lost: Run.Problems) be
	// compared; without it such a run fails the comparison.
	AllowIncomplete bool
}

// Status is a row's verdict.
type Status string

// Statuses, in report order.
const (
	Regression   Status = "regression"
	Improvement  Status = "improvement"
	New          Status = "new"
	Removed      Status = "removed"
	Insufficient Status = "insufficient data"
	Unchanged    Status = "unchanged"
)

func (s Status) order() int {
	return map[Status]int{Regression: 0, Improvement: 1, New: 2, Removed: 3, Insufficient: 4, Unchanged: 5}[s]
}

// Basis says what a row's samples are.
type Basis string

// Bases.
const (
	// ByRuns: one value per run (the metric of that run's durations).
	ByRuns Basis = "runs"
	// ByCalls: every call or dispatch of the runs pooled, for sides with
	// too few runs to test runs (run-to-run variation is then not seen).
	ByCalls Basis = "calls"
)

// Side is one side's numbers for an entry; durations in ns.
type Side struct {
	Runs  int     `json:"runs"`  // runs the entry appears in
	Calls int64   `json:"calls"` // calls or dispatches in those runs
	Value float64 `json:"value_ns"`
	// Values are the per-run metric values (ByRuns); Min and Max their
	// range, or the range of the calls (ByCalls).
	Values []float64 `json:"run_values_ns,omitempty"`
	Min    float64   `json:"min_ns"`
	Max    float64   `json:"max_ns"`
}

// Row is one entry's comparison.
type Row struct {
	Domain analysis.Domain `json:"domain"`
	Name   string          `json:"name"`
	// Config is the kernel's launch configuration or the copies' size
	// class ("" when the entry has none or the input does not say).
	Config string `json:"config,omitempty"`
	// Configs is how many configurations the name has in either run.
	Configs int   `json:"configs"`
	Base    *Side `json:"base,omitempty"`
	New     *Side `json:"new,omitempty"`
	// Delta is New.Value - Base.Value; Change the same relative to Base.
	Delta  float64 `json:"delta_ns"`
	Change float64 `json:"change"`
	// P is the Mann–Whitney U test's two-sided p-value (1 when untested);
	// PAdjusted the same adjusted by Holm's procedure for the entries
	// tested with it (the gated ones, or the others), which is what is
	// compared with Alpha.
	P         float64 `json:"p"`
	PAdjusted float64 `json:"p_adjusted"`
	Basis     Basis   `json:"basis,omitempty"`
	Gated     bool    `json:"gated"`
	Status    Status  `json:"status"`
	// Note explains an insufficient, new or removed entry.
	Note string `json:"note,omitempty"`
}

// Report is a whole comparison.
type Report struct {
	Base      []string `json:"base"`
	New       []string `json:"new"`
	Metric    Metric   `json:"metric"`
	Threshold float64  `json:"threshold"`
	MinDelta  float64  `json:"min_delta_ns"`
	Alpha     float64  `json:"alpha"`
	Gate      []string `json:"gate"`
	Rows      []Row    `json:"rows"`
	// Regressions counts the gated regressions (what fails the
	// comparison); Ungated the regressions of domains not gated.
	Regressions  int `json:"regressions"`
	Ungated      int `json:"ungated_regressions"`
	Improvements int `json:"improvements"`
	Missing      int `json:"missing"` // entries found on one side only
	// Tested is how many gated entries both sides have (Holm's family,
	// when there are runs enough to test them).
	Tested int `json:"tested_gated"`
	// FailOnMissing: entries found on one side only fail the comparison.
	FailOnMissing bool `json:"fail_on_missing"`
	// Failed says whether the comparison fails: a gated regression, or a
	// missing entry with FailOnMissing.
	Failed bool `json:"failed"`
	// Incomplete says which runs are incomplete and why (their run.json):
	// each fails the comparison unless Options.AllowIncomplete.
	Incomplete []string `json:"incomplete,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
}

// Domain is an output domain (analysis.Domain), named here for users of
// this package's options.
type Domain = analysis.Domain

// Key names one compared entry: kernels per launch configuration, copies
// per direction and size class, everything else per name.
type Key struct {
	Domain analysis.Domain
	Name   string
	Config string
}

// Run is one run's per-entry statistics.
type Run struct {
	Path    string
	Stats   map[Key]*analysis.Stats
	Options map[string]string // the run's options, from its run.json
	// Problems say why the run is incomplete, from its run.json
	// (analysis.Source.Problems).
	Problems []string
}

// Load reads a run (a ROCpd database, a run directory with its run.json, a
// directory of CSV traces) into per-entry statistics with quantiles.
func Load(path string) (*Run, error) {
	src, err := analysis.Resolve(path)
	if err != nil {
		return nil, err
	}
	r := &Run{Path: path, Stats: map[Key]*analysis.Stats{}, Options: src.Options, Problems: src.Problems}
	err = analysis.ScanSource(src, func(ev *analysis.Event) error {
		k := Key{Domain: ev.Domain, Name: ev.Name}
		switch ev.Domain {
		case analysis.Kernel:
			k.Config = ev.Launch.String()
		case analysis.Copy:
			k.Config = analysis.SizeClass(ev.Bytes)
		}
		s := r.Stats[k]
		if s == nil {
			s = analysis.NewStats(true)
			r.Stats[k] = s
		}
		s.Add(ev.Duration())
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

func metricOf(m Metric, s *analysis.Stats) float64 {
	switch m {
	case Total:
		return float64(s.Sum)
	case Mean:
		return s.Mean()
	case P95:
		return s.Quantile(0.95)
	}
	return s.Quantile(0.5)
}

// side gathers one side's numbers for k: per-run metric values, and all
// calls pooled.
type side struct {
	values []float64
	pooled *analysis.Stats
}

func gather(runs []*Run, k Key, m Metric) side {
	var s side
	for _, r := range runs {
		st := r.Stats[k]
		if st == nil {
			continue
		}
		s.values = append(s.values, metricOf(m, st))
		if s.pooled == nil {
			s.pooled = analysis.NewStats(true)
		}
		s.pooled.Merge(st)
	}
	return s
}

func (s side) summary(basis Basis, m Metric) *Side {
	if s.pooled == nil {
		return nil
	}
	out := &Side{Runs: len(s.values), Calls: s.pooled.Count}
	if basis == ByCalls {
		out.Value = metricOf(m, s.pooled)
		if m == Total {
			out.Value /= float64(len(s.values)) // per run, so sides with other run counts compare
		}
		out.Min, out.Max = float64(s.pooled.Min), float64(s.pooled.Max)
		return out
	}
	out.Values = s.values
	out.Value = median(s.values)
	out.Min, out.Max = slices.Min(s.values), slices.Max(s.values)
	return out
}

// Compare compares the runs of two sides (one or more each).
func Compare(base, next []*Run, opt Options) *Report {
	if opt.Metric == "" {
		opt.Metric = Median
	}
	if opt.Alpha == 0 {
		opt.Alpha = DefaultAlpha
	}
	gate := opt.Gate
	if gate == nil {
		gate = DefaultGate
	}
	rep := &Report{Metric: opt.Metric, Threshold: opt.Threshold, MinDelta: opt.MinDelta, Alpha: opt.Alpha,
		FailOnMissing: opt.FailOnMissing}
	for _, d := range gate {
		rep.Gate = append(rep.Gate, string(d))
	}
	for _, r := range base {
		rep.Base = append(rep.Base, r.Path)
	}
	for _, r := range next {
		rep.New = append(rep.New, r.Path)
	}
	base, next = alignKernelNames(base, next, rep)

	keys := map[Key]bool{}
	configs := map[Key]map[string]bool{} // name (Config "") -> its configurations
	for _, side := range [][]*Run{base, next} {
		for _, r := range side {
			for k := range r.Stats {
				if !contains(opt.Domains, k.Domain) {
					continue
				}
				keys[k] = true
				nk := Key{Domain: k.Domain, Name: k.Name}
				if configs[nk] == nil {
					configs[nk] = map[string]bool{}
				}
				configs[nk][k.Config] = true
			}
		}
	}
	for k := range keys {
		r := decide(k, gather(base, k, opt.Metric), gather(next, k, opt.Metric), opt)
		r.Configs = len(configs[Key{Domain: k.Domain, Name: k.Name}])
		r.Gated = contains(gate, k.Domain)
		rep.Rows = append(rep.Rows, r)
	}
	var gated, ungated []*Row
	for i := range rep.Rows {
		r := &rep.Rows[i]
		if r.Status != Unchanged { // new, removed, insufficient: not tested
			continue
		}
		if r.Gated {
			gated = append(gated, r)
		} else {
			ungated = append(ungated, r)
		}
	}
	holm(gated, opt)
	holm(ungated, opt)
	for _, r := range rep.Rows {
		if r.Gated && r.Base != nil && r.New != nil {
			rep.Tested++
		}
	}
	for _, r := range rep.Rows {
		switch {
		case r.Status == Regression && r.Gated:
			rep.Regressions++
		case r.Status == Regression:
			rep.Ungated++
		case r.Status == Improvement:
			rep.Improvements++
		case r.Status == New || r.Status == Removed:
			rep.Missing++
		}
	}
	explainMissing(rep, base, next)
	if !opt.AllowIncomplete {
		for _, side := range [][]*Run{base, next} {
			for _, r := range side {
				if err := (&analysis.Source{Path: r.Path, Problems: r.Problems}).CheckComplete(false); err != nil {
					rep.Incomplete = append(rep.Incomplete, err.Error())
				}
			}
		}
	}
	rep.Failed = rep.Regressions > 0 || (opt.FailOnMissing && rep.Missing > 0) || len(rep.Incomplete) > 0
	sort.Slice(rep.Rows, func(i, j int) bool {
		a, b := rep.Rows[i], rep.Rows[j]
		if a.Status != b.Status {
			return a.Status.order() < b.Status.order()
		}
		if a.Domain != b.Domain {
			return a.Domain.Order() < b.Domain.Order()
		}
		if math.Abs(a.Change) != math.Abs(b.Change) {
			return math.Abs(a.Change) > math.Abs(b.Change)
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Config < b.Config
	})
	return rep
}

// contains reports whether d is in set; an empty set holds every domain.
func contains(set []analysis.Domain, d analysis.Domain) bool {
	if len(set) == 0 {
		return true
	}
	for _, x := range set {
		if x == d {
			return true
		}
	}
	return false
}

// decide compares one entry. With enough runs on both sides to reach
// significance, each run is one sample (its metric); otherwise the calls
// are pooled, and entries with fewer than MinCalls calls on a side are
// insufficient data. A change counts when the U test finds the sides
// different at Alpha, the relative change exceeds Threshold, and the
// absolute change exceeds MinDelta.
func decide(k Key, b, n side, opt Options) Row {
	r := Row{Domain: k.Domain, Name: k.Name, Config: k.Config, P: 1, PAdjusted: 1}
	switch {
	case b.pooled == nil:
		r.New, r.Status = n.summary(ByRuns, opt.Metric), New
		return r
	case n.pooled == nil:
		r.Base, r.Status = b.summary(ByRuns, opt.Metric), Removed
		return r
	}
	// Runs are the samples as soon as each side has several: pooling calls
	// would hide run-to-run variation, the main source of false alarms.
	r.Basis = ByRuns
	if len(b.values) < 2 || len(n.values) < 2 {
		r.Basis = ByCalls
	}
	r.Base, r.New = b.summary(r.Basis, opt.Metric), n.summary(r.Basis, opt.Metric)
	r.Delta = r.New.Value - r.Base.Value
	if r.Base.Value > 0 {
		r.Change = r.Delta / r.Base.Value
	}
	switch r.Basis {
	case ByRuns:
		if minP(int64(len(b.values)), int64(len(n.values))) >= opt.Alpha {
			r.Status = Insufficient
			r.Note = fmt.Sprintf("in %d and %d runs: too few for the test at alpha %g", len(b.values), len(n.values), opt.Alpha)
			return r
		}
		r.P = mannWhitneyP(valueCounts(b.values), valueCounts(n.values))
	default:
		if b.pooled.Count < MinCalls || n.pooled.Count < MinCalls {
			r.Status = Insufficient
			r.Note = fmt.Sprintf("%d and %d calls in %d and %d runs: the test needs %d runs per side (or %d calls per side)",
				b.pooled.Count, n.pooled.Count, len(b.values), len(n.values), RecommendedRuns, MinCalls)
			return r
		}
		r.P = mannWhitneyP(b.pooled.Distribution(), n.pooled.Distribution())
	}
	r.Status = Unchanged // until holm
	return r
}

// holm adjusts the p-values of the tested rows of one family (Holm's
// step-down procedure: the k-th smallest of m p-values is multiplied by
// m-k+1, and adjusted values never decrease) and gives each row its
// verdict: a change counts when its adjusted p is below Alpha and it is
// beyond Threshold and MinDelta.
func holm(rows []*Row, opt Options) {
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].P < rows[j].P })
	m := len(rows)
	prev := 0.0
	for k, r := range rows {
		r.PAdjusted = math.Max(prev, math.Min(1, float64(m-k)*r.P))
		prev = r.PAdjusted
		beyond := math.Abs(r.Delta) > opt.MinDelta && r.PAdjusted < opt.Alpha
		if r.Base.Value > 0 {
			beyond = beyond && math.Abs(r.Change) > opt.Threshold
		}
		r.Status = Unchanged
		if beyond {
			r.Status = Improvement
			if r.Delta > 0 {
				r.Status = Regression
			}
		}
	}
}

// RunsNeeded is the fewest runs per side with which the U test can flag a
// change among tests entries at family-wise level alpha (every run of one
// side beyond every run of the other). An alpha that is not in (0, 1) (a
// Report built by hand, whose zero Alpha no run count could reach) is taken
// as DefaultAlpha, as Compare takes it.
func RunsNeeded(alpha float64, tests int) int {
	if !(alpha > 0 && alpha < 1) {
		alpha = DefaultAlpha
	}
	tests = max(tests, 1)
	for n := int64(2); ; n++ {
		if minP(n, n)*float64(tests) < alpha {
			return int(n)
		}
	}
}

// alignKernelNames makes kernel names comparable when the two sides were
// recorded with and without --truncate-kernels (their run.json says so):
// the full names are truncated as -T does.
func alignKernelNames(base, next []*Run, rep *Report) ([]*Run, []*Run) {
	truncated := func(runs []*Run) (yes, no int) {
		for _, r := range runs {
			if r.Options["truncate_kernels"] == "true" {
				yes++
			} else {
				no++
			}
		}
		return
	}
	by, bn := truncated(base)
	ny, nn := truncated(next)
	if by+ny == 0 || bn+nn == 0 {
		return base, next
	}
	rep.Warnings = append(rep.Warnings, fmt.Sprintf("%d of %d runs were recorded with --truncate-kernels (-T) and %d without: kernel names are compared truncated",
		by+ny, by+ny+bn+nn, bn+nn))
	conv := func(runs []*Run) []*Run {
		out := make([]*Run, len(runs))
		for i, r := range runs {
			if r.Options["truncate_kernels"] == "true" {
				out[i] = r
				continue
			}
			t := &Run{Path: r.Path, Options: r.Options, Stats: map[Key]*analysis.Stats{}}
			for k, s := range r.Stats {
				if k.Domain == analysis.Kernel {
					k.Name = kernelname.Truncate(k.Name)
				}
				if t.Stats[k] == nil {
					t.Stats[k] = analysis.NewStats(true)
				}
				t.Stats[k].Merge(s)
			}
			out[i] = t
		}
		return out
	}
	return conv(base), conv(next)
}

// explainMissing notes each entry found on one side only, with its likely
// cause, and warns once per cause.
func explainMissing(rep *Report, base, next []*Run) {
	names := func(runs []*Run) map[string]bool {
		m := map[string]bool{}
		for _, r := range runs {
			for k := range r.Stats {
				if k.Domain == analysis.Kernel {
					m[k.Name] = true
				}
			}
		}
		return m
	}
	baseNames, nextNames := names(base), names(next)
	option := func(runs []*Run, key string) string {
		seen := map[string]bool{}
		var out []string
		for _, r := range runs {
			v := r.Options[key]
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
		sort.Strings(out)
		return strings.Join(out, "|")
	}
	var filterNote string
	for _, o := range []string{"kernel_include_regex", "kernel_exclude_regex", "kernel_rename", "mangled_kernels", "truncate_kernels"} {
		if option(base, o) != option(next, o) {
			filterNote = fmt.Sprintf("the runs differ in %s (%q against %q)", "--"+strings.ReplaceAll(o, "_", "-"), option(base, o), option(next, o))
			break
		}
	}
	// Warnings group the entries by cause, with an example each.
	counts := map[string]int{}
	example := map[string]string{}
	var causes []string
	for i := range rep.Rows {
		r := &rep.Rows[i]
		if r.Status != New && r.Status != Removed {
			continue
		}
		other := baseNames
		if r.Status == Removed {
			other = nextNames
		}
		var cause string
		switch {
		case r.Domain == analysis.Kernel && truncationOf(r.Name, other) != "":
			cause = "kernel names truncated (-T) on one side only"
			r.Note = fmt.Sprintf("%s: the other side has %q", cause, truncationOf(r.Name, other))
		case r.Domain == analysis.Kernel && r.Config != "" && otherConfig(rep, r):
			cause = "the kernel ran with another launch configuration on the other side"
			r.Note = cause
		case filterNote != "":
			cause = filterNote
			r.Note = cause
		default:
			cause = "not recorded on the other side: a code or input change, a filter, or another path through the app"
			r.Note = cause
		}
		if counts[cause] == 0 {
			causes = append(causes, cause)
			example[cause] = fmt.Sprintf("%s %s%s", r.Status, r.Name, configSuffix(r.Config))
		}
		counts[cause]++
	}
	sort.Strings(causes)
	for _, c := range causes {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%d entries on one side only: %s (e.g. %s)", counts[c], c, example[c]))
	}
}

// truncationOf returns the name in other that is name's -T truncation or
// whose truncation name is, "" if none.
func truncationOf(name string, other map[string]bool) string {
	if t := kernelname.Truncate(name); t != name && other[t] {
		return t
	}
	for o := range other {
		if o != name && kernelname.Truncate(o) == name {
			return o
		}
	}
	return ""
}

// otherConfig reports whether r's name appears with another configuration
// on the other side.
func otherConfig(rep *Report, r *Row) bool {
	for i := range rep.Rows {
		o := &rep.Rows[i]
		if o.Domain == r.Domain && o.Name == r.Name && o.Config != r.Config && o.Status != r.Status {
			return true
		}
	}
	return false
}

// ParseDomains reads --domain and --gate values: kernel, hip, hsa, marker,
// copy, alloc, scratch, rccl, or full domain names such as KERNEL_DISPATCH;
// "all" is every domain.
func ParseDomains(names []string) ([]Domain, error) {
	alias := map[string]analysis.Domain{"kernel": analysis.Kernel, "hip": analysis.HIP, "hsa": analysis.HSA,
		"marker": analysis.Marker, "copy": analysis.Copy, "alloc": analysis.Allocation,
		"scratch": analysis.Scratch, "rccl": analysis.RCCL, "rocdecode": analysis.ROCDecode, "rocjpeg": analysis.ROCJPEG}
	var out []analysis.Domain
	for _, n := range names {
		if strings.EqualFold(n, "all") {
			out = append(out, analysis.Domains...)
			continue
		}
		if d, ok := alias[strings.ToLower(n)]; ok {
			out = append(out, d)
			continue
		}
		d := analysis.Domain(strings.ToUpper(n))
		if d.Order() == len(analysis.Domains) {
			return nil, fmt.Errorf("unknown domain %q: use kernel, hip, hsa, marker, copy, alloc, scratch, rccl, rocdecode, rocjpeg or all", n)
		}
		out = append(out, d)
	}
	return out, nil
}
