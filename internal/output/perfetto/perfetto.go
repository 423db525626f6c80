package perfetto

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"io"
	"path/filepath"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/placeholder"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// perfettoWriter streams TracePackets: track descriptors when a track is
// first used, then one BEGIN and one END packet per slice. Trace processor
// sorts events by timestamp on import, so packets follow spool order.
type perfettoWriter struct {
	w      *bufio.Writer
	pkt    pbMsg // packet being built
	ev     pbMsg // track event being built
	ann    pbMsg // debug annotation being built
	tracks map[uint64]bool
	first  bool
	hosts  map[string]int32 // host -> its number in the trace (traceIDs)
	err    error

	// Hosts' clocks lined up (alignment): the shift added to the current
	// process's timestamps, and each host's realtime-boottime offset.
	shift      int64
	hostClocks map[string]int64
	firstClock int64

	// Names, categories and annotation names are interned: sent once, in
	// the packet that first uses them, then referred to by iid.
	cats, names, annNames map[string]uint64
	interned              pbMsg // InternedData entries for the next packet
	entry                 pbMsg

	// The buffer cap (--perfetto-buffer-size, capped.go); nil: none, every
	// packet goes straight to w.
	cap *bufferCap

	// The parts (parts.go); nil: one file whatever its size. part counts
	// the parts started: a writer caching tracks forgets them when it
	// changes.
	parts *partLimit
	part  int
}

func (pw *perfettoWriter) iid(table map[string]uint64, field protowire.Number, s string) uint64 {
	if id, ok := table[s]; ok {
		return id
	}
	id := uint64(len(table) + 1)
	table[s] = id
	if pw.cap != nil {
		pw.cap.newIIDs = append(pw.cap.newIIDs, internedKey{table, s})
	}
	pw.entry = pbMsg(pw.entry[:0]).u(pfInternedIID, id).s(pfInternedName, s)
	pw.interned = pw.interned.msg(field, pw.entry)
	return id
}

// traceIDs are the pid and tids a process of host has in the trace. The
// trace processor knows a process by its pid and a thread by its tid, so
// the processes of a merged run from several nodes would merge when two
// nodes reuse a pid: the first host's processes keep their own ids, those
// of the n-th other host get n<<22 | id (Linux ids are below 2^22), or a
// hash of host and id beyond 511 hosts. Track names keep the real ones.
func (pw *perfettoWriter) traceIDs(host string, pid int32) (int32, func(uint32) int64) {
	if pw.hosts == nil {
		pw.hosts = map[string]int32{}
	}
	n, ok := pw.hosts[host]
	if !ok {
		n = int32(len(pw.hosts))
		pw.hosts[host] = n
	}
	const idBits = 22
	id := func(v uint32) int32 {
		switch {
		case n == 0:
			return int32(v)
		case n < 1<<(31-idBits):
			return n<<idBits | int32(v&(1<<idBits-1))
		default:
			return int32(uuidOf(host, v)>>33) | 1<<30
		}
	}
	return id(uint32(pid)), func(tid uint32) int64 { return int64(id(tid)) }
}

func uuidOf(parts ...any) uint64 {
	h := fnv.New64a()
	fmt.Fprint(h, parts...)
	return h.Sum64() | 1 // never the implicit global track 0
}

// mix64 spreads a seed-mixed id over 64 bits (splitmix64's finaliser).
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x | 1
}

func (pw *perfettoWriter) emit(pkt pbMsg) {
	pkt = pkt.u(pfPacketSequenceID, pfSequenceID)
	if pw.first {
		pkt = pkt.u(pfPacketSequenceFlags, pfSeqIncrementalStateCleared)
		pw.first = false
	} else {
		pkt = pkt.u(pfPacketSequenceFlags, pfSeqNeedsIncrementalState)
	}
	var hdr [16]byte
	h := protowire.AppendTag(hdr[:0], pfTracePacket, protowire.BytesType)
	h = protowire.AppendVarint(h, uint64(len(pkt)))
	if pw.cap != nil {
		// Held until the record's packets are complete (commit).
		pw.cap.pending = append(append(pw.cap.pending, h...), pkt...)
		return
	}
	if pw.err == nil {
		if _, err := pw.w.Write(h); err != nil {
			pw.err = err
		} else if _, err := pw.w.Write(pkt); err != nil {
			pw.err = err
		}
	}
}

// track emits a descriptor once per uuid; desc fills the TrackDescriptor.
func (pw *perfettoWriter) track(uuid uint64, desc func(pbMsg) pbMsg) {
	if pw.tracks[uuid] {
		return
	}
	pw.tracks[uuid] = true
	if pw.cap != nil {
		pw.cap.newTracks = append(pw.cap.newTracks, uuid)
	}
	d := desc(pbMsg(nil).u(pfTrackUUID, uuid))
	pw.emit(pbMsg(pw.pkt[:0]).msg(pfPacketTrackDescriptor, d))
}

// perfettoSliceAnnotations are the annotations every API slice carries; a
// call argument of the same name is written as arg_<name>.
var perfettoSliceAnnotations = map[string]bool{"begin_ns": true, "end_ns": true, "delta_ns": true,
	"tid": true, "kind": true, "operation": true, "corr_id": true}

// annotation helpers append debug annotations to the current event.
func (pw *perfettoWriter) annU(name string, v uint64) {
	a := pbMsg(pw.ann[:0]).u(pfDebugNameIID, pw.iid(pw.annNames, pfInternedAnnNames, name)).u(pfDebugUint, v)
	pw.ann = a
	pw.ev = pw.ev.msg(pfEventDebug, a)
}

func (pw *perfettoWriter) annS(name, v string) {
	a := pbMsg(pw.ann[:0]).u(pfDebugNameIID, pw.iid(pw.annNames, pfInternedAnnNames, name)).s(pfDebugString, v)
	pw.ann = a
	pw.ev = pw.ev.msg(pfEventDebug, a)
}

// beginSlice starts a BEGIN event; the caller adds annotations, then calls
// endSlice.
func (pw *perfettoWriter) beginSlice(track uint64, category, name string, flow uint64, start, end uint64) {
	ev := pbMsg(pw.ev[:0]).u(pfEventType, pfTypeSliceBegin).u(pfEventTrackUUID, track).
		u(pfEventCategoryIIDs, pw.iid(pw.cats, pfInternedCategories, category)).
		u(pfEventNameIID, pw.iid(pw.names, pfInternedNames, name))
	if flow != 0 {
		ev = ev.fixed64(pfEventFlowIDs, flow)
	}
	pw.ev = ev
	pw.annU("begin_ns", start)
	pw.annU("end_ns", end)
	pw.annU("delta_ns", model.SpanClamped(start, end))
}

// at is a timestamp of the current process on the trace's clock
// (alignment).
func (pw *perfettoWriter) at(ts uint64) uint64 {
	if pw.shift < 0 && uint64(-pw.shift) > ts {
		return 0
	}
	return uint64(int64(ts) + pw.shift)
}

// alignment is the shift that puts a process's timestamps on the trace's
// clock. Timestamps are CLOCK_BOOTTIME of the process's node, which counts
// from that node's boot (and a time namespace's offset): two nodes' are
// unrelated. Each spool records the realtime and boottime clocks read
// together at its start; realtime is what NTP keeps in step across nodes,
// so each host's realtime-boottime offset (from its first process) maps
// its timestamps onto the first host's boottime: ts + offset(host) -
// offset(first host). The first host's processes, and so every trace of a
// single node, are not shifted; a process without a realtime reading
// neither. The annotations (begin_ns, end_ns) keep the recorded values.
func (pw *perfettoWriter) alignment(info *tracing.ProcessInfo) int64 {
	if info.StartRealtimeNs == 0 {
		return 0
	}
	off := int64(info.StartRealtimeNs) - int64(info.StartBoottimeNs)
	if pw.hostClocks == nil {
		pw.hostClocks, pw.firstClock = map[string]int64{}, off
	}
	host, ok := pw.hostClocks[info.Hostname]
	if !ok {
		host = off
		pw.hostClocks[info.Hostname] = off
	}
	return host - pw.firstClock
}

func (pw *perfettoWriter) endSlice(track uint64, start, end uint64) {
	start, end = pw.at(start), pw.at(end)
	pkt := pbMsg(pw.pkt[:0]).u(pfPacketTimestamp, start).msg(pfPacketTrackEvent, pw.ev)
	if len(pw.interned) > 0 {
		pkt = pkt.msg(pfPacketInternedData, pw.interned)
		pw.interned = pw.interned[:0]
	}
	pw.emit(pkt)
	ev := pbMsg(pw.ev[:0]).u(pfEventType, pfTypeSliceEnd).u(pfEventTrackUUID, track)
	pw.emit(pbMsg(pw.pkt[:0]).u(pfPacketTimestamp, end).msg(pfPacketTrackEvent, ev))
	pw.ev = ev
}

func (pw *perfettoWriter) counter(track uint64, ts uint64, v float64) {
	ev := pbMsg(pw.ev[:0]).u(pfEventType, pfTypeCounter).u(pfEventTrackUUID, track).double(pfEventDoubleValue, v)
	pw.ev = ev
	pw.emit(pbMsg(pw.pkt[:0]).u(pfPacketTimestamp, pw.at(ts)).msg(pfPacketTrackEvent, ev))
}

// Write writes a Perfetto protobuf trace (results.pftrace): API
// slices on their thread's track, kernels and copies on stream tracks (or
// queue tracks with GroupByQueue), counter tracks for copy bytes,
// allocations, scratch memory and PMC values, and flows from each API call
// to the work it enqueued (the correlation id, scoped by process).
//
// With Config.PerfettoBufferBytes the trace holds at most that many bytes of
// packets, as rocprofv3's Perfetto buffer does: the records that do not fit
// are left out whole (the discard policy keeps the first ones, the ring
// buffer the last ones; capped.go) and counted in in.PerfettoCapped.
func Write(w io.Writer, in *model.Input) error {
	if in.Config.PerfettoBufferBytes > 0 {
		return writeCapped(w, in, nil)
	}
	return writeTrace(w, in, nil, nil)
}

// writeTrace writes every process's records to w, through the cap when
// there is one, and in parts when parts is not nil (w is then its files).
func writeTrace(w io.Writer, in *model.Input, c *bufferCap, parts *partLimit) error {
	pw := &perfettoWriter{w: bufio.NewWriterSize(w, 1<<20), tracks: map[uint64]bool{}, first: true,
		cats: map[string]uint64{}, names: map[string]uint64{}, annNames: map[string]uint64{}, cap: c, parts: parts}
	if c != nil {
		c.firstAtStart = true
	}
	err := in.OpenEach(func(p *model.Catalogue, r *model.SpoolView) error {
		pw.writeProcess(p, r)
		return pw.err
	})
	if err != nil {
		return err
	}
	if pw.err != nil {
		return pw.err
	}
	return pw.w.Flush()
}

func (pw *perfettoWriter) writeProcess(p *model.Catalogue, r *model.SpoolView) {
	pid := p.Info.PID
	// The trace's pid and tids: the process's own on the first host of the
	// trace, unique stand-ins on the others (traceIDs).
	vpid, vtid := pw.traceIDs(p.Info.Hostname, pid)
	pw.shift = pw.alignment(&p.Info)
	procTrack := uuidOf("process", vpid, p.Info.StartBoottimeNs)
	name := "process"
	if len(p.Info.Argv) > 0 {
		name = filepath.Base(p.Info.Argv[0])
	}
	// A rank's track group names its rank, host and pid: the ranks of a
	// merged run are told apart, and so are equal pids of two nodes.
	threadName := name
	if l := placeholder.LauncherOf(p.Info.Getenv); l.Name != "" {
		host := p.Info.Hostname
		if host == "" {
			host = "UNKNOWN_HOSTNAME"
		}
		name = fmt.Sprintf("rank %s (%s, %d)", l.Rank, host, pid)
	}
	procDesc := func(d pbMsg) pbMsg {
		return d.msg(pfTrackProcess, pbMsg(nil).i(pfProcessPID, int64(vpid)).s(pfProcessName, name))
	}
	pw.track(procTrack, procDesc)
	// child sends a track under the process's, and the process's first
	// when a capped buffer left it out: only with a track that needs it,
	// so that a record writing nothing makes no bundle of its own (the
	// ring buffer's measured bundles and its written ones must be the
	// same, one by one).
	child := func(u uint64, desc func(pbMsg) pbMsg) {
		pw.track(procTrack, procDesc)
		pw.track(u, desc)
	}
	threadIndex := map[uint32]int{}
	n := 0
	for _, tid := range p.Threads {
		if int32(tid) != pid {
			n++
			threadIndex[tid] = n
		}
	}
	trackNames := map[uint64]string{} // slice tracks' names, for their overlap lanes
	threadTracks := map[uint32]uint64{}
	threadTrack := func(tid uint32) uint64 {
		if u, ok := threadTracks[tid]; ok {
			return u
		}
		u := uuidOf("thread", vpid, p.Info.StartBoottimeNs, tid)
		threadTracks[tid] = u
		label := threadName
		if i, ok := threadIndex[tid]; ok {
			label = fmt.Sprintf("THREAD %d (%d)", i, tid)
		}
		trackNames[u] = label
		child(u, func(d pbMsg) pbMsg {
			td := pbMsg(nil).i(pfThreadPID, int64(vpid)).i(pfThreadTID, vtid(tid)).s(pfThreadName, label)
			return d.u(pfTrackParent, procTrack).msg(pfTrackThread, td)
		})
		return u
	}
	// Slices that would not nest on their track (see perfettoLayout) go to
	// overlap lanes: child tracks of it.
	places, err := perfettoLayout(p, r)
	if err != nil {
		if pw.err == nil {
			pw.err = err
		}
		return
	}
	defer places.close()
	var seq uint32
	var args model.ArgDecoder
	place := func(t uint64, start, end uint64) (uint64, uint64, uint64) {
		pl, ok := places.at(seq)
		if !ok {
			return t, start, end
		}
		if pl.lane > 0 {
			base := t
			t = uuidOf("lane", base, pl.lane)
			pw.track(t, func(d pbMsg) pbMsg {
				return d.u(pfTrackParent, base).s(pfTrackName, fmt.Sprintf("%s (overlap %d)", trackNames[base], pl.lane))
			})
		}
		return t, pl.start, pl.end
	}
	// Device and counter tracks are looked up by a small key; the label is
	// only formatted the first time.
	type trackKey struct {
		kind    int
		a, b, c uint64
	}
	keyed := map[trackKey]uint64{}
	cached := func(k trackKey, mk func() uint64) uint64 {
		if u, ok := keyed[k]; ok {
			return u
		}
		u := mk()
		keyed[k] = u
		return u
	}
	named := func(label string) uint64 {
		u := uuidOf("track", vpid, p.Info.StartBoottimeNs, label)
		trackNames[u] = label
		child(u, func(d pbMsg) pbMsg { return d.u(pfTrackParent, procTrack).s(pfTrackName, label) })
		return u
	}
	counterTrack := func(label, unit string) uint64 {
		u := uuidOf("counter", vpid, p.Info.StartBoottimeNs, label)
		child(u, func(d pbMsg) pbMsg {
			return d.u(pfTrackParent, procTrack).s(pfTrackName, label).msg(pfTrackCounter, pbMsg(nil).s(pfCounterUnitName, unit))
		})
		return u
	}
	flowSeed := uuidOf("flow", vpid, p.Info.StartBoottimeNs)
	flow := func(corr uint64) uint64 {
		if corr == 0 {
			return 0
		}
		return mix64(flowSeed ^ corr)
	}
	var dispatches map[uint64]tracing.KernelDispatch
	if p.Counts[model.DomCounter] > 0 {
		dispatches = map[uint64]tracing.KernelDispatch{}
	}
	// PMC values are summed over instances per dispatch and shown as a pulse
	// over the dispatch.
	type pmcKey struct {
		dispatch, counter uint64
		agent             uint32
	}
	var pmcOpen bool
	var pmcCur pmcKey
	var pmcSum float64
	pmcPulse := func(k pmcKey, sum float64, d tracing.KernelDispatch) {
		name := p.CounterNames[k.counter]
		for _, c := range p.Counters {
			if c.ID == k.counter {
				name = c.Name
			}
		}
		t := cached(trackKey{8, uint64(k.agent), k.counter, 0}, func() uint64 {
			return counterTrack(fmt.Sprintf("%s PMC %s", p.AgentLabel(k.agent, " "), name), "")
		})
		pw.counter(t, d.Start, sum)
		pw.counter(t, d.End, 0)
	}
	// A dispatch's samples can be read before its record (the shim writes
	// each on whichever thread saw it complete): their sums wait here for
	// the dispatch, whose times place the pulse. Before, they were left
	// out of the trace.
	type pmcPending struct {
		key pmcKey
		sum float64
	}
	pmcWaiting := map[uint64][]pmcPending{}
	pmcFlush := func() {
		if !pmcOpen {
			return
		}
		pmcOpen = false
		d, ok := dispatches[pmcCur.dispatch]
		if !ok {
			pmcWaiting[pmcCur.dispatch] = append(pmcWaiting[pmcCur.dispatch], pmcPending{pmcCur, pmcSum})
			return
		}
		pmcPulse(pmcCur, pmcSum, d)
	}

	part := pw.part
	for r.Next() {
		seq++
		if pw.part != part {
			// A new part: its tracks are described again as they are used.
			part = pw.part
			clear(threadTracks)
			clear(keyed)
		}
		pw.record(r.Kind(), p.Config.HideMarkers)
		if pw.cap != nil {
			if pw.cap.rolledBack {
				// The records left out took their track descriptors
				// with them: the next record that uses a track sends its
				// descriptor again.
				pw.cap.rolledBack = false
				clear(threadTracks)
				clear(keyed)
			}
			switch r.Kind() {
			case tracing.KindHIPAPI, tracing.KindHSAAPI, tracing.KindRCCLAPI, tracing.KindMarker, tracing.KindKernelDispatch,
				tracing.KindMemoryCopy, tracing.KindMemoryAllocation, tracing.KindScratchMemory, tracing.KindCounterSample:
				pw.cap.records++
			}
		}
		switch r.Kind() {
		case tracing.KindHIPAPI, tracing.KindHSAAPI, tracing.KindRCCLAPI:
			a := r.APICall()
			cat := model.Domains[model.KindDomain(r.Kind())].Category
			t := threadTrack(a.TID)
			t, t0, t1 := place(t, a.Start, a.End)
			pw.beginSlice(t, cat, p.FuncName(a.Domain, a.Function), flow(p.CID(a.CorrelationID)), a.Start, a.End)
			pw.annU("tid", uint64(a.TID))
			pw.annS("kind", a.Domain.String())
			pw.annS("operation", p.FuncName(a.Domain, a.Function))
			pw.annU("corr_id", p.CID(a.CorrelationID))
			// The call's arguments, one annotation each (name: value), as
			// rocprofv3's ROCpd-to-Perfetto conversion shows them.
			for _, arg := range args.Decode(&a) {
				name := arg.Name
				if perfettoSliceAnnotations[name] {
					name = "arg_" + name // e.g. hipMemcpy's kind, beside the slice's own
				}
				pw.annS(name, arg.Value)
			}
			pw.endSlice(t, t0, t1)
		case tracing.KindMarker:
			m := r.Marker()
			t := threadTrack(m.TID)
			t, t0, t1 := place(t, m.Start, m.End)
			pw.beginSlice(t, model.Domains[model.DomMarker].Category, model.MarkerName(&m), flow(p.CID(m.CorrelationID)), m.Start, m.End)
			pw.annU("tid", uint64(m.TID))
			pw.annS("kind", m.Domain.String())
			pw.annS("operation", m.Function.String())
			pw.annU("corr_id", p.CID(m.CorrelationID))
			pw.endSlice(t, t0, t1)
		case tracing.KindKernelDispatch:
			d := r.KernelDispatch()
			if dispatches != nil && p.IsSampled(d.DispatchID) {
				dispatches[d.DispatchID] = d
				for _, w := range pmcWaiting[d.DispatchID] {
					pmcPulse(w.key, w.sum, d)
				}
				delete(pmcWaiting, d.DispatchID)
			}
			var t uint64
			if p.Config.GroupByQueue {
				t = cached(trackKey{1, uint64(d.AgentNode), d.QueueID, 0}, func() uint64 {
					return named(fmt.Sprintf("COMPUTE %s QUEUE [%d] %s", p.AgentLabel(d.AgentNode, " "), d.QueueID, p.AgentType(d.AgentNode)))
				})
			} else {
				t = cached(trackKey{2, d.StreamID, 0, 0}, func() uint64 { return named(fmt.Sprintf("STREAM [%d]", d.StreamID)) })
			}
			t, t0, t1 := place(t, d.Start, d.End)
			pw.beginSlice(t, model.Domains[model.DomKernel].Category, p.KernelDemangled(d.KernelID), flow(p.CID(d.CorrelationID)), d.Start, d.End)
			pw.annU("tid", uint64(d.TID))
			pw.annS("kind", "KERNEL_DISPATCH")
			pw.annU("corr_id", p.CID(d.CorrelationID))
			pw.annU("stream_ID", d.StreamID)
			pw.annS("agent", p.AgentLabel(d.AgentNode, "-"))
			pw.annS("agent_type", p.AgentType(d.AgentNode))
			pw.annU("queue", d.QueueID-min(d.QueueID, 1))
			pw.annU("kernel_id", d.KernelID)
			pw.annU("dispatch_id", d.DispatchID)
			pw.annU("Scratch_Size", uint64(d.PrivateSegmentSize))
			pw.annU("LDS_Block_Size", uint64((d.GroupSegmentSize+511)/512*512))
			pw.annU("VGPR_Count", uint64(d.VGPRCount))
			pw.annU("Accum_VGPR_Count", uint64(d.AGPRCount))
			pw.annU("SGPR_Count", uint64(d.SGPRCount))
			pw.annU("workgroup_size", uint64(d.Workgroup[0])*uint64(d.Workgroup[1])*uint64(d.Workgroup[2]))
			pw.annU("grid_size", uint64(d.Grid[0])*uint64(d.Grid[1])*uint64(d.Grid[2]))
			pw.endSlice(t, t0, t1)
		case tracing.KindMemoryCopy:
			c := r.MemoryCopy()
			var t uint64
			if p.Config.GroupByQueue {
				t = cached(trackKey{3, uint64(c.DstAgentNode), 0, 0}, func() uint64 {
					return named(fmt.Sprintf("COPY to %s (%s)", p.AgentLabel(c.DstAgentNode, " "), p.AgentType(c.DstAgentNode)))
				})
			} else {
				t = cached(trackKey{2, c.StreamID, 0, 0}, func() uint64 { return named(fmt.Sprintf("STREAM [%d]", c.StreamID)) })
			}
			t, t0, t1 := place(t, c.Start, c.End)
			pw.beginSlice(t, model.Domains[model.DomCopy].Category, c.Direction.String(), flow(p.CID(c.CorrelationID)), c.Start, c.End)
			pw.annU("tid", uint64(c.TID))
			pw.annS("kind", "MEMORY_COPY")
			pw.annS("operation", c.Direction.String())
			pw.annU("corr_id", p.CID(c.CorrelationID))
			pw.annU("stream_ID", c.StreamID)
			pw.annS("src_agent", p.AgentLabel(c.SrcAgentNode, "-"))
			pw.annS("dst_agent", p.AgentLabel(c.DstAgentNode, "-"))
			pw.annU("copy_bytes", c.Bytes)
			pw.endSlice(t, t0, t1)
			ct := cached(trackKey{4, uint64(c.DstAgentNode), 0, 0}, func() uint64 {
				return counterTrack("COPY BYTES to "+p.AgentLabel(c.DstAgentNode, " "), "bytes")
			})
			pw.counter(ct, c.Start, float64(c.Bytes))
			pw.counter(ct, c.End, 0)
		case tracing.KindMemoryAllocation:
			a := r.MemoryAllocation()
			t := threadTrack(a.TID)
			t, t0, t1 := place(t, a.Start, a.End)
			pw.beginSlice(t, model.Domains[model.DomAlloc].Category, a.Operation.String(), flow(p.CID(a.CorrelationID)), a.Start, a.End)
			pw.annU("tid", uint64(a.TID))
			pw.annS("kind", "MEMORY_ALLOCATION")
			pw.annU("corr_id", p.CID(a.CorrelationID))
			pw.annU("address", a.Address)
			pw.annU("allocation_size", a.Size)
			pw.endSlice(t, t0, t1)
			ct := cached(trackKey{5, 0, 0, 0}, func() uint64 { return counterTrack("FREE BYTES", "bytes") })
			if a.Operation.IsAllocate() {
				ct = cached(trackKey{6, uint64(a.AgentNode), 0, 0}, func() uint64 {
					return counterTrack("ALLOCATE BYTES on "+p.AgentLabel(a.AgentNode, " "), "bytes")
				})
			}
			pw.counter(ct, a.Start, float64(a.Size))
		case tracing.KindScratchMemory:
			s := r.ScratchMemory()
			t := threadTrack(s.TID)
			t, t0, t1 := place(t, s.Start, s.End)
			pw.beginSlice(t, model.Domains[model.DomScratch].Category, s.Operation.String(), flow(p.CID(s.CorrelationID)), s.Start, s.End)
			pw.annU("tid", uint64(s.TID))
			pw.annS("kind", "SCRATCH_MEMORY")
			pw.annU("queue", s.QueueID)
			pw.annU("allocation_size", s.Size)
			pw.annU("flags", uint64(s.Flags))
			pw.endSlice(t, t0, t1)
			ct := cached(trackKey{7, uint64(s.AgentNode), 0, 0}, func() uint64 {
				return counterTrack("SCRATCH MEMORY on "+p.AgentLabel(s.AgentNode, " "), "bytes")
			})
			pw.counter(ct, s.Start, float64(s.Size))
		case tracing.KindCounterSample:
			c := r.CounterSample()
			k := pmcKey{c.DispatchID, p.CounterID(&c), c.AgentNode}
			if !pmcOpen || k != pmcCur {
				pmcFlush()
				pmcOpen, pmcCur, pmcSum = true, k, 0
			}
			pmcSum += c.Value
		}
		pw.commit(pid)
		if pw.err != nil {
			return
		}
		pw.partBoundary()
	}
	pmcFlush()
	pw.commit(pid)
	pw.pcSamples(p, pid, procTrack, child)
	pw.partBoundary()
}
