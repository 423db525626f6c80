package summary

import (
	"math"
	"sort"

	"github.com/rocprof-go/rocprof-go/internal/analysis"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpd"
)

// CounterRow is one counter of one kernel over the dispatches that have
// it: each dispatch's value is the sum over the counter's dimension
// instances (as counter_collection.csv's Counter_Value), then the row
// sums, averages and bounds those per-dispatch values.
type CounterRow struct {
	Kernel     string  `json:"kernel"`
	Counter    string  `json:"counter"`
	Dispatches int64   `json:"dispatches"`
	Total      float64 `json:"total"`
	Average    float64 `json:"average"`
	Min        float64 `json:"min"`
	Max        float64 `json:"max"`
}

type counterKey struct{ kernel, counter string }

// counterRows reads the counter values of every ROCpd database among the
// inputs (CSV directories are not read for counters) and returns one row
// per kernel and counter: kernels in the order of kernelOrder (the kernel
// table, longest total first; kernels it lacks after them by name), each
// kernel's counters by name.
func counterRows(inputs []string, kernelOrder []Row) ([]CounterRow, error) {
	rows := map[counterKey]*CounterRow{}
	for _, in := range inputs {
		src, err := analysis.Resolve(in)
		if err != nil {
			return nil, err
		}
		for _, p := range src.Databases {
			db, err := rocpd.Open(p)
			if err != nil {
				return nil, err
			}
			err = db.CounterSums(func(info *rocpd.Info, d *rocpd.Dispatch, counter string, v float64) error {
				k := counterKey{info.Symbol(d.KernelID).Name(), counter}
				r := rows[k]
				if r == nil {
					r = &CounterRow{Kernel: k.kernel, Counter: counter, Min: math.Inf(1), Max: math.Inf(-1)}
					rows[k] = r
				}
				r.Dispatches++
				r.Total += v
				r.Min = min(r.Min, v)
				r.Max = max(r.Max, v)
				return nil
			})
			db.Close()
			if err != nil {
				return nil, err
			}
		}
	}
	rank := map[string]int{}
	for i, r := range kernelOrder {
		rank[r.Name] = i
	}
	out := make([]CounterRow, 0, len(rows))
	for _, r := range rows {
		r.Average = r.Total / float64(r.Dispatches)
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		ra, oka := rank[a.Kernel]
		rb, okb := rank[b.Kernel]
		switch {
		case oka != okb:
			return oka
		case oka && ra != rb:
			return ra < rb
		case a.Kernel != b.Kernel:
			return a.Kernel < b.Kernel
		}
		return a.Counter < b.Counter
	})
	return out, nil
}
