package csv

import "github.com/rocprof-go/rocprof-go/internal/output/model"

// writeStats writes rows sorted by total duration, largest first.
func writeStats(f *csvFile, rows []*model.NamedStat) {
	sorted := model.ByTotalDesc(rows)
	var grand float64
	for _, r := range sorted {
		grand += float64(r.Sum)
	}
	for _, r := range sorted {
		b := f.begin()
		b = appendQuoted(b, r.Name)
		b = append(b, ',')
		b = appendUint(b, r.Count)
		b = appendUint(b, r.Sum)
		b = appendStatsFloat(b, r.Mean())
		b = append(b, ',')
		pct := 0.0
		if grand > 0 {
			pct = 100 * float64(r.Sum) / grand
		}
		b = appendPercentage(b, pct)
		b = append(b, ',')
		b = appendUint(b, r.Min)
		b = appendUint(b, r.Max)
		b = appendStatsFloat(b, r.StdDev())
		f.end(b)
	}
}
