package output

import (
	"sort"
	"strconv"

	"github.com/rocprof-go/rocprof-go/internal/kernelname"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// csvKernel is a kernel symbol as the CSV columns need it.
type csvKernel struct {
	name         string // formatted per -M/-T
	ldsBlockSize uint64 // static LDS rounded up to 512 bytes
	vgpr, agpr   uint32
	sgpr         uint32
	object       uint64 // the kernel object (descriptor address), rocprof v1's obj
}

type csvStringKey struct {
	table uint32
	id    uint64
}

// csvCounterSum is one (dispatch, counter) row of counter_collection.csv.
type csvCounterSum struct {
	id    uint64
	name  string
	value float64
}

// csvProcess is what the first pass learns about one spool: everything a
// row needs that is not in the row's own record.
type csvProcess struct {
	path     string
	info     tracing.ProcessInfo
	prefix   string
	strings  map[csvStringKey]string
	funcs    [16][]string // per API domain, function id -> name (filled lazily)
	kernels  map[uint64]*csvKernel
	symbols  map[uint64]string // kernel id -> raw symbol, until formatted
	agents   map[uint32]tracing.AgentInfo
	labels   map[uint32]string
	counters map[uint64][]csvCounterSum // dispatch id -> sums, ascending counter id
	bytes    [numDomains]uint64
	counts   [numDomains]uint64
	stats    tracing.Stats
	renamer  *kernelRenamer // --kernel-rename, nil when off
	order    recordOrder    // rocprofv3's record order and correlation ids (order.go)
}

// cid is the correlation id rocprofv3 would give a record carrying raw.
func (p *csvProcess) cid(raw uint64) uint64 { return p.order.ids.of(raw) }

func newCSVProcess(path string, info tracing.ProcessInfo) *csvProcess {
	return &csvProcess{path: path, info: info, strings: map[csvStringKey]string{},
		kernels: map[uint64]*csvKernel{}, symbols: map[uint64]string{},
		agents: map[uint32]tracing.AgentInfo{}}
}

// statuses are the process's status strings (tracing.TableStatus), by id.
func (p *csvProcess) statuses() map[uint64]string {
	st := map[uint64]string{}
	for k, v := range p.strings {
		if k.table == tracing.TableStatus {
			st[k.id] = v
		}
	}
	return st
}

// scan is the first pass: metadata records, counter sums and the raw size
// of every domain.
func (p *csvProcess) scan(r *tracing.Reader, cfg *Config) {
	if cfg.KernelRename {
		p.renamer = newKernelRenamer()
	}
	type sumKey struct {
		dispatch uint64
		name     string
	}
	sums := map[sumKey]*csvCounterSum{}
	var order []sumKey
	for r.Next() {
		k := r.Kind()
		p.order.observe(r)
		if d := kindDomain(k); d >= 0 && !(k == tracing.KindMarker && cfg.HideMarkers) {
			p.bytes[d] += uint64(len(r.Bytes()))
			p.counts[d]++
		}
		switch k {
		case tracing.KindString:
			s := r.String()
			p.strings[csvStringKey{s.Table, s.ID}] = string(s.Value)
		case tracing.KindKernelSymbol:
			ks := r.KernelSymbol()
			p.symbols[ks.KernelID] = string(ks.Name) // copied: the spool is unmapped after the pass
			p.kernels[ks.KernelID] = &csvKernel{
				ldsBlockSize: roundUp(uint64(ks.GroupSegmentSize), 512),
				vgpr:         ks.VGPRCount, agpr: ks.AGPRCount, sgpr: ks.SGPRCount,
				object: ks.KernelObject,
			}
		case tracing.KindMarker:
			if p.renamer != nil {
				m := r.Marker()
				p.renamer.addMarker(&m)
			}
		case tracing.KindAgentInfo:
			a := r.AgentInfo()
			p.agents[uint32(a.NodeID())] = a
		case tracing.KindCounterSample:
			c := r.CounterSample()
			name := string(c.Name)
			if name == "" {
				name = p.lookupString(tracing.TableCounter, c.CounterID)
			}
			if name == "" {
				name = "counter_" + strconv.FormatUint(c.CounterID, 10)
			}
			key := sumKey{c.DispatchID, name}
			s := sums[key]
			if s == nil {
				s = &csvCounterSum{id: c.CounterID, name: name}
				sums[key] = s
				order = append(order, key)
			}
			// Every dimension instance of a counter is summed into one row.
			s.value += c.Value
		}
	}
	p.stats = r.Stats()
	p.order.finish(r, cfg.HideMarkers, cfg.KeepCorrelationIDs[p.path])
	if len(order) > 0 {
		p.counters = map[uint64][]csvCounterSum{}
		for _, k := range order {
			p.counters[k.dispatch] = append(p.counters[k.dispatch], *sums[k])
		}
		for _, list := range p.counters {
			sort.SliceStable(list, func(i, j int) bool { return list[i].id < list[j].id })
		}
	}
}

func roundUp(v, to uint64) uint64 { return (v + to - 1) / to * to }

func (p *csvProcess) lookupString(table uint32, id uint64) string {
	return p.strings[csvStringKey{table, id}]
}

// prepare formats kernel names and agent labels once the first pass is done.
func (p *csvProcess) prepare(cfg *Config) {
	for id, sym := range p.symbols {
		p.kernels[id].name = kernelname.Format(sym, cfg.Mangled, cfg.Truncate)
	}
	p.symbols = nil
	p.labels = map[uint32]string{}
	for node, a := range p.agents {
		p.labels[node] = agentLabel(&a, cfg.AgentIndex)
	}
}

// agentLabel returns the Agent_Id text of an agent.
func agentLabel(a *tracing.AgentInfo, mode AgentIndex) string {
	word := "Agent"
	if mode == AgentIndexTypeRelative {
		word = a.Type().String()
	}
	return word + " " + strconv.FormatUint(agentNumber(a, mode), 10)
}

// label returns an agent's Agent_Id text; agents the spool never described
// are labelled by node id. It only reads the process's tables: the
// formatting goroutines call it concurrently.
func (p *csvProcess) label(node uint32) string {
	if l, ok := p.labels[node]; ok {
		return l
	}
	return unknownAgentLabel(node)
}

// funcName returns an API function's name: the spool's own string table
// first, then the registered table of the domain.
func (p *csvProcess) funcName(d tracing.APIDomain, id uint32) string {
	if int(d) < len(p.funcs) {
		t := p.funcs[d]
		if int(id) < len(t) && t[id] != "" {
			return t[id]
		}
	}
	name := p.lookupString(uint32(d), uint64(id))
	if name == "" {
		var ok bool
		if name, ok = tracing.FunctionName(d, id); !ok {
			name = tracing.UnknownFunctionName(d, id)
		}
	}
	if int(d) < len(p.funcs) && id < 1<<16 {
		t := p.funcs[d]
		if int(id) >= len(t) {
			t = append(t, make([]string, int(id)+1-len(t))...)
		}
		t[id] = name
		p.funcs[d] = t
	}
	return name
}

// kernel returns the symbol of a kernel id; unknown ids get a placeholder
// so a dispatch is never dropped for want of its symbol.
func (p *csvProcess) kernel(id uint64, d *tracing.KernelDispatch) *csvKernel {
	if k, ok := p.kernels[id]; ok {
		return k
	}
	k := &csvKernel{name: "unknown_kernel_" + strconv.FormatUint(id, 10),
		ldsBlockSize: roundUp(uint64(d.GroupSegmentSize), 512),
		vgpr:         d.VGPRCount, agpr: d.AGPRCount, sgpr: d.SGPRCount}
	p.kernels[id] = k
	return k
}
