package output

import (
	"sort"
)

// csvStat is one stats row: a name and the running statistics of its
// durations (the same accumulator the summaries use).
type csvStat struct {
	name string
	stat
}

// add counts one record; the duration is unsigned, as rocprofv3 computes it.
func (s *csvStat) add(start, end uint64) { s.stat.add(end - start) }

func (s *csvStat) merge(o *csvStat) { s.stat.merge(&o.stat) }

func (s *csvStat) mean() float64 { return s.Mean() }

// stdDev is the sample standard deviation (n-1), 0 below two calls.
func (s *csvStat) stdDev() float64 { return s.StdDev() }

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

// byTotalDesc returns rows sorted by total duration, largest first (ties
// keep their order), as both the stats and the v1 stats files list them.
func byTotalDesc(rows []*csvStat) []*csvStat {
	sorted := append([]*csvStat(nil), rows...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Sum > sorted[j].Sum })
	return sorted
}

// writeStats writes rows sorted by total duration, largest first.
func writeStats(f *csvFile, rows []*csvStat) {
	sorted := byTotalDesc(rows)
	var grand float64
	for _, r := range sorted {
		grand += float64(r.Sum)
	}
	for _, r := range sorted {
		b := f.begin()
		b = appendQuoted(b, r.name)
		b = append(b, ',')
		b = appendUint(b, r.Count)
		b = appendUint(b, r.Sum)
		b = appendStatsFloat(b, r.mean())
		b = append(b, ',')
		pct := 0.0
		if grand > 0 {
			pct = 100 * float64(r.Sum) / grand
		}
		b = appendPercentage(b, pct)
		b = append(b, ',')
		b = appendUint(b, r.Min)
		b = appendUint(b, r.Max)
		b = appendStatsFloat(b, r.stdDev())
		f.end(b)
	}
}
