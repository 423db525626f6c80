package output

import (
	"math"
	"sort"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

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

func (s *stat) StdDev() float64 { return math.Sqrt(s.Variance()) }

// domainStats is one domain's statistics by key, in first-seen order.
type domainStats struct {
	Total stat
	keys  map[string]*stat
	order []string
}

func (d *domainStats) add(key string, dur uint64) {
	if d.keys == nil {
		d.keys = map[string]*stat{}
	}
	s := d.keys[key]
	if s == nil {
		s = &stat{}
		d.keys[key] = s
		d.order = append(d.order, key)
	}
	s.add(dur)
	d.Total.add(dur)
}

// sorted returns the keys by total duration, largest first.
func (d *domainStats) sorted() []string {
	out := append([]string(nil), d.order...)
	sort.SliceStable(out, func(i, j int) bool { return d.keys[out[i]].Sum > d.keys[out[j]].Sum })
	return out
}

// runStats are the statistics of a whole input.
type runStats [numDomains]domainStats

func dur(s, e uint64) uint64 {
	if e < s {
		return 0
	}
	return e - s
}

// addRecord adds the reader's current record to the statistics.
func (st *runStats) addRecord(p *process, r *spoolView) {
	switch r.Kind() {
	case tracing.KindHIPAPI:
		a := r.APICall()
		st[domHIP].add(p.funcName(a.Domain, a.Function), dur(a.Start, a.End))
	case tracing.KindHSAAPI:
		a := r.APICall()
		st[domHSA].add(p.funcName(a.Domain, a.Function), dur(a.Start, a.End))
	case tracing.KindRCCLAPI:
		a := r.APICall()
		st[domRCCL].add(p.funcName(a.Domain, a.Function), dur(a.Start, a.End))
	case tracing.KindMarker:
		m := r.Marker()
		st[domMarker].add(markerName(&m), dur(m.Start, m.End))
	case tracing.KindKernelDispatch:
		d := r.KernelDispatch()
		st[domKernel].add(p.dispatchName(&d), dur(d.Start, d.End))
	case tracing.KindMemoryCopy:
		c := r.MemoryCopy()
		st[domCopy].add(c.Direction.String(), dur(c.Start, c.End))
	case tracing.KindMemoryAllocation:
		a := r.MemoryAllocation()
		st[domAlloc].add(a.Operation.String(), dur(a.Start, a.End))
	case tracing.KindScratchMemory:
		s := r.ScratchMemory()
		st[domScratch].add(s.Operation.String(), dur(s.Start, s.End))
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
