package output

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

// spanUnsigned is a record's duration as rocprofv3's CSV stats compute it:
// an unsigned difference, which wraps for a record that ended before it
// started.
func spanUnsigned(start, end uint64) uint64 { return end - start }

// spanClamped is a record's duration as the summaries compute it: zero for
// a record that ended before it started.
func spanClamped(start, end uint64) uint64 {
	if end < start {
		return 0
	}
	return end - start
}

// stat accumulates durations the way rocprofv3 does: running sum and sum of
// squares, sample standard deviation.
type stat struct {
	Count    uint64
	Sum      uint64
	Sqr      float64
	Min, Max uint64
}

func (s *stat) add(d uint64) {
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

func (s *stat) merge(o *stat) {
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
func (s *stat) Mean() float64 {
	if s.Count == 0 {
		return 0
	}
	return float64(s.Sum) / float64(s.Count)
}

// Variance is the sample variance (n − 1), 0 below two samples.
func (s *stat) Variance() float64 {
	if s.Count < 2 {
		return 0
	}
	n := float64(s.Count)
	v := (s.Sqr - float64(s.Sum)*float64(s.Sum)/n) / (n - 1)
	return math.Max(v, 0)
}

// StdDev is the sample standard deviation (n − 1), 0 below two samples.
func (s *stat) StdDev() float64 { return math.Sqrt(s.Variance()) }

// namedStat is one row of a table: a name (function, kernel, direction,
// operation) and its statistics.
type namedStat struct {
	name string
	stat
}

// statTable is one domain's statistics by name, in first-seen order.
type statTable struct {
	index map[string]*namedStat
	rows  []*namedStat
	// Total is the running total of every duration added through add, in
	// record order: the summaries' and JSON's domain line. domain_stats.csv
	// sums the rows instead (merged): the two sums of squares may differ in
	// their last bits, and each output keeps rocprofv3's.
	Total stat
}

// get returns the row of a name, made on first use.
func (t *statTable) get(name string) *namedStat {
	if t.index == nil {
		t.index = map[string]*namedStat{}
	}
	s := t.index[name]
	if s == nil {
		s = &namedStat{name: name}
		t.index[name] = s
		t.rows = append(t.rows, s)
	}
	return s
}

// add counts a duration in a name's row and in Total.
func (t *statTable) add(name string, d uint64) {
	t.get(name).add(d)
	t.Total.add(d)
}

// merged is the rows summed in their order.
func (t *statTable) merged() stat {
	var all stat
	for _, r := range t.rows {
		all.merge(&r.stat)
	}
	return all
}

// byTotalDesc returns the rows sorted by total duration, largest first
// (ties keep their order), as every stats file and summary lists them.
func (t *statTable) byTotalDesc() []*namedStat { return byTotalDesc(t.rows) }

func byTotalDesc(rows []*namedStat) []*namedStat {
	sorted := append([]*namedStat(nil), rows...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Sum > sorted[j].Sum })
	return sorted
}

// runStats are the statistics of a whole input, by domain, as the
// summaries and JSON's summary block count them.
type runStats [numDomains]statTable

// addRecord adds the reader's current record to the statistics.
func (st *runStats) addRecord(p *process, r *spoolView) {
	switch r.Kind() {
	case tracing.KindHIPAPI:
		a := r.APICall()
		st[domHIP].add(p.funcName(a.Domain, a.Function), spanClamped(a.Start, a.End))
	case tracing.KindHSAAPI:
		a := r.APICall()
		st[domHSA].add(p.funcName(a.Domain, a.Function), spanClamped(a.Start, a.End))
	case tracing.KindRCCLAPI:
		a := r.APICall()
		st[domRCCL].add(p.funcName(a.Domain, a.Function), spanClamped(a.Start, a.End))
	case tracing.KindMarker:
		m := r.Marker()
		st[domMarker].add(markerName(&m), spanClamped(m.Start, m.End))
	case tracing.KindKernelDispatch:
		d := r.KernelDispatch()
		st[domKernel].add(p.dispatchName(&d), spanClamped(d.Start, d.End))
	case tracing.KindMemoryCopy:
		c := r.MemoryCopy()
		st[domCopy].add(c.Direction.String(), spanClamped(c.Start, c.End))
	case tracing.KindMemoryAllocation:
		a := r.MemoryAllocation()
		st[domAlloc].add(a.Operation.String(), spanClamped(a.Start, a.End))
	case tracing.KindScratchMemory:
		s := r.ScratchMemory()
		st[domScratch].add(s.Operation.String(), spanClamped(s.Start, s.End))
	}
}

// collectStats reads every spool of the input once.
func collectStats(in *Input) (*runStats, error) {
	st := &runStats{}
	err := in.openEach(func(p *process, r *spoolView) error {
		for r.Next() {
			st.addRecord(p, r)
		}
		return nil
	})
	return st, err
}
