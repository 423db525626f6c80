package main

/*
#include <stdlib.h>
#include <string.h>
#include "shim.h"
#include "pmc.h"
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/rocprof-go/rocprof-go/internal/aql"
	"github.com/rocprof-go/rocprof-go/internal/counters"
	"github.com/rocprof-go/rocprof-go/internal/hsa/request"

	"github.com/rocprof-go/rocprof-go/internal/toolenv"
)

// pmcState is the process's counter collection set-up; read-only once
// rpgGoPMCSetup returns (the completion threads read it concurrently).
var pmcState struct {
	on     bool
	req    *request.PMC
	agents []*pmcAgent // by the C side's agent index
}

// pmcAgent is one GPU agent's counter database and groups.
type pmcAgent struct {
	db     *counters.DB
	node   uint32
	groups []*pmcGroup
	att    *attAgent // thread trace instead of counters
}

// pmcGroup is one pmc: line as collected on one agent: its packet sets (one
// per slot, built once) and the counters to evaluate after each dispatch.
type pmcGroup struct {
	counters []pmcCounter
	slots    [C.SHIM_PMC_SLOTS]pmcSlot
	inputs   counters.SampleMap // what each reported sample feeds, the same for every slot
	scratch  sync.Pool          // counters.Inputs reused across dispatches
}

type pmcSlot struct {
	pkts *aql.PMCPackets
	out  unsafe.Pointer // the output buffer, pkts.OutputSize bytes
}

// pmcCounter is one requested counter with what its samples carry.
type pmcCounter struct {
	c        *counters.Counter
	id       uint64 // position in the agent's database listing (CSV row order)
	name     string
	dims     []counters.DimExtent
	instance int // NAME[i]: only instance i; -1: all
}

//export rpgGoPMCSetup
func rpgGoPMCSetup() {
	defer guard()
	if err := pmcSetup(os.Getenv); err != nil {
		fmt.Fprintf(os.Stderr, "rocprof-go: counter collection is off in this process: %v\n", err)
	}
}

// pmcSetup parses the request, loads each GPU agent's counter database,
// builds every packet set and hands the plans to C.
func pmcSetup(getenv func(string) string) error {
	req, err := request.ParsePMC(getenv)
	if err != nil {
		return err
	}
	// The definitions files are read once for every agent.
	var dbOpts []counters.Option
	if req.Defs != "" {
		defs, err := counters.ParseDefinitionsFile(req.Defs)
		if err != nil {
			return err
		}
		dbOpts = append(dbOpts, counters.WithDefinitions(defs))
	}
	if req.Extra != "" {
		extra, err := counters.ParseExtraFile(req.Extra)
		if err != nil {
			return err
		}
		dbOpts = append(dbOpts, counters.WithExtra(extra))
	}
	descs := make([]C.shim_pmc_agent_desc, C.SHIM_PMC_MAX_AGENTS)
	n := int(C.shim_pmc_agents(&descs[0], C.int(len(descs))))
	if n > len(descs) {
		n = len(descs)
	}
	for i := 0; i < n; i++ {
		d := &descs[i]
		setup := pmcAgentSetup
		if req.ATT != nil {
			setup = attAgentSetup
		}
		a, err := setup(d, req, dbOpts, getenv)
		if err != nil {
			return fmt.Errorf("GPU %d (%s): %w", int(d.gpu_index), C.GoString(&d.name[0]), err)
		}
		if a == nil {
			continue // nothing requested for this GPU
		}
		pmcState.agents = append(pmcState.agents, a)
	}
	ranges := make([]C.uint64_t, 0, 2*len(req.Ranges)+1)
	for _, r := range req.Ranges {
		ranges = append(ranges, C.uint64_t(r[0]), C.uint64_t(r[1]))
	}
	ranges = append(ranges, 0) // never empty, so &ranges[0] is valid
	filtered := 0
	if req.Filtered() {
		filtered = 1
	}
	C.shim_pmc_set_filter(C.int(filtered), &ranges[0], C.int(len(req.Ranges)))
	pmcState.req = req
	pmcState.on = true
	C.shim_pmc_enable()
	return nil
}

// pmcAgentSetup plans one agent's groups and builds their packets.
func pmcAgentSetup(d *C.shim_pmc_agent_desc, req *request.PMC, dbOpts []counters.Option,
	getenv func(string) string) (*pmcAgent, error) {
	arch := C.GoString(&d.name[0])
	props := agentProperties(d, getenv)
	dev, err := counters.DeviceFromProperties(arch, props)
	if err != nil {
		return nil, err
	}
	opts := append([]counters.Option{counters.WithProperties(counters.PropertiesFromKFD(props))}, dbOpts...)
	db, err := counters.Load(dev, opts...)
	if err != nil {
		return nil, err
	}
	ids := map[*counters.Counter]uint64{}
	for i, c := range db.Counters {
		ids[c] = uint64(i)
	}
	gpu := int(d.gpu_index)
	a := &pmcAgent{db: db, node: uint32(d.node)}
	for _, names := range req.Groups {
		// rocprofv3 warns about names this agent lacks and collects the rest.
		known, missing, err := db.Split(names, gpu)
		if err != nil {
			return nil, err
		}
		for _, m := range missing {
			fmt.Fprintf(os.Stderr, "rocprof-go: warning: GPU %d: %v\n", gpu, m)
		}
		g := &pmcGroup{}
		a.groups = append(a.groups, g)
		if len(known) == 0 {
			continue // an empty group still takes its turn, with nothing to read
		}
		plan, err := db.PlanPasses(known, gpu)
		if err != nil {
			return nil, err
		}
		if len(plan.Passes) == 0 {
			continue
		}
		if len(plan.Passes) > 1 {
			fmt.Fprintf(os.Stderr, "rocprof-go: warning: GPU %d: %q needs %d passes; collecting the first:\n%s",
				gpu, strings.Join(known, " "), len(plan.Passes), plan.PMCLines())
		}
		pass := plan.Passes[0]
		for _, r := range pass.Requests {
			c, ok := db.Lookup(r.Name)
			if !ok {
				continue
			}
			dims, err := db.Dimensions(c)
			if err != nil {
				return nil, err
			}
			name := c.Name
			if r.Instance >= 0 {
				name += "[" + strconv.Itoa(r.Instance) + "]"
			}
			g.counters = append(g.counters, pmcCounter{c: c, id: ids[c], name: name, dims: dims,
				instance: r.Instance})
		}
		for s := range g.slots {
			if len(pass.Events) == 0 {
				break // constants only: nothing to program
			}
			pkts, out, err := buildSlot(uint64(d.handle), dev, pass.Events)
			if err != nil {
				return nil, err
			}
			g.slots[s] = pmcSlot{pkts: pkts, out: out}
		}
		if p := g.slots[0].pkts; p != nil {
			g.inputs = db.PlanSamples(p)
		}
	}
	if len(a.groups) == 0 {
		return nil, nil
	}
	idx := C.shim_pmc_agent_add(d.handle, d.gpu_index, d.node, C.uint32_t(len(a.groups)),
		C.uint32_t(req.Interval), C.SHIM_PMC_SLOTS)
	if idx < 0 {
		return nil, fmt.Errorf("out of signals or memory for the counter slots")
	}
	if int(idx) != len(pmcState.agents) {
		return nil, fmt.Errorf("agent index mismatch")
	}
	var nop aql.AQLPacket
	nopBytes := nop.Bytes()
	for gi, g := range a.groups {
		for s := range g.slots {
			start, stop, read := nopBytes, nopBytes, nopBytes
			if p := g.slots[s].pkts; p != nil {
				start, stop, read = p.Start.Packet.Bytes(), p.Stop.Packet.Bytes(), p.Read.Packet.Bytes()
			}
			C.shim_pmc_set_packets(idx, C.uint32_t(gi), C.uint32_t(s), unsafe.Pointer(&start[0]),
				unsafe.Pointer(&stop[0]), unsafe.Pointer(&read[0]))
		}
	}
	return a, nil
}

// buildSlot builds one packet set in fresh GPU-visible buffers and writes its
// command buffer there.
func buildSlot(agent uint64, dev *aql.Device, events []aql.Event) (*aql.PMCPackets, unsafe.Pointer, error) {
	mem := map[uint64]unsafe.Pointer{}
	alloc := func(size uint64, _ aql.BufferFlags) (uint64, error) {
		p := C.shim_pmc_alloc(C.uint64_t(agent), C.uint64_t(size), 1)
		if p == nil {
			return 0, fmt.Errorf("cannot allocate %d bytes of GPU-visible host memory", size)
		}
		addr := uint64(uintptr(p))
		mem[addr] = p
		return addr, nil
	}
	p, err := dev.BuildPMC(events, alloc)
	if err != nil {
		return nil, nil, err
	}
	cmd, ok := mem[p.CmdBufAddr]
	out, ok2 := mem[p.OutputAddr]
	if !ok || !ok2 || len(p.CmdBuf) == 0 {
		return nil, nil, fmt.Errorf("PMC buffers were not placed where they were allocated")
	}
	C.memcpy(cmd, unsafe.Pointer(&p.CmdBuf[0]), C.size_t(len(p.CmdBuf)))
	return p, out, nil
}

// agentProperties are the KFD-style properties of an agent: from HSA
// attributes, overridden by the KFD topology's own values when present.
func agentProperties(d *C.shim_pmc_agent_desc, getenv func(string) string) map[string]uint64 {
	se, sa, cu, spc := uint64(d.se_count), uint64(d.sa_per_se), uint64(d.cu_count), uint64(d.simd_per_cu)
	p := map[string]uint64{
		"num_xcc":                 uint64(max(d.num_xcc, 1)), // the runtime's (1 on ROCR 5.2.3)
		"array_count":             se * sa,
		"simd_arrays_per_engine":  sa,
		"simd_count":              cu * spc,
		"simd_per_cu":             spc,
		"wave_front_size":         uint64(d.wave_size),
		"lds_size_in_kb":          uint64(d.lds_bytes) / 1024,
		"vendor_id":               0x1002,
		"device_id":               uint64(d.chip_id),
		"location_id":             uint64(d.location_id),
		"domain":                  uint64(d.domain),
		"max_engine_clk_fcompute": uint64(d.clock_mhz),
	}
	if se*sa > 0 {
		p["cu_per_simd_array"] = cu / (se * sa)
	}
	if spc > 0 {
		p["max_waves_per_simd"] = uint64(d.max_waves_per_cu) / spc
	}
	if v := counters.GfxTargetVersion(C.GoString(&d.name[0])); v > 0 {
		p["gfx_target_version"] = uint64(v)
	}
	root := getenv(toolenv.GoKFDTopology)
	if root == "" {
		root = "/sys/class/kfd/kfd/topology"
	}
	raw, err := os.ReadFile(root + "/nodes/" + strconv.Itoa(int(d.node)) + "/properties")
	if err != nil {
		return p
	}
	for _, line := range strings.Split(string(raw), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil {
			p[k] = n
		}
	}
	return p
}

// pmcKernelSymbol gives C the filter decision for a kernel object (called
// when its executable is frozen, before any dispatch of it).
func pmcKernelSymbol(kernelObject uint64, name string) {
	if !pmcState.on {
		return
	}
	sel := 0
	if pmcState.req.Selects(name) {
		sel = 1
	}
	C.shim_pmc_kernel(C.uint64_t(kernelObject), C.int(sel))
}

//export rpgGoPMCSample
func rpgGoPMCSample(agent C.int, group, slot, node C.uint32_t, dispatch C.uint64_t) {
	defer guard()
	pmcRecord(int(agent), int(group), int(slot), uint32(node), uint64(dispatch))
}

// pmcRecord decodes one slot's output buffer, evaluates the group's
// counters and records one sample per remaining dimension instance.
func pmcRecord(agent, group, slot int, node uint32, dispatch uint64) {
	if agent >= len(pmcState.agents) {
		return
	}
	a := pmcState.agents[agent]
	if a.att != nil {
		a.att.record(node, dispatch)
		return
	}
	if group >= len(a.groups) {
		return
	}
	g := a.groups[group]
	in, _ := g.scratch.Get().(counters.Inputs)
	if in == nil {
		in = counters.Inputs{}
	}
	defer g.scratch.Put(in)
	if s := &g.slots[slot]; s.pkts != nil {
		g.inputs.Collect(unsafe.Slice((*byte)(s.out), s.pkts.OutputSize), in)
	}
	var dims [8]C.rpg_counter_dim
	for i := range g.counters {
		pc := &g.counters[i]
		recs, err := a.db.Evaluate(pc.c, in)
		if err != nil {
			fmt.Fprintf(os.Stderr, "rocprof-go: counter %s: %v\n", pc.name, err)
			continue
		}
		for _, r := range recs {
			nd := 0
			skip := false
			for _, e := range pc.dims {
				if nd == len(dims) {
					break
				}
				v := r.Pos.Get(e.Dim)
				if pc.instance >= 0 && e.Dim == counters.DimInstance && v != pc.instance {
					skip = true
				}
				dims[nd] = C.rpg_counter_dim{dimension_id: C.uint32_t(e.Dim), index: C.uint32_t(v)}
				nd++
			}
			if skip {
				continue
			}
			rec := C.rpg_counter_sample_rec{
				dispatch_id: C.uint64_t(dispatch),
				counter_id:  C.uint64_t(pc.id),
				value:       C.double(r.Value),
				agent_node:  C.uint32_t(node),
				dim_count:   C.uint32_t(nd),
			}
			C.rpg_record_counter_sample(&rec, &dims[0], (*C.char)(unsafe.Pointer(unsafe.StringData(pc.name))),
				C.size_t(len(pc.name)))
		}
	}
}

// pmcStats exposes the C side's counters to the tests.
func pmcStats() C.shim_pmc_stats { return C.shim_pmc_counters }
