package convert

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/analysis"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// Spools reads databases back into the record stream a run produces: one
// spool file per process in dir, as the preload library would have written
// it, so every writer in internal/output (CSV, JSON, Perfetto, OTF2,
// Parquet, ROCpd) converts a database exactly as it writes a run. Records
// stream from the tables into 64 KiB chunks; memory does not grow with the
// database. It returns the spool paths in the order tracing.List gives.
func Spools(dir string, dbs []*rocpdread.DB) ([]string, error) {
	spools, err := spoolProcesses(dir, dbs, nil)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(spools))
	for i, s := range spools {
		paths[i] = s.path
	}
	return paths, nil
}

// spool is one written spool and the process it holds.
type spool struct {
	path string
	pid  int64
	rank int    // -1 unknown
	host string // "" unknown
}

// spoolProcesses writes the databases' spools; texts, when set, collects
// their PC samples' instruction texts.
func spoolProcesses(dir string, dbs []*rocpdread.DB, texts pcTexts) ([]spool, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []spool
	for _, db := range dbs {
		for _, im := range db.Images {
			if err := imageSpools(dir, db.Only(im), &out, texts); err != nil {
				return nil, fmt.Errorf("%s: %w", db.Path, err)
			}
		}
		db.Release() // a job's thousands of databases: one's caches at a time
	}
	return out, nil
}

// apiDomains maps category names to spool API domains; rocprofv3 records
// HIP under the _EXT kinds, older data without the suffix.
var apiDomains = func() map[string]tracing.APIDomain {
	m := map[string]tracing.APIDomain{"HIP_RUNTIME_API": tracing.DomainHIPRuntime, "HIP_COMPILER_API": tracing.DomainHIPCompiler}
	for d := tracing.DomainHIPRuntime; d <= tracing.DomainMarkerCoreRange; d++ {
		m[d.String()] = d
	}
	return m
}()

var markerFuncs = func() map[string]tracing.MarkerFunction {
	m := map[string]tracing.MarkerFunction{}
	for f := tracing.MarkerMark; f <= tracing.MarkerNameHIPStream; f++ {
		m[f.String()] = f
	}
	return m
}()

var copyDirections = func() map[string]tracing.CopyDirection {
	m := map[string]tracing.CopyDirection{}
	for d := tracing.CopyHostToHost; d <= tracing.CopyDeviceToDevice; d++ {
		m[d.String()] = d
	}
	return m
}()

// markerRecord rebuilds a ROCTx record. rocprof-go stores the operation and
// the printed name (message or operation); rocprofv3 stores push/pop and
// start/stop pairs under roctxRangePushA/roctxRangeStartA with the text
// aside, which the spool expresses as thread and process ranges.
func markerRecord(g *rocpdread.Region, d tracing.APIDomain, tid uint32) tracing.Marker {
	f, ok := markerFuncs[g.Name]
	if !ok {
		f = tracing.MarkerMark
	}
	msg := g.Message
	if msg != "" && msg != g.Name {
		switch f {
		case tracing.MarkerRangePush:
			f = tracing.MarkerThreadRange
		case tracing.MarkerRangeStart:
			f = tracing.MarkerProcessRange
		}
	}
	if msg == g.Name && !f.CarriesMessage() {
		msg = ""
	}
	return tracing.Marker{Domain: d, Function: f, TID: tid, CorrelationID: uint64(g.CorrelationID),
		Start: uint64(g.Start), End: uint64(g.End), Message: []byte(msg)}
}

func allocOperation(typ, level string) tracing.AllocOperation {
	switch {
	case typ == "ALLOC" && level == "VIRTUAL":
		return tracing.AllocVMemAllocate
	case typ == "ALLOC":
		return tracing.AllocAllocate
	case level == "VIRTUAL":
		return tracing.AllocVMemFree
	}
	return tracing.AllocFree
}

func scratchOperation(typ string) tracing.ScratchOperation {
	switch typ {
	case "ALLOC":
		return tracing.ScratchAlloc
	case "FREE":
		return tracing.ScratchFree
	}
	return tracing.ScratchAsyncReclaim
}

// imageSpools writes one spool per process of a single-image database.
func imageSpools(dir string, db *rocpdread.DB, out *[]spool, texts pcTexts) error {
	in, err := db.LoadInfo(db.Images[0])
	if err != nil {
		return err
	}
	pids := make([]int64, 0, len(in.Processes))
	for id := range in.Processes {
		pids = append(pids, id)
	}
	sort.Slice(pids, func(i, j int) bool { return pids[i] < pids[j] })
	writers := map[int64]*spoolWriter{}
	closeAll := func() {
		for _, w := range writers {
			w.abort()
		}
	}
	defer closeAll()
	open := func(pid int64) (*spoolWriter, error) {
		if w, ok := writers[pid]; ok {
			return w, nil
		}
		p, ok := in.Processes[pid]
		if !ok {
			p = &rocpdread.Process{PID: pid, Rank: -1}
		}
		n := len(*out) + 1
		info := processInfo(p)
		// Spools sort by start time: keep the databases' order by numbering.
		info.StartBoottimeNs = uint64(n)
		if p.ClockRealtimeNs != 0 {
			// What is read of the pair is its difference, the node's
			// realtime-boottime offset (the Perfetto writer lines nodes up
			// with it): kept, around the ordering number.
			info.StartRealtimeNs = p.ClockRealtimeNs - p.ClockBoottimeNs + info.StartBoottimeNs
		}
		path := filepath.Join(dir, fmt.Sprintf("rpg-%d-%d-0.spool", p.PID, n))
		w, err := newSpoolWriter(path, info)
		if err != nil {
			return nil, err
		}
		*out = append(*out, spool{path: path, pid: p.PID, rank: p.Rank, host: p.Hostname})
		writers[pid] = w
		return w, w.catalogue(db, in)
	}
	for _, pid := range pids {
		if _, err := open(pid); err != nil {
			return err
		}
	}
	node := func(agent int64) uint32 {
		if a, ok := in.Agents[agent]; ok {
			return uint32(a.Absolute)
		}
		return uint32(agent)
	}
	err = db.Dispatches(func(_ *rocpdread.Info, d *rocpdread.Dispatch) error {
		w, err := open(d.PID)
		if err != nil {
			return err
		}
		s := in.Symbol(d.KernelID)
		return w.add(tracing.KernelDispatch{AgentNode: node(d.AgentID), TID: uint32(in.TID(d.TID)),
			QueueID: uint64(d.QueueID), StreamID: uint64(d.StreamID), DispatchID: uint64(d.DispatchID),
			KernelID: uint64(d.KernelID), CorrelationID: uint64(d.CorrelationID),
			Start: uint64(d.Start), End: uint64(d.End),
			Grid:               [3]uint32{uint32(d.Grid[0]), uint32(d.Grid[1]), uint32(d.Grid[2])},
			Workgroup:          [3]uint32{uint32(d.Workgroup[0]), uint32(d.Workgroup[1]), uint32(d.Workgroup[2])},
			GroupSegmentSize:   uint32(d.GroupSegmentSize),
			PrivateSegmentSize: uint32(d.PrivateSegmentSize),
			VGPRCount:          uint32(s.ArchVGPRCount), AGPRCount: uint32(s.AccumVGPRCount), SGPRCount: uint32(s.SGPRCount)})
	})
	if err != nil {
		return err
	}
	err = db.Regions(func(_ *rocpdread.Info, g *rocpdread.Region) error {
		d, ok := apiDomains[g.Category]
		if !ok {
			return nil // RCCL, rocDecode, ...: no spool record kind yet
		}
		w, err := open(g.PID)
		if err != nil {
			return err
		}
		tid := uint32(in.TID(g.TID))
		if analysis.CategoryDomain(g.Category) == analysis.Marker {
			return w.add(markerRecord(g, d, tid))
		}
		return w.add(tracing.APICall{Domain: d, Function: w.function(d, g.Name), TID: tid,
			CorrelationID: uint64(g.CorrelationID), Start: uint64(g.Start), End: uint64(g.End)})
	})
	if err != nil {
		return err
	}
	err = db.Copies(func(_ *rocpdread.Info, c *rocpdread.Copy) error {
		w, err := open(c.PID)
		if err != nil {
			return err
		}
		return w.add(tracing.MemoryCopy{Direction: copyDirections[c.Direction], SrcAgentNode: node(c.SrcAgent),
			DstAgentNode: node(c.DstAgent), TID: uint32(in.TID(c.TID)), Bytes: uint64(c.Size),
			StreamID: uint64(c.StreamID), CorrelationID: uint64(c.CorrelationID), Start: uint64(c.Start),
			End: uint64(c.End), SrcAddress: uint64(c.SrcAddress), DstAddress: uint64(c.DstAddress)})
	})
	if err != nil {
		return err
	}
	err = db.Allocations(func(_ *rocpdread.Info, a *rocpdread.Allocation) error {
		w, err := open(a.PID)
		if err != nil {
			return err
		}
		var agent uint32
		if a.HasAgent {
			agent = node(a.AgentID)
		}
		if a.Level == "SCRATCH" {
			return w.add(tracing.ScratchMemory{Operation: scratchOperation(a.Type), AgentNode: agent,
				TID: uint32(in.TID(a.TID)), Flags: uint32(a.Flags), QueueID: uint64(a.QueueID), Size: uint64(a.Size),
				CorrelationID: uint64(a.CorrelationID), Start: uint64(a.Start), End: uint64(a.End)})
		}
		return w.add(tracing.MemoryAllocation{Operation: allocOperation(a.Type, a.Level), AgentNode: agent,
			TID: uint32(in.TID(a.TID)), Address: uint64(a.Address), Size: uint64(a.Size),
			CorrelationID: uint64(a.CorrelationID), Start: uint64(a.Start), End: uint64(a.End)})
	})
	if err != nil {
		return err
	}
	counterIDs := map[string]uint64{}
	err = db.CounterSums(func(_ *rocpdread.Info, d *rocpdread.Dispatch, name string, v float64) error {
		w, err := open(d.PID)
		if err != nil {
			return err
		}
		id, ok := counterIDs[name]
		if !ok {
			id = uint64(len(counterIDs) + 1)
			counterIDs[name] = id
		}
		return w.add(tracing.CounterSample{DispatchID: uint64(d.DispatchID), CounterID: id, Value: v,
			AgentNode: node(d.AgentID), Name: []byte(name)})
	})
	if err != nil {
		return err
	}
	pcs, err := newPCSpooler(db, in, texts)
	if err != nil {
		return err
	}
	err = db.PCSamples(func(_ *rocpdread.Info, s *rocpdread.PCSample) error {
		w, err := open(s.PID)
		if err != nil {
			return err
		}
		return pcs.add(w, node(s.AgentID), s)
	})
	if err == nil {
		err = pcs.flush()
	}
	if err != nil {
		return err
	}
	for _, pid := range pids {
		if err := writers[pid].close(); err != nil {
			return err
		}
		delete(writers, pid)
	}
	for pid, w := range writers {
		if err := w.close(); err != nil {
			return err
		}
		delete(writers, pid)
	}
	return nil
}

// processInfo rebuilds a spool header from a process row.
func processInfo(p *rocpdread.Process) tracing.ProcessInfo {
	info := tracing.ProcessInfo{PID: int32(p.PID), PPID: int32(p.PPID), PSize: -1, Hostname: p.Hostname,
		Argv: strings.Fields(p.Command)}
	if len(info.Argv) > 0 {
		info.Exe = info.Argv[0]
	}
	var env map[string]any
	if json.Unmarshal([]byte(p.Environment), &env) == nil {
		for k, v := range env {
			info.Environ = append(info.Environ, fmt.Sprintf("%s=%v", k, v))
		}
		sort.Strings(info.Environ)
	}
	return info
}

// spoolWriter streams one spool file through tracing.Writer, and names
// the API functions it meets.
type spoolWriter struct {
	f     *os.File
	path  string
	w     *tracing.Writer
	funcs map[tracing.APIDomain]map[string]uint32
}

// newSpoolWriter creates the spool, a scratch file in Run's private
// temporary directory: O_EXCL|O_NOFOLLOW, 0600. Its records are the
// process's main thread's.
func newSpoolWriter(path string, info tracing.ProcessInfo) (*spoolWriter, error) {
	f, err := atomicfile.CreatePrivate(path)
	if err != nil {
		return nil, err
	}
	return &spoolWriter{f: f, path: path, w: tracing.NewWriter(f, info, uint32(info.PID)),
		funcs: map[tracing.APIDomain]map[string]uint32{}}, nil
}

// add appends one published record.
func (w *spoolWriter) add(r encoding.BinaryAppender) error { return w.w.Add(r) }

// function returns the spool's id of an API function name, announcing new
// names with a string record (the writers prefer those to their tables).
func (w *spoolWriter) function(d tracing.APIDomain, name string) uint32 {
	m := w.funcs[d]
	if m == nil {
		m = map[string]uint32{}
		w.funcs[d] = m
	}
	if id, ok := m[name]; ok {
		return id
	}
	id := uint32(len(m) + 1)
	m[name] = id
	_ = w.add(tracing.String{Table: uint32(d), ID: uint64(id), Value: []byte(name)})
	return id
}

// catalogue writes the records that describe the process: agents, code
// objects, kernel symbols.
func (w *spoolWriter) catalogue(db *rocpdread.DB, in *rocpdread.Info) error {
	ids := make([]int64, 0, len(in.Agents))
	for id := range in.Agents {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		a := in.Agents[id]
		var ai tracing.AgentInfo
		ai.Values[tracing.AgentNodeID] = uint64(a.Absolute)
		ai.Values[tracing.AgentLogicalNodeID] = uint64(a.Logical)
		ai.Values[tracing.AgentLogicalNodeTypeID] = uint64(a.TypeIndex)
		ai.Values[tracing.AgentTypeField] = uint64(tracing.AgentGPU)
		if a.Type == "CPU" {
			ai.Values[tracing.AgentTypeField] = uint64(tracing.AgentCPU)
		}
		ai.Values[22] = uint64(a.UUID) // Device_Id, where the ROCpd writer takes uuid from
		ai.Name, ai.VendorName, ai.ProductName, ai.ModelName = a.Name, a.Vendor, a.Product, a.Model
		if err := w.add(ai); err != nil {
			return err
		}
	}
	cos, err := db.CodeObjects(in)
	if err != nil {
		return err
	}
	for _, c := range cos {
		st := uint32(2)
		if c.StorageType == "FILE" {
			st = 1
		}
		var node uint32
		if a, ok := in.Agents[c.AgentID]; ok {
			node = uint32(a.Absolute)
		}
		if err := w.add(tracing.CodeObject{CodeObjectID: uint64(c.ID), Operation: tracing.CodeObjectLoad,
			AgentNode: node, StorageType: st, LoadBase: uint64(c.LoadBase), LoadSize: uint64(c.LoadSize),
			LoadDelta: uint64(c.LoadDelta), URI: []byte(c.URI)}); err != nil {
			return err
		}
	}
	kids := make([]int64, 0, len(in.Symbols))
	for id := range in.Symbols {
		kids = append(kids, id)
	}
	sort.Slice(kids, func(i, j int) bool { return kids[i] < kids[j] })
	for _, id := range kids {
		s := in.Symbols[id]
		name := s.KernelName
		if name == "" {
			name = s.Name()
		}
		if err := w.add(tracing.KernelSymbol{KernelID: uint64(s.ID), CodeObjectID: uint64(s.CodeObjectID),
			KernelObject: uint64(s.KernelObject), KernargSize: uint32(s.KernargSize),
			GroupSegmentSize: uint32(s.GroupSegmentSize), PrivateSegmentSize: uint32(s.PrivateSegment),
			VGPRCount: uint32(s.ArchVGPRCount), AGPRCount: uint32(s.AccumVGPRCount), SGPRCount: uint32(s.SGPRCount),
			EntryOffset: entryOffset(s.EntryOffset), Name: []byte(name)}); err != nil {
			return err
		}
	}
	return nil
}

// close writes the last chunk and the header.
func (w *spoolWriter) close() error {
	err := w.w.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	return err
}

func (w *spoolWriter) abort() {
	if w.f != nil {
		w.f.Close()
		os.Remove(w.path)
		w.f = nil
	}
}

// entryOffset is a kernel's entry offset as the symbol record holds it;
// one outside its 32 bits (no code object is that big) is unknown (0).
func entryOffset(v int64) int32 {
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0
	}
	return int32(v)
}
