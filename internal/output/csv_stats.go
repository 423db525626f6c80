package output

import (
	"math"
	"sort"
)

// csvStat accumulates the durations of one stats row.
type csvStat struct {
	name     string
	calls    uint64
	total    uint64
	sumSq    float64
	min, max uint64
}

func (s *csvStat) add(start, end uint64) {
	d := end - start // unsigned, as rocprofv3 computes it
	if s.calls == 0 || d < s.min {
		s.min = d
	}
	if d > s.max {
		s.max = d
	}
	s.calls++
	s.total += d
	s.sumSq += float64(d) * float64(d)
}

func (s *csvStat) merge(o *csvStat) {
	if o.calls == 0 {
		return
	}
	if s.calls == 0 || o.min < s.min {
		s.min = o.min
	}
	if o.max > s.max {
		s.max = o.max
	}
	s.calls += o.calls
	s.total += o.total
	s.sumSq += o.sumSq
}

func (s *csvStat) mean() float64 {
	if s.calls == 0 {
		return 0
	}
	return float64(s.total) / float64(s.calls)
}

// stdDev is the sample standard deviation (n-1), 0 below two calls.
func (s *csvStat) stdDev() float64 {
	if s.calls < 2 {
		return 0
	}
	n := float64(s.calls)
	sum := float64(s.total)
	v := (s.sumSq - sum*sum/n) / (n - 1)
	if v <= 0 {
		return 0
	}
	return math.Sqrt(v)
}

// csvStatTable is one stats file's rows, keyed by name, in first-seen order.
type csvStatTable struct {
	index map[string]*csvStat
	rows  []*csvStat
}

func (t *csvStatTable) get(name string) *csvStat {
	if t.index == nil {
		t.index = map[string]*csvStat{}
	}
	s := t.index[name]
	if s == nil {
		s = &csvStat{name: name}
		t.index[name] = s
		t.rows = append(t.rows, s)
	}
	return s
}

func (t *csvStatTable) total() csvStat {
	var all csvStat
	for _, r := range t.rows {
		all.merge(r)
	}
	return all
}

// writeStats writes rows sorted by total duration, largest first.
func writeStats(f *csvFile, rows []*csvStat) {
	sorted := append([]*csvStat(nil), rows...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].total > sorted[j].total })
	var grand float64
	for _, r := range sorted {
		grand += float64(r.total)
	}
	for _, r := range sorted {
		b := f.begin()
		b = appendQuoted(b, r.name)
		b = append(b, ',')
		b = appendUint(b, r.calls)
		b = appendUint(b, r.total)
		b = appendStatsFloat(b, r.mean())
		b = append(b, ',')
		pct := 0.0
		if grand > 0 {
			pct = 100 * float64(r.total) / grand
		}
		b = appendPercentage(b, pct)
		b = append(b, ',')
		b = appendUint(b, r.min)
		b = appendUint(b, r.max)
		b = appendStatsFloat(b, r.stdDev())
		f.end(b)
	}
}
