package output

import (
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/rocprof-go/rocprof-go/internal/kernelname"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// SDK buffer-tracing kind numbers (rocprofiler-sdk fwd.h), which JSON
// records carry as integers.
const (
	sdkHSACoreAPI        = 1
	sdkHSAAMDExtAPI      = 2
	sdkHSAImageExtAPI    = 3
	sdkHSAFinalizeExtAPI = 4
	sdkMarkerCoreAPI     = 7
	sdkMarkerControlAPI  = 8
	sdkMarkerNameAPI     = 9
	sdkMemoryCopy        = 10
	sdkKernelDispatch    = 11
	sdkScratchMemory     = 12
	sdkRCCLAPI           = 14
	sdkMemoryAllocation  = 16
	sdkHIPRuntimeAPIExt  = 21
	sdkHIPCompilerAPIExt = 22
	sdkMarkerCoreRange   = 32
	sdkKindLast          = 33
)

// sdkKind returns the SDK buffer kind of an API domain.
func sdkKind(d tracing.APIDomain) int {
	switch d {
	case tracing.DomainHIPRuntime:
		return sdkHIPRuntimeAPIExt
	case tracing.DomainHIPCompiler:
		return sdkHIPCompilerAPIExt
	case tracing.DomainHSACore:
		return sdkHSACoreAPI
	case tracing.DomainHSAAMDExt:
		return sdkHSAAMDExtAPI
	case tracing.DomainHSAImageExt:
		return sdkHSAImageExtAPI
	case tracing.DomainHSAFinalizeExt:
		return sdkHSAFinalizeExtAPI
	case tracing.DomainMarkerCore:
		return sdkMarkerCoreAPI
	case tracing.DomainMarkerControl:
		return sdkMarkerControlAPI
	case tracing.DomainMarkerName:
		return sdkMarkerNameAPI
	case tracing.DomainMarkerCoreRange:
		return sdkMarkerCoreRange
	case tracing.DomainRCCL:
		return sdkRCCLAPI
	}
	return 0
}

// hostFunction is a kernel's host stub: its address and the device
// function (the kernel's symbol name) it launches.
type hostFunction struct {
	address uint64
	device  string
}

// kernelSymbol is a kernel with its names in every form.
type kernelSymbol struct {
	tracing.KernelSymbol
	Raw       string // mangled, as loaded (".kd" kept)
	Demangled string
	Truncated string
	Display   string // what the options ask for
}

// process is everything about one spool that is small enough to hold:
// names, agents, symbols, the thread/queue/stream sets and record counts.
// Events are never held; writers stream them with a second pass.
type process struct {
	Info        tracing.ProcessInfo
	Agents      []tracing.AgentInfo // sorted by node id
	agentByNode map[uint32]int
	Symbols     map[uint64]*kernelSymbol
	SymbolOrder []uint64
	CodeObjects []tracing.CodeObject // loads, in order
	// HostFunctions are the kernels' host stubs HIP registered
	// (__hipRegisterFunction), in registration order.
	HostFunctions []hostFunction
	funcNames     map[uint64]string
	CounterNames  map[uint64]string
	Counters      []counterInfo // distinct (counter, agent) pairs sampled, in order seen
	// Sampled holds the dispatches that have counter samples: the only
	// dispatches a writer remembers (to place their samples).
	Sampled    map[uint64]struct{}
	Threads    []uint32 // sorted
	Queues     []uint64 // sorted, 0 excluded
	Streams    []uint64 // sorted, 0 excluded
	Counts     [numDomains]uint64
	Begin, End uint64 // earliest start and latest end of any event
	opts       *Options
	renamer    *kernelRenamer // --kernel-rename: see dispatchName (rename.go)
	// order puts records in rocprofv3's order and numbers correlation ids
	// (order.go); writers print p.cid(raw) for every correlation id.
	order recordOrder
	// streams numbers recorded hipStream_t arguments (hipargs.go).
	streams streamNumbers
}

// counterInfo is one counter sampled on one agent.
type counterInfo struct {
	ID        uint64
	AgentNode uint32
	Name      string
}

// scanProcess reads a spool once for its catalogue and rewinds it.
func scanProcess(r *tracing.Reader, opts *Options) (*process, error) {
	p := &process{
		Info: r.Process(), agentByNode: map[uint32]int{}, Symbols: map[uint64]*kernelSymbol{},
		funcNames: map[uint64]string{}, CounterNames: map[uint64]string{}, opts: opts,
		Begin: ^uint64(0), streams: streamNumbers{},
	}
	if opts.KernelRename {
		p.renamer = newKernelRenamer()
	}
	threads := map[uint32]struct{}{}
	kernels := map[uint64]struct{}{}
	counters := map[[2]uint64]struct{}{}
	queues := map[uint64]struct{}{}
	streams := map[uint64]struct{}{}
	span := func(s, e uint64) {
		if s != 0 && s < p.Begin {
			p.Begin = s
		}
		if e > p.End {
			p.End = e
		}
	}
	for r.Next() {
		k := r.Kind()
		p.order.observe(r)
		if k == tracing.KindMarker && opts.HideMarkers {
			m := r.Marker() // recorded for the renames only
			p.renamer.addMarker(&m)
			continue
		}
		if d := kindDomain(k); d >= 0 {
			p.Counts[d]++
		}
		switch k {
		case tracing.KindString:
			s := r.String()
			key := uint64(s.Table)<<32 | s.ID&0xffffffff
			if n, ok := tracing.StreamNoteOf(s); ok {
				// A stream no dispatch or copy used (only named, or only
				// an argument) still gets its stream row.
				p.streams.add(n)
				streams[n.Number] = struct{}{}
			} else if s.Table == tracing.TableCounter {
				p.CounterNames[s.ID] = string(s.Value)
			} else if s.Table == tracing.TableHostFunction {
				p.HostFunctions = append(p.HostFunctions, hostFunction{address: s.ID, device: string(s.Value)})
			} else {
				p.funcNames[key] = string(s.Value)
			}
		case tracing.KindAgentInfo:
			a := r.AgentInfo()
			node := uint32(a.NodeID())
			if i, ok := p.agentByNode[node]; ok {
				p.Agents[i] = a
			} else {
				p.agentByNode[node] = len(p.Agents)
				p.Agents = append(p.Agents, a)
			}
		case tracing.KindKernelSymbol:
			s := r.KernelSymbol()
			if _, ok := p.Symbols[s.KernelID]; !ok {
				p.SymbolOrder = append(p.SymbolOrder, s.KernelID)
			}
			ks := &kernelSymbol{KernelSymbol: s, Raw: string(s.Name)}
			ks.Name = nil // aliases the spool
			ks.Demangled = kernelname.Format(ks.Raw, false, false)
			ks.Truncated = kernelname.Format(ks.Raw, false, true)
			ks.Display = kernelname.Format(ks.Raw, opts.MangledKernels, opts.TruncateKernels)
			p.Symbols[s.KernelID] = ks
		case tracing.KindCodeObject:
			c := r.CodeObject()
			if c.Operation == tracing.CodeObjectLoad {
				c.URI = append([]byte(nil), c.URI...)
				p.CodeObjects = append(p.CodeObjects, c)
			}
		case tracing.KindHIPAPI, tracing.KindHSAAPI, tracing.KindRCCLAPI:
			a := r.APICall()
			threads[a.TID] = struct{}{}
			span(a.Start, a.End)
		case tracing.KindMarker:
			m := r.Marker()
			threads[m.TID] = struct{}{}
			span(m.Start, m.End)
			p.renamer.addMarker(&m)
		case tracing.KindKernelDispatch:
			d := r.KernelDispatch()
			threads[d.TID] = struct{}{}
			queues[d.QueueID] = struct{}{}
			streams[d.StreamID] = struct{}{}
			kernels[d.KernelID] = struct{}{}
			span(d.Start, d.End)
		case tracing.KindCounterSample:
			c := r.CounterSample()
			if p.Sampled == nil {
				p.Sampled = map[uint64]struct{}{}
			}
			p.Sampled[c.DispatchID] = struct{}{}
			key := [2]uint64{c.CounterID, uint64(c.AgentNode)}
			if _, ok := counters[key]; !ok {
				counters[key] = struct{}{}
				p.Counters = append(p.Counters, counterInfo{ID: c.CounterID, AgentNode: c.AgentNode, Name: p.counterName(&c)})
			}
		case tracing.KindMemoryCopy:
			c := r.MemoryCopy()
			threads[c.TID] = struct{}{}
			streams[c.StreamID] = struct{}{}
			span(c.Start, c.End)
		case tracing.KindMemoryAllocation:
			a := r.MemoryAllocation()
			threads[a.TID] = struct{}{}
			span(a.Start, a.End)
		case tracing.KindScratchMemory:
			s := r.ScratchMemory()
			threads[s.TID] = struct{}{}
			queues[s.QueueID] = struct{}{}
			span(s.Start, s.End)
		}
	}
	// Dispatches of kernels whose symbol record was lost still need a name.
	for _, id := range sortedKeys(kernels) {
		if _, ok := p.Symbols[id]; !ok {
			name := fmt.Sprintf("kernel_%d", id)
			p.Symbols[id] = &kernelSymbol{KernelSymbol: tracing.KernelSymbol{KernelID: id},
				Raw: name, Demangled: name, Truncated: name, Display: name}
			p.SymbolOrder = append(p.SymbolOrder, id)
		}
	}
	if p.Begin == ^uint64(0) {
		p.Begin = 0
	}
	sort.Slice(p.Agents, func(i, j int) bool { return p.Agents[i].NodeID() < p.Agents[j].NodeID() })
	for i, a := range p.Agents {
		p.agentByNode[uint32(a.NodeID())] = i
	}
	p.Threads = sortedKeys(threads)
	p.Queues = sortedKeys(queues)
	p.Streams = sortedKeys(streams)
	p.Queues = dropZero(p.Queues)
	p.Streams = dropZero(p.Streams)
	p.streams.sort()
	p.order.finish(r, opts.HideMarkers, opts.KeepCorrelationIDs[p.Info.Path])
	return p, nil
}

// cid is the correlation id rocprofv3 would give a record carrying raw.
func (p *process) cid(raw uint64) uint64 { return p.order.ids.of(raw) }

func sortedKeys[K uint32 | uint64](m map[K]struct{}) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func dropZero(s []uint64) []uint64 {
	if len(s) > 0 && s[0] == 0 {
		return s[1:]
	}
	return s
}

// openEach opens every spool of the input in turn, scans its catalogue and
// hands the rewound reader to fn. Only one spool is mapped at a time.
func (in *Input) openEach(fn func(p *process, r *spoolView) error) error {
	for _, path := range in.Spools {
		r, err := tracing.Open(path)
		if err != nil {
			return err
		}
		p, err := scanProcess(r, &in.Options)
		if err == nil {
			if in.Options.HideMarkers {
				r.Hide(tracing.KindMarker)
			}
			err = fn(p, newSpoolView(r, &p.order))
		}
		cerr := r.Close()
		var pe *os.PathError
		if errors.As(err, &pe) && pe.Path != path {
			return err // an output file's error names that file, not the spool
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if cerr != nil {
			return cerr
		}
	}
	return nil
}

// agent returns the agent on a KFD node, or nil.
func (p *process) agent(node uint32) *tracing.AgentInfo {
	if i, ok := p.agentByNode[node]; ok {
		return &p.Agents[i]
	}
	return nil
}

// agentIndex is the agent number the -agent-index option selects.
func (p *process) agentIndex(node uint32) uint64 {
	a := p.agent(node)
	if a == nil {
		return uint64(node)
	}
	return agentNumber(a, p.opts.AgentIndex)
}

// agentLabel is rocprofv3's agent label ("Agent 2", or "GPU 0" when
// type-relative) with sep between the words.
func (p *process) agentLabel(node uint32, sep string) string {
	word := "Agent"
	if p.opts.AgentIndex == AgentIndexTypeRelative {
		if a := p.agent(node); a != nil {
			word = a.Type().String()
		}
	}
	return fmt.Sprintf("%s%s%d", word, sep, p.agentIndex(node))
}

// agentType is "CPU", "GPU" or "UNK" for a node.
func (p *process) agentType(node uint32) string {
	if a := p.agent(node); a != nil {
		return a.Type().String()
	}
	return "UNK"
}

// funcName names an API function: a name carried by the spool wins over
// the registered tables.
func (p *process) funcName(d tracing.APIDomain, id uint32) string {
	if s, ok := p.funcNames[uint64(d)<<32|uint64(id)]; ok {
		return s
	}
	if s, ok := tracing.FunctionName(d, id); ok {
		return s
	}
	return tracing.UnknownFunctionName(d, id)
}

// markerName is the name rocprofv3 prints for a marker: the user's text for
// marks and ranges, else the ROCTx function.
func markerName(m *tracing.Marker) string {
	if m.Function.CarriesMessage() {
		return string(m.Message)
	}
	return m.Function.String()
}

// counterName names a counter id.
func (p *process) counterName(c *tracing.CounterSample) string {
	if len(c.Name) > 0 {
		return string(c.Name)
	}
	if s, ok := p.CounterNames[c.CounterID]; ok {
		return s
	}
	return fmt.Sprintf("counter_%d", c.CounterID)
}

// kernelName is the display name of a kernel id.
func (p *process) kernelName(id uint64) string {
	if s, ok := p.Symbols[id]; ok {
		return s.Display
	}
	return fmt.Sprintf("kernel_%d", id)
}

// kernelRawDemangled is the demangled symbol Perfetto names slices with.
func (p *process) kernelDemangled(id uint64) string {
	if s, ok := p.Symbols[id]; ok {
		return s.Demangled
	}
	return fmt.Sprintf("kernel_%d", id)
}

// sampled reports whether a dispatch has counter samples.
func (p *process) sampled(dispatchID uint64) bool {
	_, ok := p.Sampled[dispatchID]
	return ok
}
