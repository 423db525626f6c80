package rocpdtest

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	_ "github.com/mattn/go-sqlite3" // the database/sql driver for ROCpd files
)

// Process is one profiled process: one uuid, one set of suffixed tables.
type Process struct {
	GUID     string // dashed uuid; required and unique per process
	PID      int64
	PPID     int64
	Hostname string
	Command  string
	Env      map[string]string // e.g. OMPI_COMM_WORLD_RANK
	Start    int64
	End      int64

	Dispatches []Dispatch
	APICalls   []APICall
	Markers    []Marker
	Copies     []Copy
	Allocs     []Alloc
	Counters   []Counter
}

// Counter is one counter's per-instance values for one dispatch.
type Counter struct {
	Dispatch int // index into Dispatches
	Name     string
	Values   []float64 // one rocpd_pmc_event row each
}

// Dispatch is one kernel dispatch on GPU agent 1 (logical index 1).
type Dispatch struct {
	Kernel     string // display name
	Mangled    string // raw symbol (kernel_name); "" = the display name
	TID        int64
	Queue      int64 // queue handle, 0 = default queue
	Stream     int64
	Start, End int64
	Grid       [3]int64
	Workgroup  [3]int64
	Corr       int64 // internal correlation id; 0 = assign one
}

// APICall is a HIP or HSA API call region.
type APICall struct {
	Category   string // e.g. HIP_RUNTIME_API_EXT, HSA_CORE_API
	Name       string // function name
	TID        int64
	Start, End int64
	Corr       int64
}

// Marker is a ROCTx range (Start != End, a region) or mark (a sample).
type Marker struct {
	Op         string // roctxRangePushA, roctxMarkA, ...
	Message    string
	TID        int64
	Start, End int64
	Corr       int64
}

// Copy is an asynchronous memory copy.
type Copy struct {
	Direction  string // MEMORY_COPY_HOST_TO_DEVICE, ...
	Src, Dst   int64  // agent node ids (0 = CPU, 1 = GPU)
	Size       int64
	TID        int64
	Stream     int64
	Start, End int64
	Corr       int64
}

// Alloc is a memory allocation record.
type Alloc struct {
	Type, Level string // ALLOC/FREE, REAL/VIRTUAL/SCRATCH
	Agent       int64
	Address     int64
	Size        int64
	TID         int64
	Start, End  int64
	Corr        int64
}

// Write creates a ROCpd database at path holding the given processes, each
// with its own suffixed tables; the un-suffixed views cover the first
// process only when there is exactly one (as rocprofv3 writes one process
// per file).
func Write(path string, procs ...Process) error {
	_ = os.Remove(path)
	db, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=off")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	for i := range procs {
		if err := writeProcess(tx, &procs[i]); err != nil {
			return fmt.Errorf("process %s: %w", procs[i].GUID, err)
		}
	}
	if len(procs) == 1 {
		if _, err := tx.Exec(viewsFor(procs[0].GUID) + topKernelsView); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// topKernelsView stands in for the data views rocprofv3 stores, so merge can
// be tested to carry them over. Written for these tests, not rocprofv3's SQL.
const topKernelsView = `CREATE VIEW top_kernels AS
SELECT s.display_name AS name, COUNT(*) AS total_calls, SUM(k.end - k.start) / 1000.0 AS total_duration
FROM rocpd_kernel_dispatch k JOIN rocpd_info_kernel_symbol s ON s.id = k.kernel_id AND s.guid = k.guid
GROUP BY s.display_name ORDER BY total_duration DESC;`

type writer struct {
	tx      *sql.Tx
	t       func(string) string
	strings map[string]int64
	event   int64
	corr    int64
	threads map[int64]bool
	p       *Process
}

func (w *writer) exec(q string, args ...any) error {
	_, err := w.tx.Exec(q, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", strings.Fields(q)[2], err)
	}
	return nil
}

func (w *writer) nextCorr(c int64) int64 {
	if c != 0 {
		return c
	}
	w.corr++
	return w.corr
}

// newEvent inserts an event row; stack_id carries the internal correlation
// id as rocprofv3 writes it.
func (w *writer) newEvent(category string, corr int64, extdata string) (int64, error) {
	w.event++
	err := w.exec("INSERT INTO "+w.t("rocpd_event")+
		" (id, category_id, stack_id, parent_stack_id, correlation_id, extdata) VALUES (?,?,?,?,?,?)",
		w.event, w.strings[category], corr, 0, 0, extdata)
	return w.event, err
}

func (w *writer) thread(tid int64) error {
	if w.threads[tid] {
		return nil
	}
	w.threads[tid] = true
	return w.exec("INSERT INTO "+w.t("rocpd_info_thread")+
		" (id, nid, ppid, pid, tid, name, start, end) VALUES (?,?,?,?,?,?,?,?)",
		tid, 1, w.p.PPID, w.p.PID, tid, fmt.Sprintf("thread %d", tid), w.p.Start, w.p.End)
}

func writeProcess(tx *sql.Tx, p *Process) error {
	if p.GUID == "" {
		return fmt.Errorf("empty GUID")
	}
	if _, err := tx.Exec(schemaFor(p.GUID)); err != nil {
		return err
	}
	suffix := Suffix(p.GUID)
	w := &writer{tx: tx, t: func(b string) string { return b + suffix }, threads: map[int64]bool{}, p: p}
	if err := w.writeStrings(); err != nil {
		return err
	}
	env, _ := json.Marshal(p.Env)
	if p.Env == nil {
		env = []byte("{}")
	}
	steps := []struct {
		q    string
		args []any
	}{
		{"INSERT INTO " + w.t("rocpd_info_node") + " (id, hash, machine_id, system_name, hostname, release, version, hardware_name, domain_name) VALUES (1, ?, ?, 'Linux', ?, '6.1', '#1', 'x86_64', '')",
			[]any{len(p.Hostname) + 7, "machine-" + p.Hostname, p.Hostname}},
		{"INSERT INTO " + w.t("rocpd_info_process") + " (id, nid, ppid, pid, init, fini, start, end, command, environment) VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?)",
			[]any{p.PID, p.PPID, p.PID, p.Start, p.End, p.Start, p.End, p.Command, string(env)}},
		{"INSERT INTO " + w.t("rocpd_info_stream") + " (id, nid, pid, name) VALUES (0, 1, ?, 'Default Stream')", []any{p.PID}},
		{"INSERT INTO " + w.t("rocpd_info_queue") + " (id, nid, pid, name) VALUES (0, 1, ?, 'Default Queue')", []any{p.PID}},
		{"INSERT INTO " + w.t("rocpd_info_queue") + " (id, nid, pid, name) VALUES (1, 1, ?, 'Queue 1')", []any{p.PID}},
		{"INSERT INTO " + w.t("rocpd_info_agent") + " (id, nid, pid, type, absolute_index, logical_index, type_index, uuid, name, model_name, vendor_name, product_name, user_name) VALUES (0, 1, ?, 'CPU', 0, 0, 0, 0, 'Test CPU', '', 'CPU', 'Test CPU', 'Test CPU')", []any{p.PID}},
		{"INSERT INTO " + w.t("rocpd_info_agent") + " (id, nid, pid, type, absolute_index, logical_index, type_index, uuid, name, model_name, vendor_name, product_name, user_name) VALUES (1, 1, ?, 'GPU', 1, 1, 0, 1234, 'gfx90a', 'aldebaran', 'AMD', 'Test GPU', 'Test GPU')", []any{p.PID}},
		{"INSERT INTO " + w.t("rocpd_info_code_object") + " (id, nid, pid, agent_id, uri, load_base, load_size, load_delta, storage_type) VALUES (1, 1, ?, 1, 'file:///app#offset=0&size=4096', 4096, 4096, 0, 'FILE')", []any{p.PID}},
	}
	for _, s := range steps {
		if err := w.exec(s.q, s.args...); err != nil {
			return err
		}
	}
	for _, s := range extraStreams(p) {
		if err := w.exec("INSERT INTO "+w.t("rocpd_info_stream")+" (id, nid, pid, name) VALUES (?, 1, ?, ?)",
			s, p.PID, fmt.Sprintf("Stream %d", s)); err != nil {
			return err
		}
	}
	kernels := kernelIDs(p)
	mangled := map[string]string{}
	for _, d := range p.Dispatches {
		if d.Mangled != "" {
			mangled[d.Kernel] = d.Mangled
		}
	}
	for name, id := range kernels {
		raw := mangled[name]
		if raw == "" {
			raw = name
		}
		if err := w.exec("INSERT INTO "+w.t("rocpd_info_kernel_symbol")+
			" (id, nid, pid, code_object_id, kernel_name, display_name, kernel_object, kernarg_segment_size,"+
			" kernarg_segment_alignment, group_segment_size, private_segment_size, sgpr_count, arch_vgpr_count, accum_vgpr_count)"+
			" VALUES (?, 1, ?, 1, ?, ?, ?, 64, 8, ?, 0, 16, 32, 0)",
			id, p.PID, raw, name, 0x1000*id, 100*id); err != nil {
			return err
		}
	}
	return w.writeRecords(kernels)
}

func (w *writer) writeStrings() error {
	p := w.p
	set := map[string]bool{"": true, "KERNEL_DISPATCH": true, "MEMORY_COPY": true,
		"MEMORY_ALLOCATION": true, "MARKER_CORE_RANGE_API": true}
	for _, d := range p.Dispatches {
		set[d.Kernel] = true
	}
	for _, a := range p.APICalls {
		set[a.Category], set[a.Name] = true, true
	}
	for _, m := range p.Markers {
		set[m.Op], set[m.Message] = true, true
	}
	for _, c := range p.Copies {
		set[c.Direction] = true
	}
	all := make([]string, 0, len(set))
	for s := range set {
		all = append(all, s)
	}
	sort.Strings(all)
	w.strings = map[string]int64{}
	for i, s := range all {
		w.strings[s] = int64(i + 1)
		if err := w.exec("INSERT INTO "+w.t("rocpd_string")+" (id, string) VALUES (?, ?)", i+1, s); err != nil {
			return err
		}
	}
	return nil
}

func (w *writer) writeRecords(kernels map[string]int64) error {
	p := w.p
	for _, a := range p.APICalls {
		corr := w.nextCorr(a.Corr)
		ev, err := w.newEvent(a.Category, corr, "{}")
		if err == nil {
			err = w.thread(a.TID)
		}
		if err == nil {
			err = w.exec("INSERT INTO "+w.t("rocpd_region")+" (id, nid, pid, tid, start, end, name_id, event_id) VALUES (?,1,?,?,?,?,?,?)",
				corr, p.PID, a.TID, a.Start, a.End, w.strings[a.Name], ev)
		}
		if err != nil {
			return err
		}
	}
	track := int64(0)
	for _, m := range p.Markers {
		corr := w.nextCorr(m.Corr)
		ext, _ := json.Marshal(map[string]string{"message": m.Message})
		ev, err := w.newEvent("MARKER_CORE_RANGE_API", corr, string(ext))
		if err == nil {
			err = w.thread(m.TID)
		}
		if err != nil {
			return err
		}
		if m.Start != m.End {
			err = w.exec("INSERT INTO "+w.t("rocpd_region")+" (id, nid, pid, tid, start, end, name_id, event_id) VALUES (?,1,?,?,?,?,?,?)",
				corr, p.PID, m.TID, m.Start, m.End, w.strings[m.Op], ev)
		} else {
			track++
			err = w.exec("INSERT INTO "+w.t("rocpd_track")+" (id, nid, pid, tid, name_id) VALUES (?,1,?,?,?)",
				track, p.PID, m.TID, w.strings["MARKER_CORE_RANGE_API"])
			if err == nil {
				err = w.exec("INSERT INTO "+w.t("rocpd_sample")+" (id, track_id, timestamp, event_id) VALUES (?,?,?,?)",
					corr, track, m.Start, ev)
			}
		}
		if err != nil {
			return err
		}
	}
	dispatchEvents := make([]int64, len(p.Dispatches))
	for i, d := range p.Dispatches {
		corr := w.nextCorr(d.Corr)
		ev, err := w.newEvent("KERNEL_DISPATCH", corr, "{}")
		dispatchEvents[i] = ev
		if err == nil {
			err = w.thread(d.TID)
		}
		if err == nil {
			err = w.exec("INSERT INTO "+w.t("rocpd_kernel_dispatch")+
				" (id, nid, pid, tid, agent_id, kernel_id, dispatch_id, queue_id, stream_id, start, end,"+
				" private_segment_size, group_segment_size, workgroup_size_x, workgroup_size_y, workgroup_size_z,"+
				" grid_size_x, grid_size_y, grid_size_z, region_name_id, event_id)"+
				" VALUES (?,1,?,?,1,?,?,?,?,?,?,0,?,?,?,?,?,?,?,?,?)",
				i+1, p.PID, d.TID, kernels[d.Kernel], i+1, d.Queue, d.Stream, d.Start, d.End,
				100*kernels[d.Kernel], d.Workgroup[0], d.Workgroup[1], d.Workgroup[2],
				d.Grid[0], d.Grid[1], d.Grid[2], w.strings[""], ev)
		}
		if err != nil {
			return err
		}
	}
	if err := w.writeCounters(dispatchEvents); err != nil {
		return err
	}
	for i, c := range p.Copies {
		corr := w.nextCorr(c.Corr)
		ev, err := w.newEvent("MEMORY_COPY", corr, "{}")
		if err == nil {
			err = w.thread(c.TID)
		}
		if err == nil {
			err = w.exec("INSERT INTO "+w.t("rocpd_memory_copy")+
				" (id, nid, pid, tid, start, end, name_id, dst_agent_id, dst_address, src_agent_id, src_address, size, stream_id, region_name_id, event_id)"+
				" VALUES (?,1,?,?,?,?,?,?,?,?,?,?,?,?,?)",
				i+1, p.PID, c.TID, c.Start, c.End, w.strings[c.Direction], c.Dst, 0x7000, c.Src, 0x8000,
				c.Size, c.Stream, w.strings[""], ev)
		}
		if err != nil {
			return err
		}
	}
	for i, a := range p.Allocs {
		corr := w.nextCorr(a.Corr)
		ev, err := w.newEvent("MEMORY_ALLOCATION", corr, "{}")
		if err == nil {
			err = w.thread(a.TID)
		}
		if err == nil {
			err = w.exec("INSERT INTO "+w.t("rocpd_memory_allocate")+
				" (id, nid, pid, tid, agent_id, type, level, start, end, address, size, queue_id, stream_id, event_id)"+
				" VALUES (?,1,?,?,?,?,?,?,?,?,?,0,0,?)",
				i+1, p.PID, a.TID, a.Agent, a.Type, a.Level, a.Start, a.End, a.Address, a.Size, ev)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// kernelIDs numbers the distinct kernel names from 1 in name order.
func kernelIDs(p *Process) map[string]int64 {
	var names []string
	seen := map[string]bool{}
	for _, d := range p.Dispatches {
		if !seen[d.Kernel] {
			seen[d.Kernel] = true
			names = append(names, d.Kernel)
		}
	}
	sort.Strings(names)
	ids := make(map[string]int64, len(names))
	for i, n := range names {
		ids[n] = int64(i + 1)
	}
	return ids
}

func extraStreams(p *Process) []int64 {
	seen := map[int64]bool{0: true}
	var out []int64
	add := func(s int64) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, d := range p.Dispatches {
		add(d.Stream)
	}
	for _, c := range p.Copies {
		add(c.Stream)
	}
	return out
}

func (w *writer) writeCounters(dispatchEvents []int64) error {
	ids := map[string]int64{}
	var names []string
	for _, c := range w.p.Counters {
		if _, ok := ids[c.Name]; !ok {
			ids[c.Name] = 0
			names = append(names, c.Name)
		}
	}
	sort.Strings(names)
	for i, n := range names {
		ids[n] = int64(i + 1)
		if err := w.exec("INSERT INTO "+w.t("rocpd_info_pmc")+
			" (id, nid, pid, agent_id, target_arch, name, symbol, description, component, value_type, block, expression, is_constant, is_derived)"+
			" VALUES (?,1,?,1,'GPU',?,?,'','rocm','ABS','SQ','',0,0)", i+1, w.p.PID, n, n); err != nil {
			return err
		}
	}
	row := int64(0)
	for _, c := range w.p.Counters {
		for _, v := range c.Values {
			row++
			if err := w.exec("INSERT INTO "+w.t("rocpd_pmc_event")+" (id, event_id, pmc_id, value) VALUES (?,?,?,?)",
				row, dispatchEvents[c.Dispatch], ids[c.Name], v); err != nil {
				return err
			}
		}
	}
	return nil
}
