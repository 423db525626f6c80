package output

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// rocprof v1 compatibility. When -o names a ".csv" file, rocprof v1 (the
// ROCm 5 `rocprof` script) wrote, next to it:
//
//	results.csv             one row per kernel dispatch (+ one column per counter)
//	results.stats.csv       kernels by name
//	results.hip_stats.csv   HIP API calls by function
//	results.hsa_stats.csv   HSA API calls by function
//	results.copy_stats.csv  memory copies by kind
//
// The columns are v1's (see docs/outputs.md for the sources); the values come
// from the same spool records as rocprofv3's CSV files.

// v1Columns are results.csv's leading columns: the dispatch properties v1's
// tool printed for every dispatch, in its order.
var v1Columns = []string{"Index", "KernelName", "gpu-id", "queue-id", "queue-index", "pid", "tid",
	"grd", "wgr", "lds", "scr", "arch_vgpr", "accum_vgpr", "sgpr", "wave_size", "sig", "obj"}

// v1TimeColumns follow the counter columns.
var v1TimeColumns = []string{"DispatchNs", "BeginNs", "EndNs", "CompleteNs"}

// v1StatsColumns are the columns of every v1 *stats.csv.
var v1StatsColumns = []string{"Name", "Calls", "TotalDurationNs", "AverageNs", "Percentage"}

// v1WaveFrontSize is the Wave_Front_Size agent property (agent_info.csv's
// twelfth column).
const v1WaveFrontSize = 11

// v1Enabled reports whether -o asks for rocprof v1's files.
func (c *Config) v1Enabled() bool {
	return strings.HasSuffix(strings.ToLower(c.PrefixTemplate), ".csv")
}

// v1Set is one output group's v1 files.
type v1Set struct {
	path     string // results.csv itself: the resolved -o
	withStat bool   // --stats: v1's database-backed layout (quoted header, DurationNs)
	counters []string
	column   map[string]int
	results  *csvFile
	kernels  csvStatTable
	hip      csvStatTable
	hsa      csvStatTable
	copies   csvStatTable
	values   []float64
	have     []bool
}

// newV1Set prepares the v1 files of a group whose resolved prefix is path;
// counter columns are every counter the group's processes collected, in
// counter id order.
func newV1Set(cfg *Config, path string, procs []*csvProcess) *v1Set {
	if !strings.HasSuffix(strings.ToLower(path), ".csv") {
		return nil
	}
	s := &v1Set{path: path, withStat: cfg.Stats, column: map[string]int{}}
	type named struct {
		id   uint64
		name string
	}
	var all []named
	for _, p := range procs {
		for _, sums := range p.counters {
			for _, c := range sums {
				if _, ok := s.column[c.name]; !ok {
					s.column[c.name] = -1
					all = append(all, named{c.id, c.name})
				}
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].id != all[j].id {
			return all[i].id < all[j].id
		}
		return all[i].name < all[j].name
	})
	for i, c := range all {
		s.counters = append(s.counters, c.name)
		s.column[c.name] = i
	}
	s.values = make([]float64, len(all))
	s.have = make([]bool, len(all))
	header := append(append(append([]string(nil), v1Columns...), s.counters...), v1TimeColumns...)
	if s.withStat {
		header = append(header, "DurationNs")
	}
	s.results = &csvFile{fs: cfg.FS, path: path, name: "results", domain: "KERNEL_DISPATCH",
		header: header, plain: !s.withStat}
	return s
}

// siblingPath is "<path without .csv>.<suffix>", e.g. results.stats.csv.
func (s *v1Set) siblingPath(suffix string) string {
	return s.path[:len(s.path)-len(".csv")] + "." + suffix
}

// dispatch writes one results.csv row and counts the kernel.
func (s *v1Set) dispatch(p *csvProcess, d *tracing.KernelDispatch, k *csvKernel, name string,
	sums []csvCounterSum) {
	s.kernels.get(name).add(d.Start, d.End)
	var gpu, wave uint64
	if a, ok := p.agents[d.AgentNode]; ok {
		gpu = a.TypeIndex()
		wave = a.Values[v1WaveFrontSize]
	}
	b := s.results.begin()
	b = appendUint(b, d.DispatchID-min(d.DispatchID, 1)) // v1 counted dispatches from 0
	b = appendQuoted(b, name)
	b = append(b, ',')
	b = appendUint(b, gpu)
	b = appendUint(b, d.QueueID)
	b = appendUint(b, 0) // queue-index: the packet slot, not recorded
	b = appendUint(b, uint64(uint32(p.info.PID)))
	b = appendUint(b, uint64(d.TID))
	b = appendUint(b, uint64(d.Grid[0])*uint64(d.Grid[1])*uint64(d.Grid[2]))
	b = appendUint(b, uint64(d.Workgroup[0])*uint64(d.Workgroup[1])*uint64(d.Workgroup[2]))
	b = appendUint(b, k.ldsBlockSize)
	b = appendUint(b, uint64(d.PrivateSegmentSize))
	b = appendUint(b, uint64(k.vgpr))
	b = appendUint(b, uint64(k.agpr))
	b = appendUint(b, uint64(k.sgpr))
	b = appendUint(b, wave)
	// sig and obj (completion signal and kernel object handles) are not
	// recorded: zero, in v1's hexadecimal form.
	if s.withStat {
		b = append(b, `"0x0","0x0",`...)
	} else {
		b = append(b, "0x0,0x0,"...)
	}
	if len(s.counters) > 0 {
		clear(s.have)
		for _, c := range sums {
			if i := s.column[c.name]; i >= 0 {
				s.values[i], s.have[i] = c.value, true
			}
		}
		for i := range s.counters {
			if s.have[i] {
				b = appendV1Counter(b, s.values[i])
			} else {
				b = append(b, "None"...) // v1's cell for a counter the dispatch lacks
			}
			b = append(b, ',')
		}
	}
	// Dispatch and completion times are not recorded apart from the
	// kernel's start and end.
	b = appendUint(b, d.Start)
	b = appendUint(b, d.Start)
	b = appendUint(b, d.End)
	if s.withStat {
		b = appendUint(b, d.End)
		b = appendDecimal(b, d.End-d.Start)
	} else {
		b = appendDecimal(b, d.End)
	}
	s.results.end(b)
}

// appendV1Counter prints a counter as v1 did: integers bare, fractions with
// ten decimals.
func appendV1Counter(b []byte, v float64) []byte {
	if v == math.Trunc(v) && math.Abs(v) < 1<<63 {
		return strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendFloat(b, v, 'f', 10, 64)
}

// v1CopyName is the name v1's HIP activity trace gave a copy of a direction.
func v1CopyName(d tracing.CopyDirection) string {
	switch d {
	case tracing.CopyHostToDevice:
		return "CopyHostToDevice"
	case tracing.CopyDeviceToHost:
		return "CopyDeviceToHost"
	case tracing.CopyDeviceToDevice:
		return "CopyDeviceToDevice"
	case tracing.CopyHostToHost:
		return "CopyHostToHost"
	}
	return "Copy"
}

// finish writes the stats files and closes results.csv, listing what it wrote.
func (s *v1Set) finish(fs FileSystem, res *Result) error {
	var firstErr error
	keep := func(f *csvFile) {
		if err := f.close(); err != nil && firstErr == nil {
			firstErr = err
		}
		if f.created() {
			res.Files = append(res.Files, File{Path: f.path, Name: f.name, Domain: f.domain,
				Records: f.rows, Bytes: f.bytes})
		}
	}
	keep(s.results)
	for _, t := range []struct {
		table  *csvStatTable
		suffix string
		domain string
	}{
		{&s.kernels, "stats.csv", "KERNEL_DISPATCH"},
		{&s.hip, "hip_stats.csv", "HIP_API"},
		{&s.hsa, "hsa_stats.csv", "HSA_API"},
		{&s.copies, "copy_stats.csv", "MEMORY_COPY"},
	} {
		if len(t.table.rows) == 0 {
			continue
		}
		f := &csvFile{fs: fs, path: s.siblingPath(t.suffix), domain: t.domain,
			name: "results." + strings.TrimSuffix(t.suffix, ".csv"), header: v1StatsColumns}
		writeV1Stats(f, t.table.rows)
		keep(f)
	}
	return firstErr
}

// writeV1Stats writes v1's stats rows: by total time, largest first; the
// average is an integer division (v1 computed it in SQLite); the percentage
// prints as Python prints a float.
func writeV1Stats(f *csvFile, rows []*csvStat) {
	sorted := byTotalDesc(rows)
	var grand uint64
	for _, r := range sorted {
		grand += r.Sum
	}
	for _, r := range sorted {
		b := f.begin()
		b = appendQuoted(b, r.name)
		b = append(b, ',')
		b = appendUint(b, r.Count)
		b = appendUint(b, r.Sum)
		b = appendUint(b, r.Sum/max(r.Count, 1))
		pct := 0.0
		if grand > 0 {
			pct = float64(r.Sum) * 100.0 / float64(grand)
		}
		b = appendPythonFloat(b, pct)
		f.end(b)
	}
}

// appendPythonFloat formats like Python's repr(float): the shortest
// round-tripping digits, always with a decimal point or an exponent.
func appendPythonFloat(b []byte, v float64) []byte {
	if v == 0 {
		return append(b, "0.0"...)
	}
	exp := math.Floor(math.Log10(math.Abs(v)))
	if exp < -4 || exp >= 16 {
		s := strconv.FormatFloat(v, 'e', -1, 64) // 1e-05, 1.5e+16: Python's form
		return append(b, s...)
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	b = append(b, s...)
	if !strings.ContainsAny(s, ".") {
		b = append(b, ".0"...)
	}
	return b
}
