package model

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"

	"github.com/rocprof-go/rocprof-go/internal/kernelname"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// HostFunction is a kernel's host stub: its address and the device
// function (the kernel's symbol name) it launches.
type HostFunction struct {
	Address uint64
	Device  string
}

// KernelSymbol is a kernel with its names in every form.
type KernelSymbol struct {
	tracing.KernelSymbol
	Raw       string // mangled, as loaded (".kd" kept)
	Demangled string
	Truncated string
	Display   string // what the options ask for
	// Lost: the spool has dispatches of the kernel but not its symbol
	// record; every name is "kernel_<id>" and the descriptor fields are
	// zero (CSV takes them from the dispatch instead).
	Lost bool
}

// CounterSum is one (dispatch, counter) row of counter_collection.csv:
// every dimension instance of the counter summed.
type CounterSum struct {
	ID    uint64
	Name  string
	Value float64
}

// apiTables is the size of the per-domain function-name tables: API
// domains are numbered below it (string tables 16 and up are not APIs).
const apiTables = 16

// Catalogue is the catalogue of one spool, the one every writer reads: what
// is small enough to hold — strings, function names, agents and their
// labels, kernel symbols, code objects, host functions, counters (names
// and per-dispatch sums), the thread/queue/stream sets, record counts and
// sizes, and rocprofv3's record order and correlation ids. Events are
// never held; writers stream them with a second pass (spoolView).
//
// After scanProcess returns, a process is only read (writers may format on
// several goroutines).
type Catalogue struct {
	Info        tracing.ProcessInfo
	Agents      []tracing.AgentInfo // sorted by node id
	agentByNode map[uint32]int
	labels      map[uint32]string // agentLabel(node, " ") of every agent
	Symbols     map[uint64]*KernelSymbol
	SymbolOrder []uint64
	CodeObjects []tracing.CodeObject // loads, in order
	// HostFunctions are the kernels' host stubs HIP registered
	// (__hipRegisterFunction), in registration order.
	HostFunctions []HostFunction
	// funcNames are the function names the spool carries, by
	// domain<<32|id; funcs resolves every function the spool called once
	// (the spool's name, else the registered table's), by domain and id.
	funcNames    map[uint64]string
	funcs        [apiTables][]string
	CounterNames map[uint64]string
	Counters     []counterInfo // distinct (counter, agent) pairs sampled, in order seen
	// counterIDs numbers instance selections recorded under a shared id
	// (counters.go: CounterID).
	counterIDs counterIDs
	// CounterSums are counter_collection.csv's values: by dispatch id, one
	// sum per counter name, in ascending counter id.
	CounterSums map[uint64][]CounterSum
	// Sampled holds the dispatches that have counter samples: the only
	// dispatches a writer remembers (to place their samples).
	Sampled map[uint64]struct{}
	Threads []uint32 // sorted
	Queues  []uint64 // sorted, 0 excluded
	Streams []uint64 // sorted, 0 excluded
	// Counts and Bytes are the records of each domain and their raw size
	// in the spool (--minimum-output-data), hidden markers left out.
	Counts, Bytes [NumDomains]uint64
	// statuses are what the process's runtime side reported about itself
	// (tracing.TableStatus strings), by status id.
	statuses map[uint64]string
	// ReadStats are what the scan met reading the spool: records published,
	// torn and invalid (markers hidden or not, they count).
	ReadStats tracing.Stats
	// LostChunks are chunks the writer handed out that read back empty:
	// the spool's storage did not keep them (tracing.Reader.LostChunks).
	LostChunks uint64
	Begin, End uint64 // earliest start and latest end of any event
	Config     *Config
	Renamer    *KernelRenamer // --kernel-rename: see dispatchName (rename.go)
	// order puts records in rocprofv3's order and numbers correlation ids
	// (order.go); writers print p.cid(raw) for every correlation id.
	Order recordOrder
	// streams numbers recorded hipStream_t arguments (hipargs.go).
	StreamNumbers StreamNumbers
	// PCSampleCount are the host-trap PC samples the spool holds;
	// PCSamplesLost those ROCR reported lost (its buffers were full).
	PCSampleCount, PCSamplesLost uint64
}

// counterInfo is one counter sampled on one agent: ID is the id it is
// written under (CounterID), Meta its description (Config.DescribeCounter).
type counterInfo struct {
	ID        uint64
	AgentNode uint32
	Name      string
	Meta      CounterMeta
	recorded  uint64 // the id the samples carry
}

// Needs are the parts of a catalogue the writers of a Write read; a scan
// reads only those (a catalogue's cost is per record, and what it holds
// stays in memory while the writers run).
type Needs uint8

const (
	// needNames: function names, agents and labels, kernel symbols (each
	// demangled once), --kernel-rename's ranges, rocprofv3's record order
	// and correlation ids: what every writer reads.
	NeedNames Needs = 1 << iota
	// needSets: the thread, queue and stream sets, the time span, code
	// objects, host functions, the counters sampled and the sampled
	// dispatches, kernels whose symbol was lost: what the formats besides
	// CSV read.
	NeedSets
	// needCounterSums: counter_collection.csv's per-dispatch sums (CSV and
	// rocprof v1's results.csv).
	NeedCounterSums

	// needCounts alone is the light pass of a Write that writes nothing
	// itself: records, sizes and statuses.
	NeedCounts Needs = 0
	// needWriters is what a format besides CSV reads.
	NeedWriters = NeedNames | NeedSets
	NeedAll     = NeedNames | NeedSets | NeedCounterSums
)

// Scan reads a spool once for the parts of its catalogue need asks
// for; the caller rewinds it (or wraps it in a spoolView) for the events.
// Each record is decoded once.
func Scan(r *tracing.Reader, cfg *Config, need Needs) (*Catalogue, error) {
	p := &Catalogue{
		Info: validInfo(r.Process()), agentByNode: map[uint32]int{}, Symbols: map[uint64]*KernelSymbol{},
		funcNames: map[uint64]string{}, CounterNames: map[uint64]string{}, Config: cfg,
		statuses: map[uint64]string{}, Begin: ^uint64(0), StreamNumbers: StreamNumbers{},
	}
	if need&NeedNames == 0 {
		p.scanCounts(r)
		return p, nil
	}
	p.Order.spill.Root = cfg.SpillDir
	if cfg.KernelRename {
		p.Renamer = NewKernelRenamer()
	}
	sets, sumsOn := need&NeedSets != 0, need&NeedCounterSums != 0
	threads := map[uint32]struct{}{}
	kernels := map[uint64]struct{}{}
	type counterKey struct {
		id    uint64
		agent uint32
		name  string
	}
	counters := map[counterKey]struct{}{}
	queues := map[uint64]struct{}{}
	streams := map[uint64]struct{}{}
	type sumKey struct {
		dispatch uint64
		name     string
	}
	sums := map[sumKey]*CounterSum{}
	var sumOrder []sumKey
	span := func(s, e uint64) {
		if s != 0 && s < p.Begin {
			p.Begin = s
		}
		if e > p.End {
			p.End = e
		}
	}
	called := func(d tracing.APIDomain, id uint32) {
		// Noted now, named once the spool's own names are all read.
		if int(d) < apiTables && id < 1<<16 && int(id) >= len(p.funcs[d]) {
			p.funcs[d] = append(p.funcs[d], make([]string, int(id)+1-len(p.funcs[d]))...)
		}
	}
	o := &p.Order
	for r.Next() {
		k := r.Kind()
		if d := KindDomain(k); d >= 0 && !(k == tracing.KindMarker && cfg.HideMarkers) {
			p.Counts[d]++
			p.Bytes[d] += uint64(len(r.Bytes()))
		}
		switch k {
		case tracing.KindString:
			o.note(k, orderKey{}, 0)
			s := r.String()
			n, isStream := tracing.StreamNoteOf(s)
			if !isStream {
				s.Value = ValidBytes(s.Value)
			}
			if isStream {
				// A stream no dispatch or copy used (only named, or only
				// an argument) still gets its stream row.
				p.StreamNumbers.add(n)
				streams[n.Number] = struct{}{}
			} else if s.Table == tracing.TableCounter {
				p.CounterNames[s.ID] = string(s.Value)
			} else if s.Table == tracing.TableHostFunction {
				if sets {
					p.HostFunctions = append(p.HostFunctions, HostFunction{Address: s.ID, Device: string(s.Value)})
				}
			} else if s.Table == tracing.TableStatus {
				p.statuses[s.ID] = string(s.Value)
			} else if s.Table < apiTables {
				p.funcNames[uint64(s.Table)<<32|s.ID&0xffffffff] = string(s.Value)
			}
		case tracing.KindAgentInfo:
			o.note(k, orderKey{}, 0)
			a := validAgent(r.AgentInfo())
			node := uint32(a.NodeID())
			if i, ok := p.agentByNode[node]; ok {
				p.Agents[i] = a
			} else {
				p.agentByNode[node] = len(p.Agents)
				p.Agents = append(p.Agents, a)
			}
		case tracing.KindKernelSymbol:
			o.note(k, orderKey{}, 0)
			s := r.KernelSymbol()
			if _, ok := p.Symbols[s.KernelID]; !ok {
				p.SymbolOrder = append(p.SymbolOrder, s.KernelID)
			}
			ks := &KernelSymbol{KernelSymbol: s, Raw: string(s.Name)}
			ks.Name = nil // aliases the spool
			ks.name(cfg)
			p.Symbols[s.KernelID] = ks
		case tracing.KindCodeObject:
			o.note(k, orderKey{}, 0)
			if !sets {
				continue
			}
			c := r.CodeObject()
			if c.Operation == tracing.CodeObjectLoad {
				c.URI = append([]byte(nil), ValidBytes(c.URI)...)
				p.CodeObjects = append(p.CodeObjects, c)
			}
		case tracing.KindHIPAPI, tracing.KindHSAAPI, tracing.KindRCCLAPI:
			a := r.APICall()
			o.note(k, orderKey{a.End, a.Start}, a.CorrelationID)
			called(a.Domain, a.Function)
			if sets {
				threads[a.TID] = struct{}{}
				span(a.Start, a.End)
			}
		case tracing.KindMarker:
			m := r.Marker()
			m.Message = ValidBytes(m.Message)
			o.note(k, orderKey{m.End, m.Start}, m.CorrelationID)
			o.notePop(&m)
			p.Renamer.AddMarker(&m)
			if sets && !cfg.HideMarkers {
				threads[m.TID] = struct{}{}
				span(m.Start, m.End)
			}
		case tracing.KindKernelDispatch:
			d := r.KernelDispatch()
			o.note(k, orderKey{d.End, d.Start}, d.CorrelationID)
			if sets {
				threads[d.TID] = struct{}{}
				queues[d.QueueID] = struct{}{}
				streams[d.StreamID] = struct{}{}
				kernels[d.KernelID] = struct{}{}
				span(d.Start, d.End)
			}
		case tracing.KindCounterSample:
			o.note(k, orderKey{}, 0)
			if !sets && !sumsOn {
				continue
			}
			c := r.CounterSample()
			c.Name = ValidBytes(c.Name)
			name := p.CounterName(&c)
			if sets {
				if p.Sampled == nil {
					p.Sampled = map[uint64]struct{}{}
				}
				p.Sampled[c.DispatchID] = struct{}{}
				key := counterKey{c.CounterID, c.AgentNode, name}
				if _, ok := counters[key]; !ok {
					counters[key] = struct{}{}
					p.counterIDs.note(c.CounterID, name)
					p.Counters = append(p.Counters, counterInfo{ID: c.CounterID, AgentNode: c.AgentNode, Name: name,
						recorded: c.CounterID})
				}
			}
			if sumsOn {
				sk := sumKey{c.DispatchID, name}
				sum := sums[sk]
				if sum == nil {
					sum = &CounterSum{ID: c.CounterID, Name: name}
					sums[sk] = sum
					sumOrder = append(sumOrder, sk)
				}
				sum.Value += c.Value
			}
		case tracing.KindMemoryCopy:
			c := r.MemoryCopy()
			o.note(k, orderKey{c.End, c.Start}, c.CorrelationID)
			if sets {
				threads[c.TID] = struct{}{}
				streams[c.StreamID] = struct{}{}
				span(c.Start, c.End)
			}
		case tracing.KindMemoryAllocation:
			a := r.MemoryAllocation()
			o.note(k, orderKey{a.End, a.Start}, a.CorrelationID)
			if sets {
				threads[a.TID] = struct{}{}
				span(a.Start, a.End)
			}
		case tracing.KindScratchMemory:
			s := r.ScratchMemory()
			o.note(k, orderKey{s.End, s.Start}, s.CorrelationID)
			if sets {
				threads[s.TID] = struct{}{}
				queues[s.QueueID] = struct{}{}
				span(s.Start, s.End)
			}
		case tracing.KindPCSample:
			o.note(k, orderKey{}, 0)
			b := r.PCSampleBatch()
			p.PCSamplesLost += b.Lost
			p.PCSampleCount += uint64(b.Count())
		default:
			o.observe(r)
		}
	}
	// Dispatches of kernels whose symbol record was lost still need a name.
	for _, id := range sortedKeys(kernels) {
		if _, ok := p.Symbols[id]; !ok {
			name := fmt.Sprintf("kernel_%d", id)
			p.Symbols[id] = &KernelSymbol{KernelSymbol: tracing.KernelSymbol{KernelID: id},
				Raw: name, Demangled: name, Truncated: name, Display: name, Lost: true}
			p.SymbolOrder = append(p.SymbolOrder, id)
		}
	}
	if p.Begin == ^uint64(0) {
		p.Begin = 0
	}
	sort.Slice(p.Agents, func(i, j int) bool { return p.Agents[i].NodeID() < p.Agents[j].NodeID() })
	p.labels = make(map[uint32]string, len(p.Agents))
	for i, a := range p.Agents {
		node := uint32(a.NodeID())
		p.agentByNode[node] = i
	}
	for node := range p.agentByNode {
		p.labels[node] = p.AgentLabel(node, " ")
	}
	p.counterIDs.finish()
	for i := range p.Counters {
		c := &p.Counters[i]
		c.ID = p.CounterID(&tracing.CounterSample{CounterID: c.recorded, Name: []byte(c.Name)})
	}
	p.describeCounters()
	for d := range p.funcs {
		for id := range p.funcs[d] {
			p.funcs[d][id] = p.resolveFunc(tracing.APIDomain(d), uint32(id))
		}
	}
	if len(sumOrder) > 0 {
		p.CounterSums = map[uint64][]CounterSum{}
		for _, k := range sumOrder {
			p.CounterSums[k.dispatch] = append(p.CounterSums[k.dispatch], *sums[k])
		}
		for _, list := range p.CounterSums {
			sort.SliceStable(list, func(i, j int) bool { return list[i].ID < list[j].ID })
		}
	}
	p.Threads = sortedKeys(threads)
	p.Queues = sortedKeys(queues)
	p.Streams = sortedKeys(streams)
	p.Queues = dropZero(p.Queues)
	p.Streams = dropZero(p.Streams)
	p.StreamNumbers.sort()
	p.ReadStats = r.Stats()
	p.LostChunks = r.LostChunks()
	p.Order.finish(r, cfg.HideMarkers, cfg.KeepCorrelationIDs[p.Info.Path])
	if p.Order.err != nil {
		return nil, p.Order.err
	}
	return p, nil
}

// scanCounts is the light pass: records and raw sizes by domain, statuses
// and what the reader met; no record is decoded but status strings.
func (p *Catalogue) scanCounts(r *tracing.Reader) {
	hide := p.Config.HideMarkers
	for r.Next() {
		k := r.Kind()
		if d := KindDomain(k); d >= 0 {
			if !(k == tracing.KindMarker && hide) {
				p.Counts[d]++
				p.Bytes[d] += uint64(len(r.Bytes()))
			}
		} else if k == tracing.KindString {
			if s := r.String(); s.Table == tracing.TableStatus {
				p.statuses[s.ID] = string(ValidBytes(s.Value))
			}
		}
	}
	p.ReadStats = r.Stats()
	p.LostChunks = r.LostChunks()
	r.Rewind()
}

// name formats the symbol's names: demangled once, truncated from that,
// and the display form the options ask for (kernelname.Format's three
// results).
func (s *KernelSymbol) name(cfg *Config) {
	s.Demangled = kernelname.Format(s.Raw, false, false)
	s.Truncated = kernelname.Truncate(s.Demangled)
	switch {
	case cfg.MangledKernels && !cfg.TruncateKernels:
		s.Display = s.Raw
	case cfg.TruncateKernels:
		s.Display = s.Truncated
	default:
		s.Display = s.Demangled
	}
	// Demangled from the bytes as loaded (a mangled name counts bytes),
	// then each form repaired (text.go).
	s.Raw, s.Demangled, s.Truncated = ValidString(s.Raw), ValidString(s.Demangled), ValidString(s.Truncated)
	s.Display = ValidString(s.Display)
}

// CID is the correlation id rocprofv3 would give a record carrying raw.
func (p *Catalogue) CID(raw uint64) uint64 { return p.Order.ids.of(raw) }

// Statuses are the process's status strings (tracing.TableStatus), by id.
func (p *Catalogue) Statuses() map[uint64]string { return p.statuses }

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

// RoundUp rounds v up to a multiple of to.
func RoundUp(v, to uint64) uint64 { return (v + to - 1) / to * to }

// OpenEach opens every spool of the input in turn and hands fn its
// catalogue and a rewound reader: the catalogues Write read for every
// writer (Input.catalogues), else scanned here. Only one spool is mapped at
// a time.
func (in *Input) OpenEach(fn func(p *Catalogue, r *SpoolView) error) error {
	for i, path := range in.Spools {
		r, err := tracing.Open(path)
		if err != nil {
			return err
		}
		var p *Catalogue
		if in.Catalogues != nil {
			p = in.Catalogues[i]
		} else {
			p, err = Scan(r, &in.Config, NeedWriters)
		}
		if err == nil {
			if in.Config.HideMarkers {
				r.Hide(tracing.KindMarker)
			}
			err = fn(p, NewSpoolView(r, &p.Order))
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

// Agent returns the agent on a KFD node, or nil.
func (p *Catalogue) Agent(node uint32) *tracing.AgentInfo {
	if i, ok := p.agentByNode[node]; ok {
		return &p.Agents[i]
	}
	return nil
}

// AgentIndex is the agent number the -agent-index option selects; an
// agent the spool never described is numbered by its node id.
func (p *Catalogue) AgentIndex(node uint32) uint64 {
	a := p.Agent(node)
	if a == nil {
		return uint64(node)
	}
	return agentNumber(a, p.Config.AgentIndex)
}

// AgentLabel is rocprofv3's agent label ("Agent 2", or "GPU 0" when
// type-relative) with sep between the words.
func (p *Catalogue) AgentLabel(node uint32, sep string) string {
	word := "Agent"
	if p.Config.AgentIndex == AgentIndexTypeRelative {
		if a := p.Agent(node); a != nil {
			word = a.Type().String()
		}
	}
	return word + sep + strconv.FormatUint(p.AgentIndex(node), 10)
}

// Label is agentLabel(node, " "), CSV's Agent_Id, from the table the scan
// made (the CSV rows ask for it per record, on several goroutines).
func (p *Catalogue) Label(node uint32) string {
	if l, ok := p.labels[node]; ok {
		return l
	}
	return p.AgentLabel(node, " ")
}

// AgentType is "CPU", "GPU" or "UNK" for a node.
func (p *Catalogue) AgentType(node uint32) string {
	if a := p.Agent(node); a != nil {
		return a.Type().String()
	}
	return "UNK"
}

// FuncName names an API function: a name carried by the spool wins over
// the registered tables. Every function the spool called is named once, by
// the scan.
func (p *Catalogue) FuncName(d tracing.APIDomain, id uint32) string {
	if int(d) < apiTables {
		if t := p.funcs[d]; int(id) < len(t) && t[id] != "" {
			return t[id]
		}
	}
	return p.resolveFunc(d, id)
}

func (p *Catalogue) resolveFunc(d tracing.APIDomain, id uint32) string {
	if s, ok := p.funcNames[uint64(d)<<32|uint64(id)]; ok && s != "" {
		return s
	}
	if s, ok := tracing.FunctionName(d, id); ok {
		return s
	}
	return tracing.UnknownFunctionName(d, id)
}

// MarkerName is the name rocprofv3 prints for a marker: the user's text for
// marks and ranges, else the ROCTx function.
func MarkerName(m *tracing.Marker) string {
	if m.Function.CarriesMessage() {
		return string(m.Message)
	}
	return m.Function.String()
}

// CounterName names a counter id: the sample's own name, the spool's
// counter table (as read so far), else counter_<id>.
func (p *Catalogue) CounterName(c *tracing.CounterSample) string {
	if len(c.Name) > 0 {
		return string(c.Name)
	}
	if s, ok := p.CounterNames[c.CounterID]; ok && s != "" {
		return s
	}
	return "counter_" + strconv.FormatUint(c.CounterID, 10)
}

// KernelName is the display name of a kernel id.
func (p *Catalogue) KernelName(id uint64) string {
	if s, ok := p.Symbols[id]; ok {
		return s.Display
	}
	return fmt.Sprintf("kernel_%d", id)
}

// KernelDemangled is the demangled symbol Perfetto names slices with.
func (p *Catalogue) KernelDemangled(id uint64) string {
	if s, ok := p.Symbols[id]; ok {
		return s.Demangled
	}
	return fmt.Sprintf("kernel_%d", id)
}

// IsSampled reports whether a dispatch has counter samples.
func (p *Catalogue) IsSampled(dispatchID uint64) bool {
	_, ok := p.Sampled[dispatchID]
	return ok
}
