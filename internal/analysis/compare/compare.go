package compare

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/analysis"
)

// Metric is the per-name number compared.
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

// Options control Compare.
type Options struct {
	Metric    Metric
	Threshold float64 // relative rise, 0.05 = 5%
	// Sigmas is how many standard errors a change must exceed (0: 3).
	Sigmas float64
	// Domains restricts the comparison (nil: every domain).
	Domains []analysis.Domain
}

// Status is a row's verdict.
type Status string

// Statuses, in report order.
const (
	Regression  Status = "regression"
	Improvement Status = "improvement"
	Unchanged   Status = "unchanged"
	New         Status = "new"
	Removed     Status = "removed"
)

func (s Status) order() int {
	return map[Status]int{Regression: 0, Improvement: 1, New: 2, Removed: 3, Unchanged: 4}[s]
}

// Side is one run's numbers for a name; durations in ns.
type Side struct {
	Calls  int64   `json:"calls"`
	Value  float64 `json:"value_ns"` // the metric
	Mean   float64 `json:"mean_ns"`
	StdDev float64 `json:"stddev_ns"`
}

// Row is one name's comparison.
type Row struct {
	Domain analysis.Domain `json:"domain"`
	Name   string          `json:"name"`
	Base   *Side           `json:"base,omitempty"`
	New    *Side           `json:"new,omitempty"`
	// Delta is New.Value - Base.Value; Change the same relative to Base.
	Delta  float64 `json:"delta_ns"`
	Change float64 `json:"change"`
	// Noise is Sigmas standard errors of Delta: changes within it are noise.
	Noise  float64 `json:"noise_ns"`
	Status Status  `json:"status"`
}

// Report is a whole comparison.
type Report struct {
	Base         string  `json:"base"`
	New          string  `json:"new"`
	Metric       Metric  `json:"metric"`
	Threshold    float64 `json:"threshold"`
	Sigmas       float64 `json:"sigmas"`
	Rows         []Row   `json:"rows"`
	Regressions  int     `json:"regressions"`
	Improvements int     `json:"improvements"`
}

// Key names one compared entry.
type Key struct {
	Domain analysis.Domain
	Name   string
}

// Run is one run's per-name statistics.
type Run struct {
	Path  string
	Stats map[Key]*analysis.Stats
}

// Load reads a run (ROCpd database or CSV output directory) into per-name
// statistics with quantiles.
func Load(path string) (*Run, error) {
	r := &Run{Path: path, Stats: map[Key]*analysis.Stats{}}
	err := analysis.Scan(path, func(ev *analysis.Event) error {
		k := Key{ev.Domain, ev.Name}
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
	case Median:
		return s.Quantile(0.5)
	case P95:
		return s.Quantile(0.95)
	}
	return s.Mean()
}

// standardError estimates the standard error of the metric's difference
// from the per-call spread of both runs. Median and p95 use the normal
// approximation of a sample quantile's error: sqrt(p(1-p))/φ(z_p) times
// σ/√n, that is 1.2533 and 2.1131 times the mean's.
func standardError(m Metric, b, n *analysis.Stats) float64 {
	vb, vn := b.StdDev()*b.StdDev(), n.StdDev()*n.StdDev()
	if m == Total {
		return math.Sqrt(float64(b.Count)*vb + float64(n.Count)*vn)
	}
	se := math.Sqrt(vb/float64(b.Count) + vn/float64(n.Count))
	switch m {
	case Median:
		return 1.2533 * se
	case P95:
		return 2.1131 * se
	}
	return se
}

func side(m Metric, s *analysis.Stats) *Side {
	return &Side{Calls: s.Count, Value: metricOf(m, s), Mean: s.Mean(), StdDev: s.StdDev()}
}

// Compare compares two loaded runs.
func Compare(base, next *Run, opt Options) *Report {
	if opt.Metric == "" {
		opt.Metric = Mean
	}
	if opt.Sigmas == 0 {
		opt.Sigmas = 3
	}
	want := func(d analysis.Domain) bool {
		if len(opt.Domains) == 0 {
			return true
		}
		for _, x := range opt.Domains {
			if x == d {
				return true
			}
		}
		return false
	}
	rep := &Report{Base: base.Path, New: next.Path, Metric: opt.Metric, Threshold: opt.Threshold, Sigmas: opt.Sigmas}
	keys := map[Key]bool{}
	for k := range base.Stats {
		keys[k] = true
	}
	for k := range next.Stats {
		keys[k] = true
	}
	for k := range keys {
		if !want(k.Domain) {
			continue
		}
		b, n := base.Stats[k], next.Stats[k]
		r := Row{Domain: k.Domain, Name: k.Name}
		switch {
		case b == nil:
			r.New, r.Status = side(opt.Metric, n), New
		case n == nil:
			r.Base, r.Status = side(opt.Metric, b), Removed
		default:
			r.Base, r.New = side(opt.Metric, b), side(opt.Metric, n)
			r.Delta = r.New.Value - r.Base.Value
			// From zero any rise is beyond a relative threshold; Change
			// stays 0 then (JSON has no infinity).
			beyond := r.Delta != 0
			if r.Base.Value > 0 {
				r.Change = r.Delta / r.Base.Value
				beyond = math.Abs(r.Change) > opt.Threshold
			}
			r.Noise = opt.Sigmas * standardError(opt.Metric, b, n)
			r.Status = Unchanged
			if beyond && math.Abs(r.Delta) > r.Noise {
				if r.Delta > 0 {
					r.Status = Regression
					rep.Regressions++
				} else {
					r.Status = Improvement
					rep.Improvements++
				}
			}
		}
		rep.Rows = append(rep.Rows, r)
	}
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
		return a.Name < b.Name
	})
	return rep
}

// ParseDomains reads --domain values: kernel, hip, hsa, marker, copy,
// alloc, scratch, rccl, or full domain names such as KERNEL_DISPATCH.
func ParseDomains(names []string) ([]analysis.Domain, error) {
	alias := map[string]analysis.Domain{"kernel": analysis.Kernel, "hip": analysis.HIP, "hsa": analysis.HSA,
		"marker": analysis.Marker, "copy": analysis.Copy, "alloc": analysis.Allocation,
		"scratch": analysis.Scratch, "rccl": analysis.RCCL, "rocdecode": analysis.ROCDecode, "rocjpeg": analysis.ROCJPEG}
	var out []analysis.Domain
	for _, n := range names {
		if d, ok := alias[strings.ToLower(n)]; ok {
			out = append(out, d)
			continue
		}
		d := analysis.Domain(strings.ToUpper(n))
		if d.Order() == len(analysis.Domains) {
			return nil, fmt.Errorf("unknown domain %q: use kernel, hip, hsa, marker, copy, alloc, scratch, rccl, rocdecode or rocjpeg", n)
		}
		out = append(out, d)
	}
	return out, nil
}
