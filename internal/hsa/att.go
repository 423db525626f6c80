package main

/*
#include <stdlib.h>
#include <string.h>
#include "shim.h"
#include "pmc.h"

// The app's own memory, where a memory:// code object lives.
static void rpg_copy_from(void *dst, uint64_t src, size_t n)
{
    memcpy(dst, (const void *)(uintptr_t)src, n);
}
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"unsafe"

	"github.com/rocprof-go/rocprof-go/internal/aql"
	"github.com/rocprof-go/rocprof-go/internal/counters"
	"github.com/rocprof-go/rocprof-go/internal/hsa/request"
)

// attAgent is one GPU's thread-trace packet set (one slot: the trace
// buffer is large, so traced dispatches wait for the previous one's files).
type attAgent struct {
	pkts    *aql.ATTPackets
	control []byte // the control buffer the stop packet fills
	trace   unsafe.Pointer
	outDir  string

	// The loaded code objects' markers, re-sent after every start packet
	// (as rocprofiler-sdk's "loaded from start" markers) so that a decoder
	// can tell which code object a program counter belongs to.
	dev     *aql.Device
	handle  C.uint64_t
	index   C.int
	markers []aql.CodeObjMarker
	send    func([]aql.CodeObjMarker) // sendMarkers; replaced in tests
}

// addCodeObject adds a loaded code object to the "from start" markers.
func (a *attAgent) addCodeObject(id, addr, size uint64) {
	a.markers = append(a.markers, aql.CodeObjMarker{ID: id, Addr: addr, Size: size, FromStart: true})
	a.send(a.markers)
}

// removeCodeObject drops an unloaded code object from them, as
// rocprofiler-sdk does (its address range may be reused by a later load).
func (a *attAgent) removeCodeObject(id uint64) {
	n := len(a.markers)
	a.markers = slices.DeleteFunc(a.markers, func(m aql.CodeObjMarker) bool { return m.ID == id })
	if len(a.markers) != n {
		a.send(a.markers)
	}
}

// sendMarkers rebuilds the marker IB and hands its packet to C (none when
// no code object is loaded). Each rebuild takes a new buffer: a traced
// dispatch in flight may still read the previous one (code objects load
// rarely).
func (a *attAgent) sendMarkers(ms []aql.CodeObjMarker) {
	if len(ms) == 0 {
		C.shim_pmc_set_marker(a.index, nil)
		return
	}
	var buf unsafe.Pointer
	ib, err := a.dev.BuildCodeObjMarkers(ms, func(n uint64, _ aql.BufferFlags) (uint64, error) {
		buf = C.shim_pmc_alloc(a.handle, C.uint64_t(n), 1)
		if buf == nil {
			return 0, fmt.Errorf("cannot allocate %d bytes for the code-object markers", n)
		}
		return uint64(uintptr(buf)), nil
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "rocprof-go: thread trace: %v\n", err)
		return
	}
	words := unsafe.Slice((*uint32)(buf), len(ib.DW))
	copy(words, ib.DW)
	pkt := ib.Packet.Bytes()
	C.shim_pmc_set_marker(a.index, unsafe.Pointer(&pkt[0]))
}

// attCodeObjectUnloaded removes an unloaded code object's marker (called
// when its executable is destroyed).
func attCodeObjectUnloaded(id uint64, node uint32) {
	if !pmcState.on || pmcState.req.ATT == nil {
		return
	}
	for _, a := range pmcState.agents {
		if a != nil && a.att != nil && a.node == node {
			a.att.removeCodeObject(id)
		}
	}
}

// attAgentSetup builds one agent's thread-trace packets and hands them to C.
func attAgentSetup(d *C.shim_pmc_agent_desc, req *request.PMC, dbOpts []counters.Option,
	getenv func(string) string) (*pmcAgent, error) {
	if req.ATT.GPUs != nil && !req.ATT.GPUs[int(d.gpu_index)] {
		return nil, nil
	}
	dev, err := counters.DeviceFromProperties(C.GoString(&d.name[0]), agentProperties(d, getenv))
	if err != nil {
		return nil, err
	}
	cfg := req.ATT.Config
	if len(req.ATT.Perf) > 0 && req.ATT.PerfPeriod > 0 {
		if dev.Family != aql.GFX9 {
			if len(pmcState.agents) == 0 {
				fmt.Fprintf(os.Stderr, "rocprof-go: thread trace: --att-perfcounters are streamed on gfx9 GPUs only "+
					"(AQLprofile programs them there only); %s traces without them\n", dev.GfxIP)
			}
		} else {
			db, err := counters.Load(dev, dbOpts...)
			if err != nil {
				return nil, err
			}
			cfg.PerfPeriod = req.ATT.PerfPeriod
			for _, p := range req.ATT.Perf {
				c, ok := db.Lookup(p.Name)
				if !ok || c.Kind != counters.Basic || c.Block != "SQ" {
					return nil, fmt.Errorf("--att-perfcounters: %s is not an SQ hardware counter of %s", p.Name, dev.GfxIP)
				}
				cfg.PerfCounters = append(cfg.PerfCounters, aql.ATTPerfCounter{Event: c.Event, SIMDMask: p.Mask})
			}
		}
	}
	mem := map[uint64]unsafe.Pointer{}
	alloc := func(size uint64, f aql.BufferFlags) (uint64, error) {
		zero := C.int(1)
		if f == aql.FlagsATTTrace {
			zero = 0 // hundreds of MiB: only what the GPU writes becomes resident
		}
		p := C.shim_pmc_alloc(d.handle, C.uint64_t(size), zero)
		if p == nil {
			return 0, fmt.Errorf("cannot allocate %d bytes of GPU-visible host memory for the thread trace", size)
		}
		mem[uint64(uintptr(p))] = p
		return uint64(uintptr(p)), nil
	}
	p, err := dev.BuildATT(cfg, alloc)
	if err != nil {
		return nil, err
	}
	var ctlSize uint64
	for _, a := range p.Allocations {
		if a.Addr == p.ControlAddr {
			ctlSize = a.Size
		}
	}
	cmd, trace, ctl := mem[p.CmdBufAddr], mem[p.TraceAddr], mem[p.ControlAddr]
	if cmd == nil || trace == nil || ctl == nil || len(p.CmdBuf) == 0 || ctlSize == 0 {
		return nil, fmt.Errorf("thread-trace buffers were not placed where they were allocated")
	}
	C.memcpy(cmd, unsafe.Pointer(&p.CmdBuf[0]), C.size_t(len(p.CmdBuf)))
	if err := os.MkdirAll(req.ATT.OutDir, 0o700); err != nil {
		return nil, err
	}
	idx := C.shim_pmc_agent_add(d.handle, d.gpu_index, d.node, 1, 1, 1)
	if idx < 0 || int(idx) != len(pmcState.agents) {
		return nil, fmt.Errorf("out of signals or memory for the thread-trace slot")
	}
	start, stop := p.Start.Packet.Bytes(), p.Stop.Packet.Bytes()
	C.shim_pmc_set_packets(idx, 0, 0, unsafe.Pointer(&start[0]), unsafe.Pointer(&stop[0]), nil)
	if req.ATT.SerializeAll {
		C.shim_pmc_set_hold_all(idx, 1)
	}
	aa := &attAgent{pkts: p, control: unsafe.Slice((*byte)(ctl), ctlSize), trace: trace, outDir: req.ATT.OutDir,
		dev: dev, handle: d.handle, index: idx}
	aa.send = aa.sendMarkers
	return &pmcAgent{node: uint32(d.node), att: aa}, nil
}

// record writes each traced shader engine's raw data (with AQLprofile's
// gfx9 header first) to <output path>/<pid>_agent_<node>_shader_engine_<se>_<dispatch>.att.
func (a *attAgent) record(node uint32, dispatch uint64) {
	traces, err := a.pkts.Traces(a.control)
	if err != nil {
		fmt.Fprintf(os.Stderr, "rocprof-go: dispatch %d: %v\n", dispatch, err)
	}
	for _, t := range traces {
		data := unsafe.Slice((*byte)(unsafe.Add(a.trace, t.Addr-a.pkts.TraceAddr)), t.Size)
		name := fmt.Sprintf("%d_agent_%d_shader_engine_%d_%d.att", os.Getpid(), node, t.SE, dispatch)
		f, err := os.Create(filepath.Join(a.outDir, name))
		if err != nil {
			fmt.Fprintf(os.Stderr, "rocprof-go: thread trace: %v\n", err)
			return
		}
		_, err = f.Write(t.Header)
		if err == nil {
			_, err = f.Write(data)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "rocprof-go: thread trace: %v\n", err)
		}
	}
}

// attCodeObject dumps a loaded code object next to the traces, as
// <pid>_agent_<node>_code_object_id_<id>.out, and appends where it was loaded
// to <pid>_att_code_objects.jsonl, so that a decoder can map the traced
// program counters to instructions (called at executable freeze).
func attCodeObject(id uint64, node uint32, uri string, base, size uint64, delta int64) {
	if !pmcState.on || pmcState.req.ATT == nil {
		return
	}
	data, err := codeObjectBytes(uri)
	if err != nil {
		fmt.Fprintf(os.Stderr, "rocprof-go: thread trace: code object %d: %v\n", id, err)
		return
	}
	for _, a := range pmcState.agents {
		if a != nil && a.att != nil && a.node == node {
			a.att.addCodeObject(id, uint64(delta), size)
		}
	}
	dir := pmcState.req.ATT.OutDir
	name := fmt.Sprintf("%d_agent_%d_code_object_id_%d.out", os.Getpid(), node, id)
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "rocprof-go: thread trace: %v\n", err)
		return
	}
	line, _ := json.Marshal(attCodeObjectEntry{ID: id, Agent: node, LoadBase: base, LoadSize: size,
		LoadDelta: delta, File: name, URI: uri})
	f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%d_att_code_objects.jsonl", os.Getpid())),
		os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err == nil {
		_, err = f.Write(append(line, '\n'))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "rocprof-go: thread trace: %v\n", err)
	}
}

// attCodeObjectEntry is one line of the code-object index (the layout
// internal/att.CodeObject reads; the shim does not link that package, which
// carries the decoder's cgo callbacks).
type attCodeObjectEntry struct {
	ID        uint64 `json:"id"`
	Agent     uint32 `json:"agent"`
	LoadBase  uint64 `json:"load_base"`
	LoadSize  uint64 `json:"load_size"`
	LoadDelta int64  `json:"load_delta"`
	File      string `json:"file"`
	URI       string `json:"uri"`
}

// codeObjectBytes reads a loader URI: file://PATH[#offset=N&size=M] or
// memory://PID#offset=ADDR&size=N (this process's memory).
func codeObjectBytes(uri string) ([]byte, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, err
	}
	frag, err := url.ParseQuery(u.Fragment)
	if err != nil {
		return nil, fmt.Errorf("code object URI %q: %w", uri, err)
	}
	num := func(k string) (uint64, bool) {
		v, err := strconv.ParseUint(frag.Get(k), 0, 64)
		return v, err == nil
	}
	off, hasOff := num("offset")
	size, hasSize := num("size")
	switch u.Scheme {
	case "memory":
		if !hasOff || !hasSize || size == 0 || size > 1<<30 {
			return nil, fmt.Errorf("code object URI %q: no offset and size", uri)
		}
		buf := make([]byte, size)
		C.rpg_copy_from(unsafe.Pointer(&buf[0]), C.uint64_t(off), C.size_t(size))
		return buf, nil
	case "file":
		f, err := os.Open(u.Path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if !hasSize {
			return io.ReadAll(io.NewSectionReader(f, int64(off), 1<<62))
		}
		buf := make([]byte, size)
		_, err = f.ReadAt(buf, int64(off))
		return buf, err
	}
	return nil, fmt.Errorf("code object URI %q: unknown scheme", uri)
}
