package model

import (
	"math"
	"sort"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// The one duration accumulator of every statistic written: the CSV
// *_stats.csv and domain_stats.csv files, rocprof v1's stats files, the
// summaries (-S, -D, --summary-groups) and JSON's summary block.
//
// The outputs agree on the arithmetic (a running sum and sum of squares,
// the sample standard deviation) and differ in one point, kept as the
// caller's choice of duration: rocprofv3's CSV stats subtract end − start
// unsigned (spanUnsigned), its summaries count a record that ended before
// it started as zero (spanClamped).

// SpanUnsigned is a record's duration as rocprofv3's CSV stats compute it:
// an unsigned difference, which wraps for a record that ended before it
// started.
func SpanUnsigned(start, end uint64) uint64 { return end - start }

// SpanClamped is a record's duration as the summaries compute it: zero for
// a record that ended before it started.
func SpanClamped(start, end uint64) uint64 {
	if end < start {
		return 0
	}
	return end - start
}

// Stat accumulates durations the way rocprofv3 does: running sum and sum of
// squares, sample standard deviation.
type Stat struct {
	Count    uint64
	Sum      uint64
	Sqr      float64
	Min, Max uint64
}

// Add counts one duration.
func (s *Stat) Add(d uint64) {
	if s.Count == 0 || d < s.Min {
		s.Min = d
	}
	if d > s.Max {
		s.Max = d
	}
	s.Count++
	s.Sum += d
	s.Sqr += float64(d) * float64(d)
}

// Merge adds another accumulator's durations.
func (s *Stat) Merge(o *Stat) {
	if o.Count == 0 {
		return
	}
	if s.Count == 0 || o.Min < s.Min {
		s.Min = o.Min
	}
	if o.Max > s.Max {
		s.Max = o.Max
	}
	s.Count += o.Count
	s.Sum += o.Sum
	s.Sqr += o.Sqr
}

// Mean is the average duration, 0 without samples.
func (s *Stat) Mean() float64 {
	if s.Count == 0 {
		return 0
	}
	return float64(s.Sum) / float64(s.Count)
}

// Variance is the sample variance (n − 1), 0 below two samples.
func (s *Stat) Variance() float64 {
	if s.Count < 2 {
		return 0
	}
	n := float64(s.Count)
	v := (s.Sqr - float64(s.Sum)*float64(s.Sum)/n) / (n - 1)
	return math.Max(v, 0)
}

// StdDev is the sample standard deviation (n − 1), 0 below two samples.
func (s *Stat) StdDev() float64 { return math.Sqrt(s.Variance()) }

// NamedStat is one row of a table: a name (function, kernel, direction,
// operation) and its statistics.
type NamedStat struct {
	Name string
	Stat
}

// StatTable is one domain's statistics by name, in first-seen order.
type StatTable struct {
	index map[string]*NamedStat
	Rows  []*NamedStat
	// Total is the running total of every duration added through add, in
	// record order: the summaries' and JSON's domain line. domain_stats.csv
	// sums the rows instead (merged): the two sums of squares may differ in
	// their last bits, and each output keeps rocprofv3's.
	Total Stat
}

// Get returns the row of a name, made on first use.
func (t *StatTable) Get(name string) *NamedStat {
	if t.index == nil {
		t.index = map[string]*NamedStat{}
	}
	s := t.index[name]
	if s == nil {
		s = &NamedStat{Name: name}
		t.index[name] = s
		t.Rows = append(t.Rows, s)
	}
	return s
}

// add counts a duration in a name's row and in Total.
func (t *StatTable) add(name string, d uint64) {
	t.Get(name).Add(d)
	t.Total.Add(d)
}

// Merged is the rows summed in their order.
func (t *StatTable) Merged() Stat {
	var all Stat
	for _, r := range t.Rows {
		all.Merge(&r.Stat)
	}
	return all
}

// ByTotalDesc returns the rows sorted by total duration, largest first
// (ties keep their order), as every stats file and summary lists them.
func (t *StatTable) ByTotalDesc() []*NamedStat { return ByTotalDesc(t.Rows) }

// ByTotalDesc returns rows sorted by total duration, largest first (ties
// keep their order).
func ByTotalDesc(rows []*NamedStat) []*NamedStat {
	sorted := append([]*NamedStat(nil), rows...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Sum > sorted[j].Sum })
	return sorted
}

// RunStats are the statistics of a whole input, by domain, as the
// summaries and JSON's summary block count them.
type RunStats [NumDomains]StatTable

// AddRecord adds the reader's current record to the statistics.
func (st *RunStats) AddRecord(p *Catalogue, r *SpoolView) {
	switch r.Kind() {
	case tracing.KindHIPAPI:
		a := r.APICall()
		st[DomHIP].add(p.FuncName(a.Domain, a.Function), SpanClamped(a.Start, a.End))
	case tracing.KindHSAAPI:
		a := r.APICall()
		st[DomHSA].add(p.FuncName(a.Domain, a.Function), SpanClamped(a.Start, a.End))
	case tracing.KindRCCLAPI:
		a := r.APICall()
		st[DomRCCL].add(p.FuncName(a.Domain, a.Function), SpanClamped(a.Start, a.End))
	case tracing.KindMarker:
		m := r.Marker()
		st[DomMarker].add(MarkerName(&m), SpanClamped(m.Start, m.End))
	case tracing.KindKernelDispatch:
		d := r.KernelDispatch()
		st[DomKernel].add(p.DispatchName(&d), SpanClamped(d.Start, d.End))
	case tracing.KindMemoryCopy:
		c := r.MemoryCopy()
		st[DomCopy].add(c.Direction.String(), SpanClamped(c.Start, c.End))
	case tracing.KindMemoryAllocation:
		a := r.MemoryAllocation()
		st[DomAlloc].add(a.Operation.String(), SpanClamped(a.Start, a.End))
	case tracing.KindScratchMemory:
		s := r.ScratchMemory()
		st[DomScratch].add(s.Operation.String(), SpanClamped(s.Start, s.End))
	}
}

// CollectStats reads every spool of the input once.
func CollectStats(in *Input) (*RunStats, error) {
	st := &RunStats{}
	err := in.OpenEach(func(p *Catalogue, r *SpoolView) error {
		for r.Next() {
			st.AddRecord(p, r)
		}
		return nil
	})
	return st, err
}
