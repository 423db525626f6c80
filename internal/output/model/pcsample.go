package model

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// PCSample is one host-trap PC sample resolved to its dispatch, as
// rocprofv3's rocprofiler_pc_sampling_record_host_trap_v0_t carries it.
type PCSample struct {
	tracing.PCSample
	AgentNode     uint32
	DispatchID    uint64
	CorrelationID uint64 // the dispatch's raw correlation id (CID renumbers it)
	KernelID      uint64
	TID           uint32 // the dispatch's thread (for --kernel-rename's external id)
	// CodeObjectID and Offset locate the PC: the loaded code object holding
	// it and the PC's offset from that object's load base (0, the PC: none).
	CodeObjectID uint64
	Offset       uint64
	// VAddr is the PC as an address of the code object's ELF (PC minus
	// the load delta), for disassembly.
	VAddr uint64
}

// PCSamples are the host-trap samples of one spool.
type PCSamples struct {
	Samples []PCSample // in the order ROCR delivered them
	// Lost are the samples ROCR reported lost (its buffers were full).
	Lost uint64
	// Unmatched are samples whose correlation id named no dispatch of the
	// process; Filtered those of kernels the kernel filter left out. Both
	// are left out of Samples.
	Unmatched, Filtered uint64
	// CodeObjects are the process's loaded code objects.
	CodeObjects []tracing.CodeObject
}

// pcsDispatch is a dispatch as the samples need it.
type pcsDispatch struct {
	id, corr, kernel uint64
	node, tid        uint32
	start, end       uint64
}

// ReadPCSamples reads a spool's host-trap samples and resolves each to its
// dispatch: the dispatch whose hardware queue slot (the PC_SAMPLE_DISPATCH
// records the shim wrote) the sample names and whose run holds the
// sample's time; a slot is reused only after its dispatch completed, so
// the dispatches of one slot do not overlap. keep, when set, says which
// kernels (by symbol) keep their samples (--kernel-include-regex,
// --kernel-exclude-regex). Nil when the spool has no PC-sampling record.
func ReadPCSamples(p *Catalogue, keep func(sym *KernelSymbol) bool) (*PCSamples, error) {
	if p.Order.count[tracing.KindPCSample] == 0 {
		return nil, nil
	}
	r, err := tracing.Open(p.Info.Path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := &PCSamples{}
	dispatches := map[uint64]*pcsDispatch{}
	type slotKey struct {
		node uint32
		trap uint64
	}
	bySlot := map[slotKey][]uint64{}
	var batches [][]byte
	var nodes []uint32
	for r.Next() {
		switch r.Kind() {
		case tracing.KindKernelDispatch:
			d := r.KernelDispatch()
			dispatches[d.DispatchID] = &pcsDispatch{id: d.DispatchID, corr: d.CorrelationID, kernel: d.KernelID,
				node: d.AgentNode, tid: d.TID, start: d.Start, end: d.End}
		case tracing.KindPCSampleDispatch:
			m := r.PCSampleDispatch()
			k := slotKey{m.AgentNode, m.TrapID}
			bySlot[k] = append(bySlot[k], m.DispatchID)
		case tracing.KindCodeObject:
			c := r.CodeObject()
			if c.Operation == tracing.CodeObjectLoad {
				c.URI = append([]byte(nil), c.URI...)
				out.CodeObjects = append(out.CodeObjects, c)
			}
		case tracing.KindPCSample:
			b := r.PCSampleBatch()
			out.Lost += b.Lost
			if b.Count() > 0 {
				batches = append(batches, append([]byte(nil), b.Samples...))
				nodes = append(nodes, b.AgentNode)
			}
		}
	}
	// Each slot's dispatches by start time.
	cands := map[slotKey][]*pcsDispatch{}
	for k, ids := range bySlot {
		var ds []*pcsDispatch
		for _, id := range ids {
			if d := dispatches[id]; d != nil {
				ds = append(ds, d)
			}
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i].start < ds[j].start })
		cands[k] = ds
	}
	cos := append([]tracing.CodeObject(nil), out.CodeObjects...)
	sort.Slice(cos, func(i, j int) bool { return cos[i].LoadBase < cos[j].LoadBase })
	kept := map[uint64]bool{}
	for bi, raw := range batches {
		b := tracing.PCSampleBatch{AgentNode: nodes[bi], Samples: raw}
		for i := 0; i < b.Count(); i++ {
			s := b.Sample(i)
			ds := cands[slotKey{b.AgentNode, tracing.TrapIDKey(s.CorrelationID)}]
			// The last dispatch of the slot started at or before the sample.
			j := sort.Search(len(ds), func(j int) bool { return ds[j].start > s.Timestamp }) - 1
			if j < 0 {
				out.Unmatched++
				continue
			}
			d := ds[j]
			if keep != nil {
				k, ok := kept[d.kernel]
				if !ok {
					sym := p.Symbols[d.kernel]
					k = sym == nil || keep(sym)
					kept[d.kernel] = k
				}
				if !k {
					out.Filtered++
					continue
				}
			}
			ps := PCSample{PCSample: s, AgentNode: b.AgentNode, DispatchID: d.id, CorrelationID: d.corr,
				KernelID: d.kernel, TID: d.tid, Offset: s.PC, VAddr: s.PC}
			c := sort.Search(len(cos), func(c int) bool { return cos[c].LoadBase > s.PC }) - 1
			if c >= 0 && s.PC < cos[c].LoadBase+cos[c].LoadSize {
				ps.CodeObjectID = cos[c].CodeObjectID
				ps.Offset = s.PC - cos[c].LoadBase
				ps.VAddr = s.PC - cos[c].LoadDelta
			}
			out.Samples = append(out.Samples, ps)
		}
	}
	return out, nil
}

// PCInstructions gives the instruction text of sampled PCs (the CSV's
// Instruction column, JSON's pc_sample_instructions). The disassembler
// (internal/att's code objects and llvm-objdump) is cgo's side of the
// project, so it is handed in: Config.PCInstructions, which package output
// fills when it writes.
type PCInstructions interface {
	// Text is the instruction at a sample's PC ("" when unknown: no code
	// object, or no llvm-objdump), and whether its code object was known.
	Text(s *PCSample) (string, bool)
	// NoObjdump: llvm-objdump is not installed: no instruction has text.
	NoObjdump() bool
	// Close removes what the disassembler extracted.
	Close()
}

// noInstructions is the PCInstructions of a writer given no disassembler:
// every code object unknown.
type noInstructions struct{}

func (noInstructions) Text(*PCSample) (string, bool) { return "", false }
func (noInstructions) NoObjdump() bool               { return false }
func (noInstructions) Close()                        {}

// NewPCInstructions prepares the disassembly of a spool's samples with the
// configured disassembler.
func (c *Config) NewPCInstructions(s *PCSamples) PCInstructions {
	if c.PCInstructions == nil {
		return noInstructions{}
	}
	return c.PCInstructions(s)
}

// FileCodeObject reads a code object from its file:// URI (with
// #offset=&size= of a bundle), for a disassembler.
func FileCodeObject(uri string) ([]byte, error) { return fileCodeObject(uri) }

// VersionedObjdump finds a versioned llvm-objdump, for a disassembler.
func VersionedObjdump() string { return versionedObjdump() }

// versionedObjdump finds a versioned llvm-objdump (Debian's
// llvm-objdump-NN, ROCm's /opt/rocm/llvm/bin) when the plain name is not
// on PATH; the newest version first.
func versionedObjdump() string {
	var found []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		m, _ := filepath.Glob(filepath.Join(dir, "llvm-objdump-[0-9]*"))
		found = append(found, m...)
	}
	sort.Slice(found, func(i, j int) bool {
		vi, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(found[i]), "llvm-objdump-"))
		vj, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(found[j]), "llvm-objdump-"))
		return vi > vj
	})
	found = append(found, "/opt/rocm/llvm/bin/llvm-objdump")
	for _, f := range found {
		if st, err := os.Stat(f); err == nil && st.Mode()&0o111 != 0 {
			return f
		}
	}
	return ""
}

// fileCodeObject reads a file://PATH[#offset=N&size=M] code object.
func fileCodeObject(uri string) ([]byte, error) {
	rest, ok := strings.CutPrefix(uri, "file://")
	if !ok {
		return nil, fmt.Errorf("not a file URI: %s", uri)
	}
	path, frag, _ := strings.Cut(rest, "#")
	if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	var off, size int64 = 0, -1
	for _, kv := range strings.Split(frag, "&") {
		k, v, _ := strings.Cut(kv, "=")
		n, err := strconv.ParseInt(v, 0, 64)
		if err != nil {
			continue
		}
		switch k {
		case "offset":
			off = n
		case "size":
			size = n
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size < 0 {
		st, err := f.Stat()
		if err != nil {
			return nil, err
		}
		size = st.Size() - off
	}
	if size <= 0 || size > 1<<30 {
		return nil, fmt.Errorf("code object size %d", size)
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, off); err != nil {
		return nil, err
	}
	return b, nil
}
