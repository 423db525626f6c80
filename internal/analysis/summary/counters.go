package summary

import (
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/analysis"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
	"github.com/rocprof-go/rocprof-go/internal/output/model"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
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

// counterRows reads the counter values of the inputs (ROCpd databases,
// and the counter_collection.csv files beside a CSV run's trace files) and
// returns one row per kernel and counter: kernels in the order of
// kernelOrder (the kernel table, longest total first; kernels it lacks
// after them by name), each kernel's counters by name.
func counterRows(inputs []string, kernelOrder []Row) ([]CounterRow, error) {
	rows := map[counterKey]*CounterRow{}
	add := func(kernel, counter string, v float64) {
		kernel, counter = model.ValidString(kernel), model.ValidString(counter) // as the events' names
		k := counterKey{kernel, counter}
		r := rows[k]
		if r == nil {
			r = &CounterRow{Kernel: kernel, Counter: counter, Min: math.Inf(1), Max: math.Inf(-1)}
			rows[k] = r
		}
		r.Dispatches++
		r.Total += v
		r.Min = min(r.Min, v)
		r.Max = max(r.Max, v)
	}
	for _, in := range inputs {
		src, err := analysis.Resolve(in)
		if err != nil {
			return nil, err
		}
		for _, p := range src.Databases {
			db, err := rocpdread.Open(p)
			if err != nil {
				return nil, err
			}
			err = db.CounterSums(func(info *rocpdread.Info, d *rocpdread.Dispatch, counter string, v float64) error {
				add(info.Symbol(d.KernelID).Name(), counter, v)
				return nil
			})
			db.Close()
			if err != nil {
				return nil, err
			}
		}
		for _, p := range counterCSVFiles(src.CSVFiles) {
			if err := readCounterCSV(p, add); err != nil {
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

// traceSuffixes end the trace CSV files' names; the part before is the
// file prefix a process's counter_collection.csv shares.
var traceSuffixes = []string{"kernel_trace.csv", "hip_api_trace.csv", "hsa_api_trace.csv", "marker_api_trace.csv",
	"memory_copy_trace.csv", "memory_allocation_trace.csv", "scratch_memory_trace.csv", "rccl_api_trace.csv",
	"rocdecode_api_trace.csv", "rocjpeg_api_trace.csv"}

// counterCSVFiles returns the counter_collection.csv files that exist
// beside a run's trace CSV files (same prefix), once each.
func counterCSVFiles(traces []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range traces {
		for _, suf := range traceSuffixes {
			if !strings.HasSuffix(f, suf) {
				continue
			}
			p := strings.TrimSuffix(f, suf) + "counter_collection.csv"
			if seen[p] {
				break
			}
			seen[p] = true
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				out = append(out, p)
			}
			break
		}
	}
	sort.Strings(out)
	return out
}

// readCounterCSV reads rocprofv3's counter_collection.csv: one row per
// dispatch and counter, the value already summed over instances.
func readCounterCSV(path string, add func(kernel, counter string, v float64)) error {
	f, err := atomicfile.OpenInput(path) // a FIFO is refused, not waited on
	if err != nil {
		return err
	}
	defer f.Close()
	// rocprofv3's quoting: a kernel name's quotes are not escaped
	// (analysis.CSVReader), which encoding/csv rejects.
	r := analysis.NewCSVReader(f)
	head, err := r.Header()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	kernel, okK := col["Kernel_Name"]
	name, okN := col["Counter_Name"]
	value, okV := col["Counter_Value"]
	if !okK || !okN || !okV {
		return fmt.Errorf("%s: not a counter_collection.csv (no Kernel_Name, Counter_Name and Counter_Value columns)", path)
	}
	for line := 2; ; line++ {
		rec, err := r.Row(len(head), kernel)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(rec) != len(head) {
			return fmt.Errorf("%s line %d: %d fields, header has %d", path, line, len(rec), len(head))
		}
		v, err := strconv.ParseFloat(rec[value], 64)
		if err != nil {
			return fmt.Errorf("%s line %d: Counter_Value %q is not a number", path, line, rec[value])
		}
		add(rec[kernel], rec[name], v)
	}
}
