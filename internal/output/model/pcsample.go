package model

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// PCSample is one PC sample resolved to its dispatch, as rocprofv3's
// rocprofiler_pc_sampling_record_host_trap_v0_t (Method host trap) or
// rocprofiler_pc_sampling_record_stochastic_v0_t (Method stochastic)
// carries it. The stochastic fields (WaveIssued to ArbStall) are decoded
// from the snapshot registers as rocprofiler-sdk's GFX9 parser does; zero
// for host trap.
type PCSample struct {
	tracing.PCSample
	Method        tracing.PCSamplingMethod
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
	// WaveIssued: the wave issued the instruction at the PC (CSV's
	// Wave_Issued_Instruction, JSON's wave_issued).
	WaveIssued bool
	// InstType is the issued instruction's type (Instruction_Type,
	// inst_type; meaningful when WaveIssued).
	InstType PCInstType
	// StallReason is why the wave issued nothing (Stall_Reason, JSON's
	// snapshot.stall_reason; rocprofiler-sdk decodes it whatever
	// WaveIssued says).
	StallReason PCStallReason
	// WaveCount is the active waves on the CU when sampled (Wave_Count,
	// wave_cnt).
	WaveCount uint32
	// DualIssueVALU: two VALU instructions issued together
	// (snapshot.dual_issue_valu).
	DualIssueVALU bool
	// ArbIssue and ArbStall are the arbiter's state: the pipes that
	// issued and that stalled (snapshot.arb_state_issue_*, _stall_*).
	ArbIssue, ArbStall PCArbPipes
}

// PCInstType is rocprofiler-sdk's rocprofiler_pc_sampling_instruction_type_t.
type PCInstType uint8

// Instruction types, rocprofiler-sdk's values.
const (
	PCInstNone PCInstType = iota
	PCInstVALU
	PCInstMatrix
	PCInstScalar
	PCInstTex
	PCInstLDS
	PCInstLDSDirect
	PCInstFlat
	PCInstExport
	PCInstMessage
	PCInstBarrier
	PCInstBranchNotTaken
	PCInstBranchTaken
	PCInstJump
	PCInstOther
	PCInstNoInst
	PCInstDualVALU
	pcInstLast
)

var pcInstNames = [...]string{"NONE", "VALU", "MATRIX", "SCALAR", "TEX", "LDS", "LDS_DIRECT", "FLAT",
	"EXPORT", "MESSAGE", "BARRIER", "BRANCH_NOT_TAKEN", "BRANCH_TAKEN", "JUMP", "OTHER", "NO_INST", "DUAL_VALU"}

// Name is rocprofiler_get_pc_sampling_instruction_type_name's answer, e.g.
// ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_VALU (what rocprofv3 writes);
// "" for a value it does not know.
func (t PCInstType) Name() string {
	if t < pcInstLast {
		return "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_" + pcInstNames[t]
	}
	return ""
}

// String is the short name, e.g. VALU.
func (t PCInstType) String() string {
	if t < pcInstLast {
		return pcInstNames[t]
	}
	return "PCInstType(" + strconv.Itoa(int(t)) + ")"
}

// PCStallReason is rocprofiler-sdk's
// rocprofiler_pc_sampling_instruction_not_issued_reason_t.
type PCStallReason uint8

// Not-issued reasons, rocprofiler-sdk's values.
const (
	PCStallNone PCStallReason = iota
	PCStallNoInstructionAvailable
	PCStallALUDependency
	PCStallWaitcnt
	PCStallInternalInstruction
	PCStallBarrierWait
	PCStallArbiterNotWin
	PCStallArbiterWinExStall
	PCStallOtherWait
	PCStallSleepWait
	pcStallLast
)

var pcStallNames = [...]string{"NONE", "NO_INSTRUCTION_AVAILABLE", "ALU_DEPENDENCY", "WAITCNT",
	"INTERNAL_INSTRUCTION", "BARRIER_WAIT", "ARBITER_NOT_WIN", "ARBITER_WIN_EX_STALL", "OTHER_WAIT", "SLEEP_WAIT"}

// Name is rocprofiler_get_pc_sampling_instruction_not_issued_reason_name's
// answer, e.g. ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_WAITCNT
// (what rocprofv3 writes); "" for a value it does not know.
func (r PCStallReason) Name() string {
	if r < pcStallLast {
		return "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_" + pcStallNames[r]
	}
	return ""
}

// String is the short name, e.g. WAITCNT.
func (r PCStallReason) String() string {
	if r < pcStallLast {
		return pcStallNames[r]
	}
	return "PCStallReason(" + strconv.Itoa(int(r)) + ")"
}

// PCArbPipes is a set of the arbiter's pipes (one bit each, PCArb*).
type PCArbPipes uint16

// The arbiter's pipes, in the order rocprofiler-sdk's serializer writes
// snapshot.arb_state_issue_* and _stall_* (PCArbPipeNames).
const (
	PCArbVALU PCArbPipes = 1 << iota
	PCArbMatrix
	PCArbLDS
	PCArbLDSDirect
	PCArbScalar
	PCArbVMEMTex
	PCArbFlat
	PCArbExp
	PCArbMisc
	PCArbBrMsg
)

// PCArbPipeNames are the pipes' key suffixes, bit i of PCArbPipes first:
// arb_state_issue_<name>, arb_state_stall_<name>.
var PCArbPipeNames = [...]string{"valu", "matrix", "lds", "lds_direct", "scalar", "vmem_tex", "flat",
	"exp", "misc", "brmsg"}

// Has says whether the set holds the pipe(s) p.
func (a PCArbPipes) Has(p PCArbPipes) bool { return a&p == p && p != 0 }

// gfx9InstType maps the gfx9 perf_snapshot_data instruction type (bits
// 6:3) to rocprofiler-sdk's enum, as its GFX9 translation table does
// (codes it has no entry for are NONE).
var gfx9InstType = [16]PCInstType{PCInstVALU, PCInstMatrix, PCInstScalar, PCInstTex, PCInstLDS, PCInstFlat,
	PCInstExport, PCInstMessage, PCInstBarrier, PCInstBranchNotTaken, PCInstBranchTaken, PCInstJump,
	PCInstOther, PCInstNoInst}

// gfx9StallReason maps the gfx9 not-issued reason (bits 9:7).
var gfx9StallReason = [8]PCStallReason{PCStallNoInstructionAvailable, PCStallALUDependency, PCStallWaitcnt,
	PCStallInternalInstruction, PCStallBarrierWait, PCStallArbiterNotWin, PCStallArbiterWinExStall,
	PCStallOtherWait}

// gfx9ArbPipes is the pipe of each gfx9 arbiter-state bit (issue: bits
// 0-7 of the field, stall: 8-15): misc, exp, flat, lds, vmem_tex, scalar,
// matrix, valu.
var gfx9ArbPipes = [8]PCArbPipes{PCArbMisc, PCArbExp, PCArbFlat, PCArbLDS, PCArbVMEMTex, PCArbScalar,
	PCArbMatrix, PCArbVALU}

// DecodeGFX9Snapshot fills s's stochastic fields from its snapshot
// registers as rocprofiler-sdk's GFX9 parser does (gfx90a, gfx942; the
// same on gfx950): perf_snapshot_data bit 0 valid, 1 issued, 2 dual-issue
// VALU, 6:3 instruction type, 9:7 not-issued reason, 25:10 arbiter state,
// 26 error; perf_snapshot_data1 bits 5:0 the wave count. It reports
// whether the sample is valid (valid set, error clear); rocprofiler-sdk
// hands invalid samples on as invalid records, which rocprofv3 does not
// write.
func DecodeGFX9Snapshot(s *PCSample) bool {
	d := s.Snapshot[0]
	if d&1 == 0 || d>>26&1 != 0 {
		return false
	}
	s.WaveIssued = d>>1&1 != 0
	s.DualIssueVALU = d>>2&1 != 0
	s.InstType = gfx9InstType[d>>3&0xf]
	s.StallReason = gfx9StallReason[d>>7&7]
	arb := d >> 10 & 0xffff
	s.ArbIssue, s.ArbStall = 0, 0
	for i, p := range gfx9ArbPipes {
		if arb>>i&1 != 0 {
			s.ArbIssue |= p
		}
		if arb>>(8+i)&1 != 0 {
			s.ArbStall |= p
		}
	}
	s.WaveCount = s.Snapshot[1] & 0x3f
	return true
}

// PCSamples are the PC samples of one spool (of one method: a run
// samples with one).
type PCSamples struct {
	Samples []PCSample // in the order ROCR delivered them
	// Lost are the samples ROCR reported lost (its buffers were full).
	Lost uint64
	// Invalid are stochastic samples the hardware marked invalid (left
	// out of Samples, as rocprofv3 leaves them out of its outputs).
	Invalid uint64
	// Unmatched are samples whose correlation id named no dispatch of the
	// process; Filtered those of kernels the kernel filter left out. Both
	// are left out of Samples.
	Unmatched, Filtered uint64
	// CodeObjects are the process's loaded code objects.
	CodeObjects []tracing.CodeObject
	// Spool is the spool's path: the shim keeps memory:// code objects
	// beside it (internal/hsa pcs_codeobj.go).
	Spool string
}

// pcsDispatch is a dispatch as the samples need it.
type pcsDispatch struct {
	id, corr, kernel uint64
	node, tid        uint32
	start, end       uint64
}

// ReadPCSamples reads a spool's PC samples and resolves each to its
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
	out := &PCSamples{Spool: p.Info.Path}
	dispatches := map[uint64]*pcsDispatch{}
	type slotKey struct {
		node uint32
		trap uint64
	}
	bySlot := map[slotKey][]uint64{}
	var batches [][]byte
	var nodes []uint32
	var methods []tracing.PCSamplingMethod
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
				m := b.Method
				if m != tracing.PCSamplingStochastic {
					m = tracing.PCSamplingHostTrap // a spool's synthetic batches may name none
				}
				methods = append(methods, m)
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
			ps := PCSample{PCSample: s, Method: methods[bi], AgentNode: b.AgentNode, Offset: s.PC, VAddr: s.PC}
			if ps.Method == tracing.PCSamplingStochastic && !DecodeGFX9Snapshot(&ps) {
				out.Invalid++
				continue
			}
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
			ps.DispatchID, ps.CorrelationID, ps.KernelID, ps.TID = d.id, d.corr, d.kernel, d.tid
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
	// Comment is the sample's Instruction_Comment: the source line of its
	// PC from the code object's DWARF line table ("" without one).
	Comment(s *PCSample) string
	// NoObjdump: llvm-objdump is not installed: no instruction has text.
	NoObjdump() bool
	// Close removes what the disassembler extracted.
	Close()
}

// noInstructions is the PCInstructions of a writer given no disassembler:
// every code object unknown.
type noInstructions struct{}

func (noInstructions) Text(*PCSample) (string, bool) { return "", false }
func (noInstructions) Comment(*PCSample) string      { return "" }
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

// PCSCodeObjectSuffix names the shim's copy of a memory:// code object:
// <spool path><suffix><code object id> (internal/hsa pcs_codeobj.go spells
// the same name).
const PCSCodeObjectSuffix = ".codeobj."

// CodeObjectBytes reads a loaded code object: its file:// URI, or for a
// memory:// one (gone with the app) the copy the shim kept beside the
// spool while PC sampling was on.
func CodeObjectBytes(spool string, c *tracing.CodeObject) ([]byte, error) {
	uri := string(c.URI)
	if !strings.HasPrefix(uri, "memory://") {
		return fileCodeObject(uri)
	}
	if spool == "" {
		return nil, fmt.Errorf("code object %d: %s: no spool", c.CodeObjectID, uri)
	}
	data, err := os.ReadFile(spool + PCSCodeObjectSuffix + strconv.FormatUint(c.CodeObjectID, 10))
	if err == nil && len(data) == 0 {
		err = fmt.Errorf("code object %d: empty copy", c.CodeObjectID)
	}
	return data, err
}

// KernelCodeEntryOffsets are the kernels' kernel_code_entry_byte_offset
// (the descriptor's int64 at byte 16: the entry's distance from the
// descriptor), by kernel id, as rocprofiler-sdk reports it in its
// kernel-symbol record (and kernel_address = kernel_object + it). The shim
// records it from the descriptor at load; for a symbol without it (spools
// from before the field) it is read from the code object's ELF symbols
// ("NAME.kd"), which works only while a file:// code object is still there
// or PC sampling kept a memory:// one. A kernel with neither is missing.
// rocprofiler-compute's PC-sampling table reads it from results.json.
func (p *Catalogue) KernelCodeEntryOffsets() map[uint64]int64 {
	out := map[uint64]int64{}
	byCO := map[uint64][]*KernelSymbol{}
	for _, s := range p.Symbols {
		switch {
		case s == nil || s.KernelID == 0 || s.Lost:
		case s.EntryOffset != 0:
			out[s.KernelID] = int64(s.EntryOffset)
		default:
			byCO[s.CodeObjectID] = append(byCO[s.CodeObjectID], s)
		}
	}
	for i := range p.CodeObjects {
		c := &p.CodeObjects[i]
		syms := byCO[c.CodeObjectID]
		if len(syms) == 0 || c.Operation != tracing.CodeObjectLoad {
			continue
		}
		data, err := CodeObjectBytes(p.Info.Path, c)
		if err != nil {
			continue
		}
		offs := kdEntryOffsets(data)
		for _, s := range syms {
			if v, ok := offs[s.Raw]; ok {
				out[s.KernelID] = v
			}
		}
	}
	return out
}

// KernelEntry is where a kernel's code starts, as rocprofiler-sdk's
// kernel-symbol record ends: kernel_code_entry_byte_offset and
// kernel_address.
type KernelEntry struct {
	Offset  int64  // 0 when unknown
	Address uint64 // kernel_object + Offset; 0 for a symbol without an id
}

// KernelEntries are every symbol's KernelEntry by kernel id: the one
// source JSON's kernel_symbols and ROCpd's kernel-symbol extdata write,
// so the two agree (and convert, reading ROCpd's back, reproduces JSON's).
func (p *Catalogue) KernelEntries() map[uint64]KernelEntry {
	offs := p.KernelCodeEntryOffsets()
	out := make(map[uint64]KernelEntry, len(p.Symbols))
	for id, s := range p.Symbols {
		if s == nil {
			continue
		}
		e := KernelEntry{Offset: offs[s.KernelID]}
		if s.KernelID != 0 {
			e.Address = s.KernelObject + uint64(e.Offset)
		}
		out[id] = e
	}
	return out
}

// kdEntryOffsets reads kernel_code_entry_byte_offset of every kernel
// descriptor symbol (NAME.kd) of an AMDGPU code object, by symbol name.
func kdEntryOffsets(data []byte) map[string]int64 {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil
	}
	out := map[string]int64{}
	for _, s := range syms {
		if !strings.HasSuffix(s.Name, ".kd") || int(s.Section) >= len(f.Sections) || s.Section == elf.SHN_UNDEF {
			continue
		}
		sec := f.Sections[s.Section]
		if sec.Type == elf.SHT_NOBITS || s.Value < sec.Addr || s.Value+24 > sec.Addr+sec.Size {
			continue
		}
		var b [8]byte
		if _, err := sec.ReadAt(b[:], int64(s.Value-sec.Addr)+16); err != nil {
			continue
		}
		out[s.Name] = int64(binary.LittleEndian.Uint64(b[:]))
	}
	return out
}
