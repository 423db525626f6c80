package csv

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
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
// from the same spool records as rocprofv3's CSV files. v1 ran the app once
// per pmc: line and merged the passes into one results.csv by dispatch
// number: WriteV1 does the same from every pass's spools, after the last.

// v1Columns are results.csv's leading columns: the dispatch properties
// rocprof 5.2.3's tool (test/tool/tool.cpp, dump_context_entry) printed for
// every dispatch, in its order, which tblextr.py's parse_res keeps.
var v1Columns = []string{"Index", "KernelName", "gpu-id", "queue-id", "queue-index", "pid", "tid",
	"grd", "wgr", "lds", "scr", "vgpr", "sgpr", "fbar", "sig", "obj"}

// v1TimeColumns follow the counter columns.
var v1TimeColumns = []string{"DispatchNs", "BeginNs", "EndNs", "CompleteNs"}

// v1StatsColumns are the columns of every v1 *stats.csv.
var v1StatsColumns = []string{"Name", "Calls", "TotalDurationNs", "AverageNs", "Percentage"}

// V1Pass is one pass of a run, for WriteV1: its output configuration (each
// process's v1 path is Dir joined with its resolved prefix) and its spools.
type V1Pass struct {
	Config   model.Config
	SpoolDir string
}

// v1Key identifies a dispatch across passes: the process's place among the
// processes writing the same results.csv (by start time; pids differ from
// pass to pass) and v1's Index.
type v1Key struct {
	proc  int
	index uint64
}

// v1Row is one results.csv row: the dispatch as its first pass recorded it,
// and the counters of every pass.
type v1Row struct {
	key                v1Key
	name               string
	gpu, queue, qindex uint64
	pid, tid           uint32
	grd, wgr, lds, scr uint64
	vgpr, sgpr         uint32 // as v1 computed them (v1Registers)
	obj                uint64
	start, end         uint64
	counters           []v1Value
}

// v1Value is one counter of a row: its results.csv column and value.
type v1Value struct {
	column int
	value  float64
}

// v1Set is the v1 files of one path: results.csv and its stats.
type v1Set struct {
	path     string // results.csv itself: the resolved -o
	fs       model.FileSystem
	withStat bool // v1's GEN_STATS: the database-backed layout (quoted header, DurationNs) and stats files
	rows     map[v1Key]*v1Row
	counters []v1Counter // columns, in collection order (write sorts them by rank)
	column   map[string]int
	// rank orders counter columns as v1's var_list did: by first mention in
	// the passes' pmc: lines, pass by pass.
	rank    map[string]int
	bytes   uint64 // raw bytes of the stats pass, for --minimum-output-data
	minimum uint64
	hip     model.StatTable
	hsa     model.StatTable
	copies  model.StatTable
	// statsPass is the pass whose HIP/HSA calls and copies the stats count:
	// every pass runs the same app, so counting them all would multiply them.
	statsPass int
}

type v1Counter struct {
	id   uint64
	name string
}

// v1Unranked places a counter no pmc: line names after those that are.
const v1Unranked = 1 << 30

// WriteV1 writes rocprof v1's files for every path -o NAME.csv resolves to,
// from the spools of every pass of the run (call it after the last pass,
// before the spools are removed). As v1 merged its passes, results.csv has
// one row per dispatch, in Index order (v1's dispatch number, from 0, per
// process), with a column for every counter of every pass; the stats files
// count the first pass's calls and copies and every dispatch once.
func WriteV1(passes []V1Pass) (*model.Result, error) {
	res := &model.Result{}
	sets := map[string]*v1Set{}
	var order []*v1Set
	for pi := range passes {
		cfg := passes[pi].Config
		if !cfg.V1Enabled() || model.IsStreamName(cfg.PrefixTemplate) {
			continue
		}
		if cfg.FS == nil {
			cfg.FS = model.OSFS{}
		}
		paths, err := tracing.List(passes[pi].SpoolDir)
		if err != nil {
			return res, err
		}
		// The processes of each path, by start time: the k-th process of
		// one pass is the k-th of the others.
		type proc struct {
			path string
			info tracing.ProcessInfo
		}
		byPath := map[string][]proc{}
		var pathOrder []string
		for _, sp := range paths {
			r, err := tracing.Open(sp)
			if err != nil {
				if errors.Is(err, tracing.ErrNotSpool) {
					continue // Write lists it in Result.Skipped
				}
				return res, err
			}
			info := r.Process()
			_ = r.Close()
			v1 := filepath.Join(cfg.Dir, cfg.PrefixOf(info))
			if !strings.HasSuffix(strings.ToLower(v1), ".csv") {
				continue
			}
			if _, ok := byPath[v1]; !ok {
				pathOrder = append(pathOrder, v1)
			}
			byPath[v1] = append(byPath[v1], proc{sp, info})
		}
		for _, v1 := range pathOrder {
			s := sets[v1]
			if s == nil {
				s = &v1Set{path: v1, fs: cfg.FS, withStat: cfg.V1Stats, rows: map[v1Key]*v1Row{},
					column: map[string]int{}, rank: map[string]int{}, minimum: cfg.MinimumOutputBytes,
					statsPass: pi}
				sets[v1] = s
				order = append(order, s)
			}
			for _, name := range cfg.V1Counters {
				if _, ok := s.rank[name]; !ok {
					s.rank[name] = len(s.rank)
				}
			}
			procs := byPath[v1]
			sort.SliceStable(procs, func(i, j int) bool {
				if procs[i].info.StartBoottimeNs != procs[j].info.StartBoottimeNs {
					return procs[i].info.StartBoottimeNs < procs[j].info.StartBoottimeNs
				}
				return procs[i].info.PID < procs[j].info.PID
			})
			for k, p := range procs {
				if err := s.readProcess(&cfg, pi, k, p.path); err != nil {
					return res, err
				}
			}
		}
	}
	var firstErr error
	for _, s := range order {
		if s.bytes == 0 || s.bytes < s.minimum {
			continue // nothing recorded, or less than --minimum-output-data
		}
		if err := s.write(res); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return res, firstErr
}

// readProcess adds one process of pass pi (the proc-th writing this path)
// to the set: its dispatches and counters, and in the stats pass its calls
// and copies.
func (s *v1Set) readProcess(cfg *model.Config, pi, proc int, path string) error {
	r, err := tracing.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	cat, err := model.Scan(r, cfg, model.NeedNames|model.NeedCounterSums)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	p := newCSVProcess(cat)
	stats := pi == s.statsPass
	if stats {
		for _, b := range p.Bytes {
			s.bytes += b
		}
	}
	r.Rewind()
	for r.Next() {
		switch r.Kind() {
		case tracing.KindKernelDispatch:
			d := r.KernelDispatch()
			s.dispatch(p, proc, &d)
		case tracing.KindHIPAPI, tracing.KindHSAAPI:
			if !stats {
				continue
			}
			a := r.APICall()
			t := &s.hip
			if r.Kind() == tracing.KindHSAAPI {
				t = &s.hsa
			}
			t.Get(p.FuncName(a.Domain, a.Function)).Add(model.SpanUnsigned(a.Start, a.End))
		case tracing.KindMemoryCopy:
			if stats {
				c := r.MemoryCopy()
				s.copies.Get(v1CopyName(c.Direction)).Add(model.SpanUnsigned(c.Start, c.End))
			}
		}
	}
	return nil
}

// dispatch adds a dispatch's row, or its counters to the row an earlier
// pass made.
func (s *v1Set) dispatch(p *csvProcess, proc int, d *tracing.KernelDispatch) {
	key := v1Key{proc, d.DispatchID - min(d.DispatchID, 1)} // v1 counted dispatches from 0
	row := s.rows[key]
	if row == nil {
		k := p.kernel(d.KernelID, d)
		// v1 numbered queues from 0 in creation order (InterceptQueue's
		// counter), rocprof-go's queue ids count from 1; its lds is the
		// packet's group segment (static and dynamic), rounded to 512.
		row = &v1Row{key: key, name: p.Renamer.Name(d.TID, d.CorrelationID, k.name),
			queue: d.QueueID - min(d.QueueID, 1), qindex: uint64(d.PacketIndex),
			pid: uint32(p.Info.PID), tid: d.TID,
			grd: uint64(d.Grid[0]) * uint64(d.Grid[1]) * uint64(d.Grid[2]),
			wgr: uint64(d.Workgroup[0]) * uint64(d.Workgroup[1]) * uint64(d.Workgroup[2]),
			lds: model.RoundUp(uint64(d.GroupSegmentSize), 512), scr: uint64(d.PrivateSegmentSize),
			obj: k.object, start: d.Start, end: d.End}
		arch := ""
		if a := p.Agent(d.AgentNode); a != nil {
			row.gpu = a.TypeIndex()
			arch = a.Name
		}
		row.vgpr, row.sgpr = v1Registers(arch, k.vgpr, k.agpr, k.sgpr)
		s.rows[key] = row
	}
	for _, c := range p.CounterSums[d.DispatchID] {
		col, ok := s.column[c.Name]
		if !ok {
			col = len(s.counters)
			s.column[c.Name] = col
			s.counters = append(s.counters, v1Counter{c.ID, c.Name})
		}
		row.counters = append(row.counters, v1Value{col, c.Value})
	}
}

// v1Registers are the vgpr and sgpr v1 printed, from the counts rocprof-go
// records (rocprofv3's). rocprof 5.2.3 computed them from the descriptor's
// granulated fields: vgpr = (granulated VGPRs + 1) × 4 and sgpr =
// (granulated SGPRs + 2) × 8 (+ 1 on gfx8; hsa_rsrc_factory.cpp), whatever
// the architecture's real granules. So a gfx90a/gfx94x kernel (VGPR granule
// 8, AGPRs in the same allocation) shows half its registers, a gfx9 kernel 8
// SGPRs more than it has, and a gfx10+ kernel (whose SGPR field is unused)
// 16 SGPRs. From rocprofv3's counts: on gfx90a/gfx94x/gfx95x arch + accum
// VGPRs is the whole allocation ((field + 1) × 8), so exact; gfx908's accum
// count mirrors its arch count; rocprofv3's gfx9 SGPR count (field / 2 + 1)
// × 16 leaves the field's low bit unknown, taken as set (16 SGPRs read as
// field 1, v1's 24). Wave32 kernels on gfx10+ (VGPR granule 8) are taken as
// wave64: the spool does not say which they are.
func v1Registers(arch string, vgpr, agpr, sgpr uint32) (uint32, uint32) {
	v1vgpr := vgpr
	if strings.HasPrefix(arch, "gfx90a") || strings.HasPrefix(arch, "gfx94") || strings.HasPrefix(arch, "gfx95") {
		v1vgpr = (vgpr + agpr) / 2
	}
	switch {
	case strings.HasPrefix(arch, "gfx8"):
		return v1vgpr, sgpr
	case strings.HasPrefix(arch, "gfx9"):
		return v1vgpr, sgpr + 8
	case arch == "":
		return v1vgpr, sgpr
	}
	return v1vgpr, 16
}

// write writes results.csv, rows in (process, Index) order as v1 sorted
// them, and the stats files.
func (s *v1Set) write(res *model.Result) error {
	// Counter columns as v1's var_list had them: in the order the passes'
	// pmc: lines named them (counter ids, then names, for any other).
	perm := make([]int, len(s.counters))
	for i := range perm {
		perm[i] = i
	}
	rank := func(c v1Counter) int {
		if r, ok := s.rank[c.name]; ok {
			return r
		}
		return v1Unranked
	}
	sort.SliceStable(perm, func(i, j int) bool {
		a, b := s.counters[perm[i]], s.counters[perm[j]]
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		if a.id != b.id {
			return a.id < b.id
		}
		return a.name < b.name
	})
	place := make([]int, len(perm)) // collection order -> column
	header := append([]string(nil), v1Columns...)
	for c, i := range perm {
		place[i] = c
		header = append(header, s.counters[i].name)
	}
	header = append(header, v1TimeColumns...)
	if s.withStat {
		header = append(header, "DurationNs")
	}
	rows := make([]*v1Row, 0, len(s.rows))
	for _, r := range s.rows {
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].key.proc != rows[j].key.proc {
			return rows[i].key.proc < rows[j].key.proc
		}
		return rows[i].key.index < rows[j].key.index
	})
	f := &csvFile{fs: s.fs, path: s.path, name: "results", domain: "KERNEL_DISPATCH",
		header: header, plain: !s.withStat}
	var kernels model.StatTable
	values := make([]float64, len(perm))
	have := make([]bool, len(perm))
	for _, r := range rows {
		kernels.Get(r.name).Add(model.SpanUnsigned(r.start, r.end))
		clear(have)
		for _, v := range r.counters {
			values[place[v.column]], have[place[v.column]] = v.value, true
		}
		s.writeRow(f, r, values, have)
	}
	return s.finish(f, &kernels, res)
}

// writeRow writes one results.csv row.
func (s *v1Set) writeRow(f *csvFile, r *v1Row, values []float64, have []bool) {
	b := f.begin()
	b = appendUint(b, r.key.index)
	b = appendQuoted(b, r.name)
	b = append(b, ',')
	b = appendUint(b, r.gpu)
	b = appendUint(b, r.queue)
	b = appendUint(b, r.qindex) // the packet's slot in the app's queue, v1's user_que_idx
	b = appendUint(b, uint64(r.pid))
	b = appendUint(b, uint64(r.tid))
	b = appendUint(b, r.grd)
	b = appendUint(b, r.wgr)
	b = appendUint(b, r.lds)
	b = appendUint(b, r.scr)
	b = appendUint(b, uint64(r.vgpr))
	b = appendUint(b, uint64(r.sgpr))
	// fbar: amd_kernel_code_t's workgroup_fbarrier_count, which code objects
	// v3 and later do not have (v1 read past their descriptor): 0.
	b = appendUint(b, 0)
	// sig (the app's completion signal) is not recorded: 0x0; obj is the
	// kernel object. Hex strings, which v1's SQLite kept as text (quoted).
	q := s.withStat
	b = appendV1Hex(b, 0, q)
	b = append(b, ',')
	b = appendV1Hex(b, r.obj, q)
	b = append(b, ',')
	for i := range values {
		if have[i] {
			if s.withStat {
				b = appendV1DBCounter(b, values[i])
			} else {
				b = appendV1Counter(b, values[i])
			}
		} else {
			b = append(b, "None"...) // v1's cell for a counter the dispatch lacks
		}
		b = append(b, ',')
	}
	// Dispatch and completion times are not recorded apart from the
	// kernel's start and end.
	b = appendUint(b, r.start)
	b = appendUint(b, r.start)
	b = appendUint(b, r.end)
	if s.withStat {
		b = appendUint(b, r.end)
		b = appendDecimal(b, r.end-r.start)
	} else {
		b = appendDecimal(b, r.end)
	}
	f.end(b)
}

// appendV1Hex prints a handle as v1's tool did (0x%lx), quoted when v1's
// SQLite path wrote it.
func appendV1Hex(b []byte, v uint64, quoted bool) []byte {
	if quoted {
		b = append(b, '"')
	}
	b = append(b, "0x"...)
	b = strconv.AppendUint(b, v, 16)
	if quoted {
		b = append(b, '"')
	}
	return b
}

// appendV1DBCounter prints a counter as v1's SQLite path did: the text
// stored in an INTEGER column, so an integral value as an integer, any
// other as Python prints the REAL SQLite made of it.
func appendV1DBCounter(b []byte, v float64) []byte {
	if v == math.Trunc(v) && math.Abs(v) < 1<<63 {
		return strconv.AppendInt(b, int64(v), 10)
	}
	return appendPythonFloat(b, v)
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

// finish closes results.csv and writes the stats files, listing what it
// wrote.
func (s *v1Set) finish(results *csvFile, kernels *model.StatTable, res *model.Result) error {
	var firstErr error
	keep := func(f *csvFile) {
		if err := f.close(); err != nil && firstErr == nil {
			firstErr = err
		}
		if f.created() {
			res.Files = append(res.Files, model.File{Path: f.path, Format: model.FormatCSV, Name: f.name, Domain: f.domain,
				Records: f.rows, Bytes: f.bytes})
		}
	}
	keep(results)
	if !s.withStat {
		return firstErr // v1 wrote stats files only with GEN_STATS
	}
	for _, t := range []struct {
		table  *model.StatTable
		suffix string
		domain string
	}{
		{kernels, "stats.csv", "KERNEL_DISPATCH"},
		{&s.hip, "hip_stats.csv", "HIP_API"},
		{&s.hsa, "hsa_stats.csv", "HSA_API"},
		{&s.copies, "copy_stats.csv", "MEMORY_COPY"},
	} {
		if len(t.table.Rows) == 0 {
			continue
		}
		f := &csvFile{fs: s.fs, path: s.siblingPath(t.suffix), domain: t.domain,
			name: "results." + strings.TrimSuffix(t.suffix, ".csv"), header: v1StatsColumns}
		writeV1Stats(f, t.table.Rows)
		keep(f)
	}
	return firstErr
}

// siblingPath is "<path without .csv>.<suffix>", e.g. results.stats.csv.
func (s *v1Set) siblingPath(suffix string) string {
	return s.path[:len(s.path)-len(".csv")] + "." + suffix
}

// writeV1Stats writes v1's stats rows: by total time, largest first; the
// average is an integer division (v1 computed it in SQLite); the percentage
// prints as Python prints a float.
func writeV1Stats(f *csvFile, rows []*model.NamedStat) {
	sorted := model.ByTotalDesc(rows)
	var grand uint64
	for _, r := range sorted {
		grand += r.Sum
	}
	for _, r := range sorted {
		b := f.begin()
		b = appendQuoted(b, r.Name)
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
