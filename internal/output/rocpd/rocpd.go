package rocpd

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

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
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

// ClockKey names, in rocpd_info_process.extdata, the process's
// CLOCK_BOOTTIME and CLOCK_REALTIME read together when it started
// ({"boottime_ns": B, "realtime_ns": R}): the database's timestamps are
// the node's boottime, and R - B maps them onto the realtime clock that
// keeps nodes in step (the Perfetto writer's alignment of a job's nodes).
const ClockKey = "rocprof_go_clock"

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

// rocpdWriter fills one database: SQLite writes the schema and the small
// tables in short turns, the bulk tables are appended as pages between them
// (rocpd_btree.go). Strings get ids on first use and are stored at the end.
type rocpdWriter struct {
	path    string
	db      *sqliteDB // open during SQLite's turns only
	pf      *pageFile // the file between SQLite's turns
	suffix  string
	guid    string
	strings map[string]int64
	strList []string        // by id - 1
	late    strings.Builder // SQL for the last turn: tracks, agents first met in events
	ids     map[string]*idSpace
	nodes   map[string]int64
	tracks  map[[3]int64]int64
	procs   int // processes written, to key their ids
	json    []byte
	roots   [numBulkTables]uint32 // the bulk tables' root pages
	enc     rowEncoder
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
	w.strList = append(w.strList, s)
	id := int64(len(w.strList))
	w.strings[s] = id
	return id
}

// Write writes the input's processes into a ROCpd (schema 3) SQLite
// database at path, replacing any existing file. One database carries one
// guid: the first process's. The database is built under a temporary name
// (internal/atomicfile) and renamed onto path once SQLite and the page
// writer have closed it without error; with journal_mode=OFF no journal
// file is ever made. With --output-config (FullEnvironment) it holds the
// app's environment and is created 0600.
func Write(path string, in *model.Input) error {
	perm := atomicfile.Public
	if in.Config.FullEnvironment {
		perm = atomicfile.Private
	}
	f, err := atomicfile.Create(path, perm)
	if err != nil {
		return err
	}
	w := &rocpdWriter{path: f.TempPath(), strings: map[string]int64{}, ids: map[string]*idSpace{},
		nodes: map[string]int64{}, tracks: map[[3]int64]int64{}}
	err = w.run(in)
	if w.db != nil {
		if cerr := w.db.close(); err == nil {
			err = cerr
		}
	}
	if w.pf != nil {
		if cerr := w.pf.close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// rocpdPragmas set up each SQLite turn: a bulk load with no journal and no
// fsync, foreign keys checked by the tests rather than row by row.
const rocpdPragmas = "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-32768;" +
	" PRAGMA locking_mode=EXCLUSIVE; PRAGMA temp_store=MEMORY; PRAGMA foreign_keys=OFF;"

// rocpdPageSize is the database page size: large pages mean fewer interior
// pages and fewer, larger writes.
const rocpdPageSize = 16384

// turn opens SQLite on the file, runs fn in one transaction and closes it,
// after which the page writer appends after SQLite's last page.
func (w *rocpdWriter) turn(fn func() error) error {
	if w.pf != nil {
		if err := w.pf.sync(); err != nil {
			return err
		}
	}
	db, err := openSQLite(w.path)
	if err != nil {
		return err
	}
	w.db = db
	pragmas := rocpdPragmas
	if w.pf == nil {
		pragmas = "PRAGMA page_size=" + strconv.Itoa(rocpdPageSize) + "; " + pragmas
	}
	err = db.exec(pragmas + " BEGIN")
	if err == nil {
		err = fn()
	}
	if err == nil {
		err = db.exec("COMMIT")
	}
	w.db = nil
	if cerr := db.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if w.pf == nil {
		if w.pf, err = openPageFile(w.path); err != nil {
			return err
		}
		for i, t := range rocpdBulk {
			if w.roots[i] != 0 {
				w.enc.tables[i] = newBtreeTable(w.pf, "rocpd_"+t.name+w.suffix, w.roots[i])
			}
		}
		return nil
	}
	return w.pf.readHeader()
}

func (w *rocpdWriter) run(in *model.Input) error {
	first := true
	err := in.OpenEach(func(p *model.Catalogue, r *model.SpoolView) error {
		w.procs++
		var ids *rocpdIDs
		err := w.turn(func() error {
			if first {
				first = false
				if err := w.begin(processGUID(&p.Info)); err != nil {
					return err
				}
			}
			var err error
			ids, err = w.writeProcess(w.procs, p)
			return err
		})
		if err != nil {
			return err
		}
		return w.writeEvents(p, r, ids)
	})
	if err != nil {
		return err
	}
	if first { // no spool: an empty but valid database
		return w.turn(func() error { return w.begin(processGUID(&tracing.ProcessInfo{})) })
	}
	tables := w.enc.tables[:]
	for _, t := range tables {
		if err := t.finish(); err != nil {
			return err
		}
	}
	return w.turn(func() error {
		st, err := w.db.prepare("INSERT INTO `rocpd_string" + w.suffix + "` (id, string) VALUES (?, ?)")
		if err != nil {
			return err
		}
		ids := make([]int64, len(w.strList))
		for i := range ids {
			ids[i] = int64(i + 1)
		}
		err = st.insertStrings(ids, w.strList)
		st.close()
		if err != nil {
			return err
		}
		for _, t := range tables {
			if t.rows > 0 {
				fmt.Fprintf(&w.late, "INSERT INTO sqlite_sequence (name, seq) VALUES (%s, %d);\n", sqlText(t.name), t.last)
			}
		}
		return w.db.exec(w.late.String())
	})
}

// begin creates the schema for the database's guid and finds the root
// pages of the bulk tables.
func (w *rocpdWriter) begin(guid string) error {
	w.guid, w.suffix = guid, "_"+strings.ReplaceAll(guid, "-", "_")
	schema, err := rocpdSchema(guid)
	if err != nil {
		return err
	}
	if err := w.db.exec(schema); err != nil {
		return err
	}
	w.str("") // id 1, the region name of dispatches without one
	for i, t := range rocpdBulk {
		name := "rocpd_" + t.name + w.suffix
		root, err := w.db.queryInt("SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = " + sqlText(name))
		if err != nil {
			return err
		}
		w.roots[i] = uint32(root)
	}
	w.enc.guid = guid
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

// rocpdIDs are one process's row ids, which its events refer to.
type rocpdIDs struct {
	nid, pid        int64
	threads         map[uint32]int64
	queues, streams map[uint64]int64
	kernels, pmc    map[uint64]int64
	codeObjects     map[uint64]int64 // by the spool's code object id
	agentID         func(node uint32) int64
}

// writeProcess writes one process's identity rows (in SQLite's turn).
func (w *rocpdWriter) writeProcess(proc int, p *model.Catalogue) (*rocpdIDs, error) {
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
			return nil, err
		}
	}
	pid, _ := w.id("process", proc, int64(info.PID))
	env := map[string]string{}
	for _, e := range info.Environ {
		if k, v, ok := strings.Cut(e, "="); ok && !strings.Contains(v, ";") &&
			(p.Config.FullEnvironment || launcherVariable(k)) {
			env[k] = v
		}
	}
	// extdata: the run's configuration, and the process's clock pair
	// (ClockKey) that lines nodes up in a job's timeline.
	cfg := make(map[string]any, len(p.Config.Metadata)+1)
	for k, v := range p.Config.Metadata {
		cfg[k] = v
	}
	if info.StartRealtimeNs != 0 {
		cfg[ClockKey] = map[string]uint64{"boottime_ns": info.StartBoottimeNs, "realtime_ns": info.StartRealtimeNs}
	}
	if err := w.execf("INSERT INTO `rocpd_info_process%s` (id, nid, ppid, pid, init, fini, start, end, command, environment, extdata) VALUES (%d, %d, %d, %d, %d, %d, %d, %d, %s, %s, %s)",
		w.suffix, pid, nid, info.PPID, info.PID, info.StartBoottimeNs, p.End, p.Begin, p.End,
		sqlText(strings.Join(info.Argv, " ")), sqlJSON(env), sqlJSON(cfg)); err != nil {
		return nil, err
	}
	var info0 strings.Builder
	sql := &info0 // after this turn, agents first met in events go to the last turn
	threads := map[uint32]int64{}
	for _, tid := range p.Threads {
		id, _ := w.id("thread", proc, int64(tid))
		threads[tid] = id
		fmt.Fprintf(sql, "INSERT INTO `rocpd_info_thread%s` (id, nid, ppid, pid, tid) VALUES (%d, %d, %d, %d, %d);\n",
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
		fmt.Fprintf(sql, "INSERT INTO `rocpd_info_queue%s` (id, nid, pid, name) VALUES (%d, %d, %d, %s);\n", w.suffix, id, nid, pid, sqlText(name))
	}
	for _, h := range append([]uint64{0}, p.Streams...) {
		id, _ := w.id("stream", proc, int64(h))
		streams[h] = id
		name := "Default Stream"
		if h != 0 {
			name = "Stream " + strconv.Itoa(len(streams)-1)
		}
		fmt.Fprintf(sql, "INSERT INTO `rocpd_info_stream%s` (id, nid, pid, name) VALUES (%d, %d, %d, %s);\n", w.suffix, id, nid, pid, sqlText(name))
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
		fmt.Fprintf(sql, "INSERT INTO `rocpd_info_agent%s` (id, nid, pid, type, absolute_index, logical_index, type_index, uuid, name, model_name, vendor_name, product_name, user_name, extdata) VALUES (%d, %d, %d, '%s', %d, %d, %d, %d, %s, %s, %s, %s, %s, %s);\n",
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
		fmt.Fprintf(sql, "INSERT INTO `rocpd_info_agent%s` (id, nid, pid, type, absolute_index, logical_index, type_index, name) VALUES (%d, %d, %d, 'GPU', %d, %d, %d, '');\n",
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
		m := &c.Meta
		fmt.Fprintf(sql, "INSERT INTO `rocpd_info_pmc%s` (id, nid, pid, agent_id, target_arch, name, symbol, description, component, value_type, block, expression, is_constant, is_derived) VALUES (%d, %d, %d, %d, 'GPU', %s, %s, %s, 'rocm', 'ABS', %s, %s, %d, %d);\n",
			w.suffix, id, nid, pid, agentID(c.AgentNode), sqlText(c.Name), sqlText(c.Name),
			sqlText(m.Description), sqlText(m.Block), sqlText(m.Expression), sqlFlag(m.Constant), sqlFlag(m.Derived))
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
		fmt.Fprintf(sql, "INSERT INTO `rocpd_info_code_object%s` (id, nid, pid, agent_id, uri, load_base, load_size, load_delta, storage_type, extdata) VALUES (%d, %d, %d, %d, %s, %d, %d, %d, '%s', %s);\n",
			w.suffix, id, nid, pid, agentID(node), sqlText(uri), int64(base), int64(size), int64(delta), storage, sqlJSON(ext))
	}
	for i := range p.CodeObjects {
		if _, ok := codeObjects[p.CodeObjects[i].CodeObjectID]; !ok {
			coRow(p.CodeObjects[i].CodeObjectID, &p.CodeObjects[i])
		}
	}
	kernels := map[uint64]int64{}
	entries := p.KernelEntries()
	for _, kid := range p.SymbolOrder {
		s := p.Symbols[kid]
		if _, ok := codeObjects[s.CodeObjectID]; !ok {
			coRow(s.CodeObjectID, nil)
		}
		id, _ := w.id("kernel", proc, int64(kid))
		kernels[kid] = id
		ext := map[string]any{"kernel_id": kid, "formatted_kernel_name": s.Display,
			"demangled_kernel_name": s.Demangled, "truncated_kernel_name": s.Truncated,
			"kernel_code_entry_byte_offset": entries[kid].Offset, "size": 0,
			"kernel_address": map[string]any{"handle": entries[kid].Address}}
		fmt.Fprintf(sql, "INSERT INTO `rocpd_info_kernel_symbol%s` (id, nid, pid, code_object_id, kernel_name, display_name, kernel_object, kernarg_segment_size, kernarg_segment_alignment, group_segment_size, private_segment_size, sgpr_count, arch_vgpr_count, accum_vgpr_count, extdata) VALUES (%d, %d, %d, %d, %s, %s, %d, %d, 8, %d, %d, %d, %d, %d, %s);\n",
			w.suffix, id, nid, pid, codeObjects[s.CodeObjectID], sqlText(s.Raw), sqlText(s.Display),
			int64(s.KernelObject), s.KernargSize, s.GroupSegmentSize, s.PrivateSegmentSize,
			s.SGPRCount, s.VGPRCount, s.AGPRCount, sqlJSON(ext))
	}
	if err := w.db.exec(info0.String()); err != nil {
		return nil, err
	}
	sql = &w.late
	return &rocpdIDs{nid: nid, pid: pid, threads: threads, queues: queues, streams: streams,
		kernels: kernels, pmc: pmcIDs, codeObjects: codeObjects, agentID: agentID}, nil
}

func readMachineID(fallback string) string {
	if b, err := os.ReadFile("/etc/machine-id"); err == nil {
		if s := strings.TrimSpace(string(b)); s != "" {
			return s + "-" + fallback
		}
	}
	return fallback
}

// track returns the sample track of a thread and category; its row is
// written in the last turn.
func (w *rocpdWriter) track(nid, pid, tid, cat int64) int64 {
	key := [3]int64{pid, tid, cat}
	if id, ok := w.tracks[key]; ok {
		return id
	}
	id := int64(len(w.tracks) + 1)
	w.tracks[key] = id
	fmt.Fprintf(&w.late, "INSERT INTO `rocpd_track%s` (id, nid, pid, tid, name_id) VALUES (%d, %d, %d, %d, %d);\n",
		w.suffix, id, nid, pid, tid, cat)
	return id
}

// markerJSON is a marker event's extdata: {"message": msg}.
func (w *rocpdWriter) markerJSON(msg string) string {
	w.json = append(w.json[:0], `{"message":`...)
	w.json = appendSQLiteJSON(w.json, msg)
	w.json = append(w.json, '}')
	return string(w.json)
}

// writeEvents reads a process's events and hands their rows to the
// encoder goroutine.
func (w *rocpdWriter) writeEvents(p *model.Catalogue, r *model.SpoolView, ids *rocpdIDs) error {
	e := &w.enc
	e.start()
	err := w.readEvents(p, r, ids)
	if err == nil {
		err = w.writePCSamples(p, ids)
	}
	if eerr := e.stop(); eerr != nil {
		err = eerr
	}
	return err
}

func (w *rocpdWriter) readEvents(p *model.Catalogue, r *model.SpoolView, ids *rocpdIDs) error {
	e := &w.enc
	empty := w.str("")
	// Counter samples refer to their dispatch's event; remember that only
	// when the process has samples (counter runs serialise dispatches, so
	// they are few).
	var dispatchEvents map[uint64]int64
	var sampled dispatchSet
	// A dispatch's samples can be read before its record: the shim writes
	// each on whichever thread saw it complete (the counter read on an app
	// thread, the dispatch on the queue's completion thread), and the order
	// layer keeps them in spool order when the samples' runs are in order.
	// Such samples wait here for their dispatch's event (few: a window of
	// one or two dispatches); before, they got no event (NULL) and a client
	// lost the dispatch's counters (rocprofiler-compute's "Active CUs" of
	// vadd empty, once in CI).
	type pmcValue struct{ counter, bits int64 }
	waiting := map[uint64][]pmcValue{}
	if p.Counts[model.DomCounter] > 0 {
		dispatchEvents = make(map[uint64]int64, len(p.Sampled))
		sampled = newDispatchSet(p.Sampled)
	}
	catKernel, catCopy := w.str("KERNEL_DISPATCH"), w.str("MEMORY_COPY")
	catAlloc, catScratch := w.str("MEMORY_ALLOCATION"), w.str("SCRATCH_MEMORY")
	// API names and categories by (domain, function): two map look-ups
	// fewer per call.
	type apiKey struct {
		dom tracing.APIDomain
		fn  uint32
	}
	// The name is interned when a region first needs it.
	type apiStrs struct {
		cat, name int64
		text      string
	}
	apiIDs := map[apiKey]*apiStrs{}
	var lastAPI apiKey
	var lastStrs *apiStrs
	// Records come in bursts per thread: the last thread's id is kept.
	lastTID, lastThread := uint32(0), ids.threads[0]
	thread := func(tid uint32) int64 {
		if tid != lastTID {
			lastTID, lastThread = tid, ids.threads[tid]
		}
		return lastThread
	}
	// Copy directions' names by direction.
	var copyNames [8]int64
	copyName := func(d tracing.CopyDirection) int64 {
		if int(d) >= len(copyNames) {
			return w.str(d.String())
		}
		if copyNames[d] == 0 {
			copyNames[d] = w.str(d.String())
		}
		return copyNames[d]
	}
	// event rows: category, stack_id, parent_stack_id, correlation_id.
	api := func(s *apiStrs, tid uint32, corr, start, end uint64, ext string) (int64, error) {
		ev, err := e.add(tabEvent, ext, s.cat, int64(corr), 0, 0)
		if err != nil {
			return 0, err
		}
		if start == end {
			_, err = e.add(tabSample, "", w.track(ids.nid, ids.pid, thread(tid), s.cat), int64(start), ev)
			return ev, err
		}
		if s.name == 0 {
			s.name = w.str(s.text)
		}
		_, err = e.add(tabRegion, "", ids.nid, ids.pid, thread(tid), int64(start), int64(end), s.name, ev)
		return ev, err
	}
	var args model.ArgDecoder
	var texts []string
	// A HIP call's arguments: one rocpd_arg row each (position from 0, C
	// type, name, value), as rocprofv3 writes them. A hipStream_t also
	// names its stream row in extdata, which the stream_args view joins.
	writeArgs := func(ev int64, a *tracing.APICall) error {
		decoded := args.Decode(a)
		for i := range decoded {
			arg := &decoded[i]
			ext := ""
			if model.IsStreamArg(arg) {
				if h, ok := arg.Handle(); ok {
					if n, ok := p.StreamNumbers.Number(h, a.CorrelationID); ok {
						if id, ok := ids.streams[n]; ok {
							ext = `{"stream_id":` + strconv.FormatInt(id, 10) + `}`
						}
					}
				}
			}
			texts = append(texts[:0], arg.Type, arg.Name, arg.Value)
			if _, err := e.addText(tabArg, ext, texts, ev, int64(arg.Position)); err != nil {
				return err
			}
		}
		return nil
	}
	for r.Next() {
		var err error
		var ev int64
		switch r.Kind() {
		case tracing.KindHIPAPI, tracing.KindHSAAPI, tracing.KindRCCLAPI:
			a := r.APICall()
			k := apiKey{a.Domain, a.Function}
			s := lastStrs
			if k != lastAPI || s == nil {
				if s = apiIDs[k]; s == nil {
					s = &apiStrs{cat: w.str(a.Domain.String()), text: p.FuncName(a.Domain, a.Function)}
					apiIDs[k] = s
				}
				lastAPI, lastStrs = k, s
			}
			if ev, err = api(s, a.TID, p.CID(a.CorrelationID), a.Start, a.End, ""); err == nil && len(a.Args) > 0 {
				err = writeArgs(ev, &a)
			}
		case tracing.KindMarker:
			m := r.Marker()
			msg := model.MarkerName(&m)
			w.str(msg)
			s := apiStrs{cat: w.str(m.Domain.String()), text: m.Function.String()}
			_, err = api(&s, m.TID, p.CID(m.CorrelationID), m.Start, m.End, w.markerJSON(msg))
		case tracing.KindKernelDispatch:
			d := r.KernelDispatch()
			corr := int64(p.CID(d.CorrelationID))
			if ev, err = e.add(tabEvent, "", catKernel, corr, corr, 0); err != nil {
				return err
			}
			if dispatchEvents != nil && sampled.has(d.DispatchID) {
				dispatchEvents[d.DispatchID] = ev
				for _, v := range waiting[d.DispatchID] {
					if _, err = e.add(tabPMC, "", ev, v.counter, v.bits); err != nil {
						return err
					}
				}
				delete(waiting, d.DispatchID)
			}
			_, err = e.add(tabDispatch, "", ids.nid, ids.pid, thread(d.TID), ids.agentID(d.AgentNode),
				ids.kernels[d.KernelID], int64(d.DispatchID), ids.queues[d.QueueID], ids.streams[d.StreamID],
				int64(d.Start), int64(d.End), int64(d.PrivateSegmentSize), int64(d.GroupSegmentSize),
				int64(d.Workgroup[0]), int64(d.Workgroup[1]), int64(d.Workgroup[2]),
				int64(d.Grid[0]), int64(d.Grid[1]), int64(d.Grid[2]), w.regionName(p, &d, empty), ev)
		case tracing.KindMemoryCopy:
			c := r.MemoryCopy()
			corr := int64(p.CID(c.CorrelationID))
			if ev, err = e.add(tabEvent, "", catCopy, corr, corr, 0); err != nil {
				return err
			}
			_, err = e.add(tabCopy, "", ids.nid, ids.pid, thread(c.TID), int64(c.Start), int64(c.End),
				copyName(c.Direction), ids.agentID(c.DstAgentNode), int64(c.DstAddress),
				ids.agentID(c.SrcAgentNode), int64(c.SrcAddress), int64(c.Bytes), ids.streams[c.StreamID], ev)
		case tracing.KindMemoryAllocation:
			a := r.MemoryAllocation()
			if ev, err = e.add(tabEvent, "", catAlloc, int64(p.CID(a.CorrelationID)), 0, 0); err != nil {
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
				agent = ids.agentID(a.AgentNode)
			}
			_, err = e.add(tabAlloc, "", ids.nid, ids.pid, thread(a.TID), agent, typ, level,
				int64(a.Start), int64(a.End), int64(a.Address), int64(a.Size), ids.queues[0], ids.streams[0], ev)
		case tracing.KindScratchMemory:
			s := r.ScratchMemory()
			if ev, err = e.add(tabEvent, "", catScratch, int64(p.CID(s.CorrelationID)), 0, 0); err != nil {
				return err
			}
			typ, agent := int64(1), int64(sqlNull)
			switch s.Operation {
			case tracing.ScratchAlloc:
				agent = ids.agentID(s.AgentNode)
			case tracing.ScratchFree:
				typ = 2
			default:
				typ = 4
			}
			q, ok := ids.queues[s.QueueID]
			if !ok {
				q = ids.queues[0]
			}
			_, err = e.add(tabAlloc, `{"flags":"`+strconv.FormatInt(int64(s.Flags), 10)+`"}`,
				ids.nid, ids.pid, thread(s.TID), agent, typ, 3, int64(s.Start), int64(s.End), 0,
				int64(s.Size), q, ids.streams[0], ev)
		case tracing.KindCounterSample:
			c := r.CounterSample()
			v := pmcValue{ids.pmc[p.CounterID(&c)], int64(math.Float64bits(c.Value))}
			ev, ok := dispatchEvents[c.DispatchID]
			if !ok {
				waiting[c.DispatchID] = append(waiting[c.DispatchID], v)
				continue
			}
			_, err = e.add(tabPMC, "", ev, v.counter, v.bits)
		}
		if err != nil {
			return err
		}
	}
	// Samples whose dispatch has no record (it was lost) keep no event, as
	// before; in dispatch order, so the file does not depend on map order.
	orphans := make([]uint64, 0, len(waiting))
	for id := range waiting {
		orphans = append(orphans, id)
	}
	sort.Slice(orphans, func(i, j int) bool { return orphans[i] < orphans[j] })
	for _, id := range orphans {
		for _, v := range waiting[id] {
			if _, err := e.add(tabPMC, "", sqlNull, v.counter, v.bits); err != nil {
				return err
			}
		}
	}
	return nil
}

// dispatchSet answers "does this dispatch have counter samples" for every
// dispatch of a counter run: a bitmap when the ids are dense enough (they
// count up from 1), the scan's map otherwise.
type dispatchSet struct {
	bits []uint64
	m    map[uint64]struct{}
}

func newDispatchSet(m map[uint64]struct{}) dispatchSet {
	var top uint64
	for id := range m {
		top = max(top, id)
	}
	// At most 64 bits of bitmap per member, so never much more than the map.
	if top/64 > uint64(len(m)) {
		return dispatchSet{m: m}
	}
	bits := make([]uint64, top/64+1)
	for id := range m {
		bits[id/64] |= 1 << (id % 64)
	}
	return dispatchSet{bits: bits}
}

func (s dispatchSet) has(id uint64) bool {
	if s.bits == nil {
		_, ok := s.m[id]
		return ok
	}
	return id/64 < uint64(len(s.bits)) && s.bits[id/64]&(1<<(id%64)) != 0
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
	// The rank table's variables (docs/mpi.md, placeholder.LauncherOf):
	// SLURM_STEP_ID tells an srun task from the batch step.
	for _, prefix := range []string{"OMPI_COMM_WORLD_", "PMI_", "PMIX_RANK", "PMIX_NAMESPACE", "SLURM_PROCID", "SLURM_JOB_ID",
		"SLURM_NTASKS", "SLURM_LOCALID", "SLURM_STEP_ID", "SLURM_STEPID", "SLURM_STEP_NUM_TASKS", "SLURM_RESTART_COUNT",
		"MV2_COMM_WORLD_", "MPI_RANK", "MPI_LOCALRANKID", "MPI_RANKID", "MPI_SIZE", "MPI_LOCALNRANKS", "MPI_NRANKS"} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// regionName is a ROCpd dispatch's region_name_id: the string id of its
// enclosing ROCTx range under --kernel-rename, else none (the empty string).
func (w *rocpdWriter) regionName(p *model.Catalogue, d *tracing.KernelDispatch, none int64) int64 {
	if p.Renamer == nil {
		return none
	}
	if msg := p.Renamer.Name(d.TID, d.CorrelationID, ""); msg != "" {
		return w.str(msg)
	}
	return none
}

// sqlFlag is rocprofv3's 0/1 for a flag column.
func sqlFlag(b bool) int {
	if b {
		return 1
	}
	return 0
}
