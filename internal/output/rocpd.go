package output

import (
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

//go:embed sql/*.sql
var sqlFS embed.FS

// rocpdScripts run in this order after the tables.
var rocpdScripts = []string{"sql/tables.sql", "sql/rocpd_views.sql", "sql/data_views.sql",
	"sql/marker_views.sql", "sql/summary_views.sql"}

// rocpdSchema returns the schema script for one database identity.
func rocpdSchema(guid string) (string, error) {
	suffix := "_" + strings.ReplaceAll(guid, "-", "_")
	var b strings.Builder
	for _, name := range rocpdScripts {
		t, err := sqlFS.ReadFile(name)
		if err != nil {
			return "", err
		}
		s := strings.ReplaceAll(string(t), "{{uuid}}", suffix)
		b.WriteString(strings.ReplaceAll(s, "{{guid}}", guid))
		b.WriteString("\n")
	}
	return b.String(), nil
}

// processGUID derives a UUIDv7 for a process image: the start time in ms,
// then bits hashed from what identifies the process, so rewriting the same
// spool gives the same database identity.
func processGUID(info *tracing.ProcessInfo) string {
	var u [16]byte
	ms := info.StartBoottimeNs / 1e6
	binary.BigEndian.PutUint64(u[:8], ms<<16)
	h := sha256.Sum256([]byte(fmt.Sprintf("%s|%d|%d|%d|%d", info.Hostname, info.PID, info.PPID,
		info.StartBoottimeNs, info.StartRealtimeNs)))
	copy(u[6:], h[:10])
	u[6] = u[6]&0x0f | 0x70
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// rocpdBatchRows is how many rows one INSERT carries.
const rocpdBatchRows = 128

// batch collects rows for one multi-row INSERT statement.
type batch struct {
	w     *rocpdWriter
	table string
	cols  string
	row   string // "(?,?,…)" for one row, may hold expressions
	n     int    // values per row
	dbl   uint64
	full  *sqliteStmt
	one   *sqliteStmt
	buf   []int64
}

func (w *rocpdWriter) newBatch(table, cols, row string, dbl uint64) (*batch, error) {
	b := &batch{w: w, table: table, cols: cols, row: row, n: strings.Count(row, "?"), dbl: dbl}
	rows := make([]string, rocpdBatchRows)
	for i := range rows {
		rows[i] = row
	}
	var err error
	if b.full, err = w.db.prepare(b.insert(strings.Join(rows, ",")), b.n*rocpdBatchRows, b.n, dbl); err != nil {
		return nil, err
	}
	if b.one, err = w.db.prepare(b.insert(row), b.n, b.n, dbl); err != nil {
		return nil, err
	}
	b.buf = make([]int64, 0, b.n*rocpdBatchRows)
	w.batches = append(w.batches, b)
	return b, nil
}

func (b *batch) insert(values string) string {
	return "INSERT INTO `" + b.table + b.w.suffix + "` (" + b.cols + ") VALUES " + values
}

// add appends one row; the values must match the row's placeholders.
func (b *batch) add(v ...int64) error {
	b.buf = append(b.buf, v...)
	if len(b.buf) == cap(b.buf) {
		if err := b.w.flushStrings(); err != nil {
			return err
		}
		err := b.full.run(b.buf)
		b.buf = b.buf[:0]
		return err
	}
	return nil
}

func (b *batch) flush() error {
	if err := b.w.flushStrings(); err != nil {
		return err
	}
	for i := 0; i < len(b.buf); i += b.n {
		if err := b.one.run(b.buf[i : i+b.n]); err != nil {
			return err
		}
	}
	b.buf = b.buf[:0]
	return nil
}

// rocpdWriter fills one database. Strings get ids on first use and are
// inserted before any row that refers to them.
type rocpdWriter struct {
	db      *sqliteDB
	suffix  string
	guid    string
	batches []*batch
	strStmt *sqliteStmt
	strings map[string]int64
	newIDs  []int64
	newStrs []string
	ids     map[string]*idSpace
	nodes   map[string]int64
	tracks  map[[3]int64]int64
	events  int64
	procs   int              // processes written, to key their ids
	rows    map[string]int64 // next row id per table

	event, eventMsg, region, sample, dispatch, memcpy, alloc, scratch, pmc *batch
}

// idSpace hands out row ids: the natural id (a pid, tid, node or handle)
// when it is free, else the next unused one, so a database holding several
// processes stays consistent.
type idSpace struct {
	used map[int64]bool
	byKy map[[2]int64]int64
	next int64
}

func (w *rocpdWriter) id(space string, proc int, natural int64) (int64, bool) {
	s := w.ids[space]
	if s == nil {
		s = &idSpace{used: map[int64]bool{}, byKy: map[[2]int64]int64{}, next: 1}
		w.ids[space] = s
	}
	key := [2]int64{int64(proc), natural}
	if id, ok := s.byKy[key]; ok {
		return id, false
	}
	id := natural
	if s.used[id] {
		for s.used[s.next] {
			s.next++
		}
		id = s.next
	}
	s.used[id] = true
	s.byKy[key] = id
	return id, true
}

func (w *rocpdWriter) str(s string) int64 {
	if id, ok := w.strings[s]; ok {
		return id
	}
	id := int64(len(w.strings) + 1)
	w.strings[s] = id
	w.newIDs = append(w.newIDs, id)
	w.newStrs = append(w.newStrs, s)
	return id
}

func (w *rocpdWriter) flushStrings() error {
	if len(w.newIDs) == 0 {
		return nil
	}
	err := w.strStmt.insertStrings(w.newIDs, w.newStrs)
	w.newIDs, w.newStrs = w.newIDs[:0], w.newStrs[:0]
	return err
}

func (w *rocpdWriter) nextRow(table string) int64 {
	w.rows[table]++
	return w.rows[table]
}

// WriteROCpd writes the input's processes into a ROCpd (schema 3) SQLite
// database at path, replacing any existing file. One database carries one
// guid: the first process's.
func WriteROCpd(path string, in *Input) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	db, err := openSQLite(path)
	if err != nil {
		return err
	}
	w := &rocpdWriter{db: db, strings: map[string]int64{}, ids: map[string]*idSpace{},
		nodes: map[string]int64{}, tracks: map[[3]int64]int64{}, rows: map[string]int64{}}
	err = w.run(in)
	for _, b := range w.batches {
		b.full.close()
		b.one.close()
	}
	if w.strStmt != nil {
		w.strStmt.close()
	}
	if cerr := db.close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
	}
	return err
}

func (w *rocpdWriter) run(in *Input) error {
	// A bulk load in one transaction: no journal, no fsync, foreign keys
	// checked by the tests rather than row by row.
	if err := w.db.exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=16384;" +
		" PRAGMA cache_size=-32768; PRAGMA locking_mode=EXCLUSIVE; PRAGMA temp_store=MEMORY"); err != nil {
		return err
	}
	first := true
	err := in.openEach(func(p *process, r *tracing.Reader) error {
		if first {
			first = false
			if err := w.begin(processGUID(&p.Info)); err != nil {
				return err
			}
		}
		w.procs++
		return w.writeProcess(w.procs, p, r)
	})
	if err != nil {
		return err
	}
	if first { // no spool: an empty but valid database
		if err := w.begin(processGUID(&tracing.ProcessInfo{})); err != nil {
			return err
		}
	}
	for _, b := range w.batches {
		if err := b.flush(); err != nil {
			return err
		}
	}
	if err := w.flushStrings(); err != nil {
		return err
	}
	return w.db.exec("COMMIT; PRAGMA foreign_keys=ON")
}

func (w *rocpdWriter) begin(guid string) error {
	w.guid, w.suffix = guid, "_"+strings.ReplaceAll(guid, "-", "_")
	schema, err := rocpdSchema(guid)
	if err != nil {
		return err
	}
	if err := w.db.exec(schema + "; PRAGMA foreign_keys=OFF; BEGIN"); err != nil {
		return err
	}
	if w.strStmt, err = w.db.prepare("INSERT INTO `rocpd_string"+w.suffix+"` (id, string) VALUES (?, ?)", 2, 2, 0); err != nil {
		return err
	}
	w.str("") // id 1, the region name of dispatches without one
	type spec struct {
		dst          **batch
		table, cols  string
		row          string
		doubleColumn uint64
	}
	msg := "json_object('message', (SELECT string FROM `rocpd_string" + w.suffix + "` WHERE id = ?))"
	allocType := "CASE ? WHEN 1 THEN 'ALLOC' WHEN 2 THEN 'FREE' WHEN 3 THEN 'REALLOC' ELSE 'RECLAIM' END"
	allocLevel := "CASE ? WHEN 1 THEN 'REAL' WHEN 2 THEN 'VIRTUAL' ELSE 'SCRATCH' END"
	specs := []spec{
		{&w.event, "rocpd_event", "id, category_id, stack_id, parent_stack_id, correlation_id", "(?,?,?,?,?)", 0},
		{&w.eventMsg, "rocpd_event", "id, category_id, stack_id, parent_stack_id, correlation_id, extdata", "(?,?,?,?,?," + msg + ")", 0},
		{&w.region, "rocpd_region", "id, nid, pid, tid, start, end, name_id, event_id", "(?,?,?,?,?,?,?,?)", 0},
		{&w.sample, "rocpd_sample", "id, track_id, timestamp, event_id", "(?,?,?,?)", 0},
		{&w.dispatch, "rocpd_kernel_dispatch", "id, nid, pid, tid, agent_id, kernel_id, dispatch_id, queue_id, stream_id, start, end, private_segment_size, group_segment_size, workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, region_name_id, event_id", "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", 0},
		{&w.memcpy, "rocpd_memory_copy", "id, nid, pid, tid, start, end, name_id, dst_agent_id, dst_address, src_agent_id, src_address, size, stream_id, event_id", "(?,?,?,?,?,?,?,?,?,?,?,?,?,?)", 0},
		{&w.alloc, "rocpd_memory_allocate", "id, nid, pid, tid, agent_id, type, level, start, end, address, size, queue_id, stream_id, event_id", "(?,?,?,?,?," + allocType + "," + allocLevel + ",?,?,?,?,?,?,?)", 0},
		{&w.scratch, "rocpd_memory_allocate", "id, nid, pid, tid, agent_id, type, level, start, end, address, size, queue_id, stream_id, event_id, extdata", "(?,?,?,?,?," + allocType + "," + allocLevel + ",?,?,?,?,?,?,?,json_object('flags', CAST(? AS TEXT)))", 0},
		{&w.pmc, "rocpd_pmc_event", "id, event_id, pmc_id, value", "(?,?,?,?)", 1 << 3},
	}
	for _, s := range specs {
		b, err := w.newBatch(s.table, s.cols, s.row, s.doubleColumn)
		if err != nil {
			return err
		}
		*s.dst = b
	}
	return nil
}

// sqlText quotes a string as an SQL literal.
func sqlText(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func sqlJSON(v any) string {
	b, _ := json.Marshal(v)
	return sqlText(string(b))
}

func (w *rocpdWriter) execf(format string, args ...any) error {
	return w.db.exec(fmt.Sprintf(format, args...))
}

// writeProcess writes one process: its identity rows, then its events.
func (w *rocpdWriter) writeProcess(proc int, p *process, r *tracing.Reader) error {
	info := &p.Info
	nid, ok := w.nodes[info.Hostname]
	if !ok {
		h := fnv.New64a()
		h.Write([]byte(info.Hostname))
		hash := int64(h.Sum64() % math.MaxInt64)
		nid = hash % math.MaxUint32
		w.nodes[info.Hostname] = nid
		machine := readMachineID(info.Hostname)
		if err := w.execf("INSERT INTO `rocpd_info_node%s` (id, hash, machine_id, system_name, hostname, release, version, hardware_name, domain_name) VALUES (%d, %d, %s, 'Linux', %s, '', '', 'x86_64', '')",
			w.suffix, nid, hash, sqlText(machine), sqlText(info.Hostname)); err != nil {
			return err
		}
	}
	pid, _ := w.id("process", proc, int64(info.PID))
	env := map[string]string{}
	for _, e := range info.Environ {
		if k, v, ok := strings.Cut(e, "="); ok && !strings.Contains(v, ";") &&
			(p.opts.FullEnvironment || launcherVariable(k)) {
			env[k] = v
		}
	}
	cfg := p.opts.Config
	if cfg == nil {
		cfg = map[string]any{}
	}
	if err := w.execf("INSERT INTO `rocpd_info_process%s` (id, nid, ppid, pid, init, fini, start, end, command, environment, extdata) VALUES (%d, %d, %d, %d, %d, %d, %d, %d, %s, %s, %s)",
		w.suffix, pid, nid, info.PPID, info.PID, info.StartBoottimeNs, p.End, p.Begin, p.End,
		sqlText(strings.Join(info.Argv, " ")), sqlJSON(env), sqlJSON(cfg)); err != nil {
		return err
	}
	var sql strings.Builder
	threads := map[uint32]int64{}
	for _, tid := range p.Threads {
		id, _ := w.id("thread", proc, int64(tid))
		threads[tid] = id
		fmt.Fprintf(&sql, "INSERT INTO `rocpd_info_thread%s` (id, nid, ppid, pid, tid) VALUES (%d, %d, %d, %d, %d);\n",
			w.suffix, id, nid, info.PPID, pid, tid)
	}
	queues := map[uint64]int64{}
	streams := map[uint64]int64{}
	for _, h := range append([]uint64{0}, p.Queues...) {
		id, _ := w.id("queue", proc, int64(h))
		queues[h] = id
		name := "Default Queue"
		if h != 0 {
			name = "Queue " + strconv.Itoa(len(queues)-1)
		}
		fmt.Fprintf(&sql, "INSERT INTO `rocpd_info_queue%s` (id, nid, pid, name) VALUES (%d, %d, %d, %s);\n", w.suffix, id, nid, pid, sqlText(name))
	}
	for _, h := range append([]uint64{0}, p.Streams...) {
		id, _ := w.id("stream", proc, int64(h))
		streams[h] = id
		name := "Default Stream"
		if h != 0 {
			name = "Stream " + strconv.Itoa(len(streams)-1)
		}
		fmt.Fprintf(&sql, "INSERT INTO `rocpd_info_stream%s` (id, nid, pid, name) VALUES (%d, %d, %d, %s);\n", w.suffix, id, nid, pid, sqlText(name))
	}
	agents := map[uint32]int64{}
	for i := range p.Agents {
		a := &p.Agents[i]
		node := uint32(a.NodeID())
		id, _ := w.id("agent", proc, int64(node))
		agents[node] = id
		typ := a.Type().String()
		if typ == "UNK" {
			typ = "CPU"
		}
		ext := map[string]any{"node_id": a.NodeID(), "logical_node_id": a.LogicalNodeID(),
			"logical_node_type_id": a.TypeIndex(), "name": a.Name, "vendor_name": a.VendorName,
			"product_name": a.ProductName, "model_name": a.ModelName}
		fmt.Fprintf(&sql, "INSERT INTO `rocpd_info_agent%s` (id, nid, pid, type, absolute_index, logical_index, type_index, uuid, name, model_name, vendor_name, product_name, user_name, extdata) VALUES (%d, %d, %d, '%s', %d, %d, %d, %d, %s, %s, %s, %s, %s, %s);\n",
			w.suffix, id, nid, pid, typ, a.NodeID(), a.LogicalNodeID(), a.TypeIndex(), a.Values[22],
			sqlText(a.Name), sqlText(a.ModelName), sqlText(a.VendorName), sqlText(a.ProductName),
			sqlText(a.ProductName), sqlJSON(ext))
	}
	agentID := func(node uint32) int64 {
		if id, ok := agents[node]; ok {
			return id
		}
		// An agent the spool never described still needs a row.
		id, _ := w.id("agent", proc, int64(node))
		agents[node] = id
		fmt.Fprintf(&sql, "INSERT INTO `rocpd_info_agent%s` (id, nid, pid, type, absolute_index, logical_index, type_index, name) VALUES (%d, %d, %d, 'GPU', %d, %d, %d, '');\n",
			w.suffix, id, nid, pid, node, node, node)
		return id
	}
	pmcIDs := map[uint64]int64{}
	for _, c := range p.Counters {
		if _, ok := pmcIDs[c.ID]; ok {
			continue
		}
		id, _ := w.id("pmc", proc, int64(c.ID))
		pmcIDs[c.ID] = id
		fmt.Fprintf(&sql, "INSERT INTO `rocpd_info_pmc%s` (id, nid, pid, agent_id, target_arch, name, symbol, description, component, value_type, block, expression, is_constant, is_derived) VALUES (%d, %d, %d, %d, 'GPU', %s, %s, '', 'rocm', 'ABS', '', '', 0, 0);\n",
			w.suffix, id, nid, pid, agentID(c.AgentNode), sqlText(c.Name), sqlText(c.Name))
	}
	codeObjects := map[uint64]int64{}
	coRow := func(coid uint64, co *tracing.CodeObject) {
		id, _ := w.id("code_object", proc, int64(coid))
		codeObjects[coid] = id
		var node uint32
		uri, storage := "", "MEMORY"
		var base, size, delta uint64
		if co != nil {
			node, uri, base, size, delta = co.AgentNode, string(co.URI), co.LoadBase, co.LoadSize, co.LoadDelta
			if strings.HasPrefix(uri, "file://") {
				storage = "FILE"
			}
		} else if len(p.Agents) > 0 {
			node = uint32(p.Agents[len(p.Agents)-1].NodeID())
		}
		ext := map[string]any{"size": size, "storage_type": storage, "uri": uri}
		fmt.Fprintf(&sql, "INSERT INTO `rocpd_info_code_object%s` (id, nid, pid, agent_id, uri, load_base, load_size, load_delta, storage_type, extdata) VALUES (%d, %d, %d, %d, %s, %d, %d, %d, '%s', %s);\n",
			w.suffix, id, nid, pid, agentID(node), sqlText(uri), int64(base), int64(size), int64(delta), storage, sqlJSON(ext))
	}
	for i := range p.CodeObjects {
		if _, ok := codeObjects[p.CodeObjects[i].CodeObjectID]; !ok {
			coRow(p.CodeObjects[i].CodeObjectID, &p.CodeObjects[i])
		}
	}
	kernels := map[uint64]int64{}
	for _, kid := range p.SymbolOrder {
		s := p.Symbols[kid]
		if _, ok := codeObjects[s.CodeObjectID]; !ok {
			coRow(s.CodeObjectID, nil)
		}
		id, _ := w.id("kernel", proc, int64(kid))
		kernels[kid] = id
		ext := map[string]any{"kernel_id": kid, "formatted_kernel_name": s.Display,
			"demangled_kernel_name": s.Demangled, "truncated_kernel_name": s.Truncated,
			"kernel_code_entry_byte_offset": 0, "size": 0,
			"kernel_address": map[string]any{"handle": s.KernelObject}}
		fmt.Fprintf(&sql, "INSERT INTO `rocpd_info_kernel_symbol%s` (id, nid, pid, code_object_id, kernel_name, display_name, kernel_object, kernarg_segment_size, kernarg_segment_alignment, group_segment_size, private_segment_size, sgpr_count, arch_vgpr_count, accum_vgpr_count, extdata) VALUES (%d, %d, %d, %d, %s, %s, %d, %d, 8, %d, %d, %d, %d, %d, %s);\n",
			w.suffix, id, nid, pid, codeObjects[s.CodeObjectID], sqlText(s.Raw), sqlText(s.Display),
			int64(s.KernelObject), s.KernargSize, s.GroupSegmentSize, s.PrivateSegmentSize,
			s.SGPRCount, s.VGPRCount, s.AGPRCount, sqlJSON(ext))
	}
	if err := w.db.exec(sql.String()); err != nil {
		return err
	}
	return w.writeEvents(p, r, nid, pid, threads, queues, streams, agentID, kernels, pmcIDs)
}

func readMachineID(fallback string) string {
	if b, err := os.ReadFile("/etc/machine-id"); err == nil {
		if s := strings.TrimSpace(string(b)); s != "" {
			return s + "-" + fallback
		}
	}
	return fallback
}

func (w *rocpdWriter) nextEvent() int64 { w.events++; return w.events }

// track returns the sample track of a thread and category, creating it.
func (w *rocpdWriter) track(nid, pid, tid, cat int64) (int64, error) {
	key := [3]int64{pid, tid, cat}
	if id, ok := w.tracks[key]; ok {
		return id, nil
	}
	id := int64(len(w.tracks) + 1)
	w.tracks[key] = id
	return id, w.execf("INSERT INTO `rocpd_track%s` (id, nid, pid, tid, name_id) VALUES (%d, %d, %d, %d, %d)",
		w.suffix, id, nid, pid, tid, cat)
}

func (w *rocpdWriter) writeEvents(p *process, r *tracing.Reader, nid, pid int64, threads map[uint32]int64,
	queues, streams map[uint64]int64, agentID func(uint32) int64, kernels map[uint64]int64,
	pmcIDs map[uint64]int64) error {
	empty := w.str("")
	// Counter samples refer to their dispatch's event; remember that only
	// when the process has samples (counter runs serialise dispatches, so
	// they are few).
	var dispatchEvents map[uint64]int64
	if p.Counts[domCounter] > 0 {
		dispatchEvents = map[uint64]int64{}
	}
	catKernel, catCopy := w.str("KERNEL_DISPATCH"), w.str("MEMORY_COPY")
	catAlloc, catScratch := w.str("MEMORY_ALLOCATION"), w.str("SCRATCH_MEMORY")
	api := func(dom tracing.APIDomain, name string, tid uint32, corr, start, end uint64, msg int64) error {
		c := w.str(dom.String())
		ev := w.nextEvent()
		var err error
		if msg != 0 {
			err = w.eventMsg.add(ev, c, int64(corr), 0, 0, msg)
		} else {
			err = w.event.add(ev, c, int64(corr), 0, 0)
		}
		if err != nil {
			return err
		}
		if start == end {
			tr, err := w.track(nid, pid, threads[tid], c)
			if err != nil {
				return err
			}
			return w.sample.add(w.nextRow("sample"), tr, int64(start), ev)
		}
		return w.region.add(w.nextRow("region"), nid, pid, threads[tid], int64(start), int64(end), w.str(name), ev)
	}
	for r.Next() {
		var err error
		switch r.Kind() {
		case tracing.KindHIPAPI, tracing.KindHSAAPI:
			a := r.APICall()
			err = api(a.Domain, p.funcName(a.Domain, a.Function), a.TID, a.CorrelationID, a.Start, a.End, 0)
		case tracing.KindMarker:
			m := r.Marker()
			msg := markerName(&m)
			err = api(m.Domain, m.Function.String(), m.TID, m.CorrelationID, m.Start, m.End, w.str(msg))
		case tracing.KindKernelDispatch:
			d := r.KernelDispatch()
			ev := w.nextEvent()
			if dispatchEvents != nil && p.sampled(d.DispatchID) {
				dispatchEvents[d.DispatchID] = ev
			}
			if err = w.event.add(ev, catKernel, int64(d.CorrelationID), int64(d.CorrelationID), 0); err != nil {
				return err
			}
			err = w.dispatch.add(w.nextRow("dispatch"), nid, pid, threads[d.TID], agentID(d.AgentNode),
				kernels[d.KernelID], int64(d.DispatchID), queues[d.QueueID], streams[d.StreamID],
				int64(d.Start), int64(d.End), int64(d.PrivateSegmentSize), int64(d.GroupSegmentSize),
				int64(d.Workgroup[0]), int64(d.Workgroup[1]), int64(d.Workgroup[2]),
				int64(d.Grid[0]), int64(d.Grid[1]), int64(d.Grid[2]), w.regionName(p, &d, empty), ev)
		case tracing.KindMemoryCopy:
			c := r.MemoryCopy()
			ev := w.nextEvent()
			if err = w.event.add(ev, catCopy, int64(c.CorrelationID), int64(c.CorrelationID), 0); err != nil {
				return err
			}
			err = w.memcpy.add(w.nextRow("copy"), nid, pid, threads[c.TID], int64(c.Start), int64(c.End),
				w.str(c.Direction.String()), agentID(c.DstAgentNode), int64(c.DstAddress),
				agentID(c.SrcAgentNode), int64(c.SrcAddress), int64(c.Bytes), streams[c.StreamID], ev)
		case tracing.KindMemoryAllocation:
			a := r.MemoryAllocation()
			ev := w.nextEvent()
			if err = w.event.add(ev, catAlloc, int64(a.CorrelationID), 0, 0); err != nil {
				return err
			}
			typ, level, agent := int64(1), int64(1), int64(sqlNull)
			switch a.Operation {
			case tracing.AllocVMemAllocate:
				level = 2
			case tracing.AllocFree:
				typ = 2
			case tracing.AllocVMemFree:
				typ, level = 2, 2
			}
			if a.Operation.IsAllocate() {
				agent = agentID(a.AgentNode)
			}
			err = w.alloc.add(w.nextRow("alloc"), nid, pid, threads[a.TID], agent, typ, level,
				int64(a.Start), int64(a.End), int64(a.Address), int64(a.Size), queues[0], streams[0], ev)
		case tracing.KindScratchMemory:
			s := r.ScratchMemory()
			ev := w.nextEvent()
			if err = w.event.add(ev, catScratch, int64(s.CorrelationID), 0, 0); err != nil {
				return err
			}
			typ, agent := int64(1), int64(sqlNull)
			switch s.Operation {
			case tracing.ScratchAlloc:
				agent = agentID(s.AgentNode)
			case tracing.ScratchFree:
				typ = 2
			default:
				typ = 4
			}
			q, ok := queues[s.QueueID]
			if !ok {
				q = queues[0]
			}
			err = w.scratch.add(w.nextRow("alloc"), nid, pid, threads[s.TID], agent, typ, 3,
				int64(s.Start), int64(s.End), 0, int64(s.Size), q, streams[0], ev, int64(s.Flags))
		case tracing.KindCounterSample:
			c := r.CounterSample()
			ev, ok := dispatchEvents[c.DispatchID]
			if !ok {
				ev = sqlNull
			}
			err = w.pmc.add(w.nextRow("pmc"), ev, pmcIDs[c.CounterID], int64(math.Float64bits(c.Value)))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// rocpdTables lists the base names of the suffixed tables.
var rocpdTables = func() []string {
	t := []string{"metadata", "string", "info_node", "info_process", "info_thread", "info_agent",
		"info_queue", "info_stream", "info_pmc", "info_code_object", "info_kernel_symbol", "track",
		"event", "arg", "pmc_event", "region", "sample", "kernel_dispatch", "memory_copy",
		"memory_allocate"}
	for i := range t {
		t[i] = "rocpd_" + t[i]
	}
	sort.Strings(t)
	return t
}()

// launcherVariable reports whether an environment variable describes the
// job's layout (ranks, sizes, job ids): the only part of the app's
// environment stored by default, since the rest may hold secrets. The
// analysis commands read ranks from these; --output-config stores all.
func launcherVariable(name string) bool {
	for _, prefix := range []string{"OMPI_COMM_WORLD_", "PMI_", "PMIX_RANK", "SLURM_PROCID", "SLURM_JOB_ID",
		"SLURM_NTASKS", "SLURM_LOCALID", "MV2_COMM_WORLD_", "MPI_RANK", "MPI_LOCALRANKID", "MPI_RANKID",
		"MPI_SIZE", "MPI_LOCALNRANKS", "MPI_NRANKS"} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}
