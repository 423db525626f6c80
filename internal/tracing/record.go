package tracing

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// Format constants mirrored from spool.h.
const (
	SpoolMagic uint64 = 0x4c4f4f5053475052 // "RPGSPOOL"
	ChunkMagic uint32 = 0x4b4e4843         // "CHNK"
	// ChunkSealed is the magic of a chunk its writer left for good
	// (RPG_CHUNK_SEALED): every record in it is published and none will
	// follow, so it may be drained (drain.go). A chunk header otherwise.
	ChunkSealed      uint32 = 0x4c414553 // "SEAL"
	SpoolVersion     uint32 = 1
	ChunkSize               = 64 * 1024
	HeaderFixedSize         = 1024
	ChunkHeaderSize         = 16
	RecordHeaderSize        = 8
	commitByte       byte   = 0xC5
	// AgentNumericFields counts rpg_agent_info_rec's uint64 fields.
	AgentNumericFields = 50
	agentNameLen       = 64
)

// fixedSize is each kind's fixed part (version 1), header included; a record
// shorter than that is invalid.
var fixedSize = [kindLast]uint32{
	KindString:           24,
	KindHIPAPI:           48,
	KindHSAAPI:           48,
	KindMarker:           56,
	KindKernelDispatch:   120,
	KindMemoryCopy:       80,
	KindMemoryAllocation: 64,
	KindScratchMemory:    64,
	KindKernelSymbol:     64,
	KindCodeObject:       64,
	KindAgentInfo:        8 + 8*AgentNumericFields + 4*agentNameLen,
	KindCounterSample:    48,
	kindThread:           16,
	kindClock:            32,
	KindRCCLAPI:          48,
	KindPCSample:         pcSampleRecSizeV1, // version 2: pcSampleRecSize
	KindPCSampleDispatch: 32,
}

// APICompactSize is the fixed part of a version-2 (compact) API record
// (rpg_api_rec2): no thread id (the chunk's owner wrote it), a 32-bit
// duration instead of the end time. Version 3 has the same layout in TSC
// ticks (see tscClock).
const APICompactSize = 32

const apiCompactSize = APICompactSize

// FixedSize returns the size of a kind's fixed part, header included (0 for
// unknown kinds).
func FixedSize(k Kind) uint32 {
	if k < kindLast {
		return fixedSize[k]
	}
	return 0
}

var le = binary.LittleEndian

// String is an interned string: a name for an id in a table.
type String struct {
	Table uint32
	ID    uint64
	Value []byte
}

// APICall is a HIP or HSA API call.
type APICall struct {
	Domain        APIDomain
	Function      uint32
	TID           uint32
	CorrelationID uint64
	Start, End    uint64
	Args          []byte
}

// Marker is a completed ROCTx event.
type Marker struct {
	Domain        APIDomain
	Function      MarkerFunction
	TID           uint32
	CorrelationID uint64
	Start, End    uint64
	RangeID       uint64
	Message       []byte
}

// KernelDispatch is one kernel dispatch; agents are KFD node ids.
type KernelDispatch struct {
	AgentNode          uint32
	TID                uint32
	QueueID            uint64
	StreamID           uint64
	DispatchID         uint64
	KernelID           uint64
	CorrelationID      uint64
	Start, End         uint64
	Grid               [3]uint32
	Workgroup          [3]uint32
	GroupSegmentSize   uint32
	PrivateSegmentSize uint32
	VGPRCount          uint32
	AGPRCount          uint32
	SGPRCount          uint32
	// PacketIndex is the dispatch packet's slot in the application's queue
	// (its write index, low 32 bits), which rocprof v1 printed as
	// queue-index; 0 in spools from before it was recorded.
	PacketIndex uint32
}

// MemoryCopy is one asynchronous memory copy.
type MemoryCopy struct {
	Direction     CopyDirection
	SrcAgentNode  uint32
	DstAgentNode  uint32
	TID           uint32
	Bytes         uint64
	StreamID      uint64
	CorrelationID uint64
	Start, End    uint64
	SrcAddress    uint64
	DstAddress    uint64
}

// MemoryAllocation is one allocation or free.
type MemoryAllocation struct {
	Operation     AllocOperation
	AgentNode     uint32
	TID           uint32
	Address       uint64
	Size          uint64
	CorrelationID uint64
	Start, End    uint64
}

// ScratchMemory is one scratch memory event.
type ScratchMemory struct {
	Operation     ScratchOperation
	AgentNode     uint32
	TID           uint32
	Flags         uint32
	QueueID       uint64
	Size          uint64
	CorrelationID uint64
	Start, End    uint64
}

// KernelSymbol describes a kernel of a loaded code object.
type KernelSymbol struct {
	KernelID           uint64
	CodeObjectID       uint64
	KernelObject       uint64
	KernargSize        uint32
	GroupSegmentSize   uint32
	PrivateSegmentSize uint32
	VGPRCount          uint32
	AGPRCount          uint32
	SGPRCount          uint32
	// EntryOffset is the descriptor's kernel_code_entry_byte_offset (the
	// kernel entry's distance from the descriptor), read from the
	// descriptor's host copy at load; 0 when unknown (spools from before
	// it, descriptors the loader would not show).
	EntryOffset int32
	Name        []byte // mangled, ".kd" suffix kept
}

// CodeObject is a code object load or unload.
type CodeObject struct {
	CodeObjectID uint64
	Operation    CodeObjectOp
	AgentNode    uint32
	StorageType  uint32
	LoadBase     uint64
	LoadSize     uint64
	LoadDelta    uint64
	Timestamp    uint64
	URI          []byte
}

// AgentField indexes AgentInfo.Values; the order is agent_info.csv's.
type AgentField int

// Agent fields used by name; the rest are only printed in order.
const (
	AgentNodeID            AgentField = 0
	AgentLogicalNodeID     AgentField = 1
	AgentTypeField         AgentField = 2
	AgentCPUCoresCount     AgentField = 3
	AgentSIMDCount         AgentField = 4
	AgentMaxWavesPerSIMD   AgentField = 7
	AgentLogicalNodeTypeID AgentField = 49
	// AgentCSVFields is the number of numeric agent_info.csv columns.
	AgentCSVFields = 49
)

// AgentInfo is one agent with every agent_info.csv column.
type AgentInfo struct {
	Values      [AgentNumericFields]uint64
	Name        string
	VendorName  string
	ProductName string
	ModelName   string
}

// NodeID returns the agent's KFD node id.
func (a *AgentInfo) NodeID() uint64 { return a.Values[AgentNodeID] }

// LogicalNodeID returns the agent's logical node id.
func (a *AgentInfo) LogicalNodeID() uint64 { return a.Values[AgentLogicalNodeID] }

// Type returns the agent's type.
func (a *AgentInfo) Type() AgentType { return AgentType(a.Values[AgentTypeField]) }

// TypeIndex returns the agent's index among agents of its type.
func (a *AgentInfo) TypeIndex() uint64 { return a.Values[AgentLogicalNodeTypeID] }

// CounterDim is one dimension coordinate of a counter sample.
type CounterDim struct {
	DimensionID uint32
	Index       uint32
}

// CounterSample is one counter value for one dispatch and one instance.
type CounterSample struct {
	DispatchID uint64
	CounterID  uint64
	Value      float64
	AgentNode  uint32
	Dims       []CounterDim
	Name       []byte
}

// tail returns n bytes at off of rec, or nil with ok=false when they do not
// fit (the reader has already checked this for records it returns).
func tail(rec []byte, off, n uint32) ([]byte, bool) {
	end := uint64(off) + uint64(n)
	if end > uint64(len(rec)) {
		return nil, false
	}
	return rec[off:end:end], true
}

// tailLen returns the tail length a record's fixed part declares, so the
// reader can reject records whose tail overruns them.
func tailLen(k Kind, rec []byte) uint64 {
	switch k {
	case KindString:
		return uint64(le.Uint32(rec[12:]))
	case KindHIPAPI, KindHSAAPI, KindRCCLAPI:
		return uint64(le.Uint32(rec[20:]))
	case KindMarker:
		return uint64(le.Uint32(rec[20:]))
	case KindKernelSymbol:
		return uint64(le.Uint32(rec[56:]))
	case KindCodeObject:
		return uint64(le.Uint32(rec[28:]))
	case KindCounterSample:
		return uint64(le.Uint32(rec[36:]))*8 + uint64(le.Uint32(rec[40:]))
	case KindPCSample:
		return uint64(le.Uint32(rec[12:])) * PCSampleSize
	}
	return 0
}

func decodeString(rec []byte) String {
	v, _ := tail(rec, 24, le.Uint32(rec[12:]))
	return String{Table: le.Uint32(rec[8:]), ID: le.Uint64(rec[16:]), Value: v}
}

// tscClock is a chunk's last rpg_clock_rec: how the tick stamps of the
// version-3 API records after it convert to CLOCK_BOOTTIME ns, exactly as
// the writer's clock does (ns per tick in 32.32 fixed point).
type tscClock struct {
	tsc, ns, mult uint64
	ok            bool
}

func decodeClock(rec []byte) tscClock {
	return tscClock{tsc: le.Uint64(rec[8:]), ns: le.Uint64(rec[16:]), mult: le.Uint64(rec[24:]), ok: true}
}

// toNS converts a tick count; ticks before the anchor count backwards.
func (c *tscClock) toNS(t uint64) uint64 {
	if t >= c.tsc {
		hi, lo := bits.Mul64(t-c.tsc, c.mult)
		return c.ns + (hi<<32 | lo>>32)
	}
	hi, lo := bits.Mul64(c.tsc-t, c.mult)
	return c.ns - (hi<<32 | lo>>32)
}

// decodeAPICallForm decodes a version-1 API record, or a version-2 or -3
// one written by thread tid (version 3 converted with clk), by its format
// byte v as the reader read it (and checked the record's size for); a
// record too short for version 1 is read as compact whatever v says.
func decodeAPICallForm(rec []byte, v byte, tid uint32, clk *tscClock) APICall {
	if v == 2 || v == 3 || len(rec) < 48 {
		a, _ := tail(rec, apiCompactSize, uint32(len(rec))-apiCompactSize-uint32(rec[11]))
		start := le.Uint64(rec[24:])
		end := start + uint64(le.Uint32(rec[12:]))
		if v == 3 {
			start, end = clk.toNS(start), clk.toNS(end)
		}
		return APICall{
			Domain: APIDomain(rec[10]), Function: uint32(le.Uint16(rec[8:])), TID: tid,
			CorrelationID: le.Uint64(rec[16:]), Start: start, End: end, Args: a,
		}
	}
	a, _ := tail(rec, 48, le.Uint32(rec[20:]))
	return APICall{
		Domain: APIDomain(le.Uint32(rec[8:])), Function: le.Uint32(rec[12:]),
		TID: le.Uint32(rec[16:]), CorrelationID: le.Uint64(rec[24:]),
		Start: le.Uint64(rec[32:]), End: le.Uint64(rec[40:]), Args: a,
	}
}

func decodeMarker(rec []byte) Marker {
	m, _ := tail(rec, 56, le.Uint32(rec[20:]))
	return Marker{
		Domain: APIDomain(le.Uint32(rec[8:])), Function: MarkerFunction(le.Uint32(rec[12:])),
		TID: le.Uint32(rec[16:]), CorrelationID: le.Uint64(rec[24:]),
		Start: le.Uint64(rec[32:]), End: le.Uint64(rec[40:]), RangeID: le.Uint64(rec[48:]),
		Message: m,
	}
}

func decodeKernelDispatch(rec []byte) KernelDispatch {
	return KernelDispatch{
		AgentNode: le.Uint32(rec[8:]), TID: le.Uint32(rec[12:]),
		QueueID: le.Uint64(rec[16:]), StreamID: le.Uint64(rec[24:]),
		DispatchID: le.Uint64(rec[32:]), KernelID: le.Uint64(rec[40:]),
		CorrelationID: le.Uint64(rec[48:]), Start: le.Uint64(rec[56:]), End: le.Uint64(rec[64:]),
		Grid:               [3]uint32{le.Uint32(rec[72:]), le.Uint32(rec[76:]), le.Uint32(rec[80:])},
		Workgroup:          [3]uint32{le.Uint32(rec[84:]), le.Uint32(rec[88:]), le.Uint32(rec[92:])},
		GroupSegmentSize:   le.Uint32(rec[96:]),
		PrivateSegmentSize: le.Uint32(rec[100:]),
		VGPRCount:          le.Uint32(rec[104:]), AGPRCount: le.Uint32(rec[108:]),
		SGPRCount: le.Uint32(rec[112:]), PacketIndex: le.Uint32(rec[116:]),
	}
}

func decodeMemoryCopy(rec []byte) MemoryCopy {
	return MemoryCopy{
		Direction: CopyDirection(le.Uint32(rec[8:])), SrcAgentNode: le.Uint32(rec[12:]),
		DstAgentNode: le.Uint32(rec[16:]), TID: le.Uint32(rec[20:]),
		Bytes: le.Uint64(rec[24:]), StreamID: le.Uint64(rec[32:]),
		CorrelationID: le.Uint64(rec[40:]), Start: le.Uint64(rec[48:]), End: le.Uint64(rec[56:]),
		SrcAddress: le.Uint64(rec[64:]), DstAddress: le.Uint64(rec[72:]),
	}
}

func decodeMemoryAllocation(rec []byte) MemoryAllocation {
	return MemoryAllocation{
		Operation: AllocOperation(le.Uint32(rec[8:])), AgentNode: le.Uint32(rec[12:]),
		TID: le.Uint32(rec[16:]), Address: le.Uint64(rec[24:]), Size: le.Uint64(rec[32:]),
		CorrelationID: le.Uint64(rec[40:]), Start: le.Uint64(rec[48:]), End: le.Uint64(rec[56:]),
	}
}

func decodeScratchMemory(rec []byte) ScratchMemory {
	return ScratchMemory{
		Operation: ScratchOperation(le.Uint32(rec[8:])), AgentNode: le.Uint32(rec[12:]),
		TID: le.Uint32(rec[16:]), Flags: le.Uint32(rec[20:]),
		QueueID: le.Uint64(rec[24:]), Size: le.Uint64(rec[32:]),
		CorrelationID: le.Uint64(rec[40:]), Start: le.Uint64(rec[48:]), End: le.Uint64(rec[56:]),
	}
}

func decodeKernelSymbol(rec []byte) KernelSymbol {
	n, _ := tail(rec, 64, le.Uint32(rec[56:]))
	return KernelSymbol{
		KernelID: le.Uint64(rec[8:]), CodeObjectID: le.Uint64(rec[16:]),
		KernelObject: le.Uint64(rec[24:]), KernargSize: le.Uint32(rec[32:]),
		GroupSegmentSize: le.Uint32(rec[36:]), PrivateSegmentSize: le.Uint32(rec[40:]),
		VGPRCount: le.Uint32(rec[44:]), AGPRCount: le.Uint32(rec[48:]),
		SGPRCount: le.Uint32(rec[52:]), EntryOffset: int32(le.Uint32(rec[60:])), Name: n,
	}
}

func decodeCodeObject(rec []byte) CodeObject {
	u, _ := tail(rec, 64, le.Uint32(rec[28:]))
	return CodeObject{
		CodeObjectID: le.Uint64(rec[8:]), Operation: CodeObjectOp(le.Uint32(rec[16:])),
		AgentNode: le.Uint32(rec[20:]), StorageType: le.Uint32(rec[24:]),
		LoadBase: le.Uint64(rec[32:]), LoadSize: le.Uint64(rec[40:]),
		LoadDelta: le.Uint64(rec[48:]), Timestamp: le.Uint64(rec[56:]), URI: u,
	}
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

func decodeAgentInfo(rec []byte) AgentInfo {
	var a AgentInfo
	for i := range a.Values {
		a.Values[i] = le.Uint64(rec[8+8*i:])
	}
	names := rec[8+8*AgentNumericFields:]
	a.Name = cString(names[0:agentNameLen])
	a.VendorName = cString(names[agentNameLen : 2*agentNameLen])
	a.ProductName = cString(names[2*agentNameLen : 3*agentNameLen])
	a.ModelName = cString(names[3*agentNameLen : 4*agentNameLen])
	return a
}

func decodeCounterSample(rec []byte) CounterSample {
	nd := le.Uint32(rec[36:])
	c := CounterSample{
		DispatchID: le.Uint64(rec[8:]), CounterID: le.Uint64(rec[16:]),
		Value: math.Float64frombits(le.Uint64(rec[24:])), AgentNode: le.Uint32(rec[32:]),
	}
	if nd > 0 {
		c.Dims = make([]CounterDim, nd)
		for i := range c.Dims {
			o := 48 + 8*i
			c.Dims[i] = CounterDim{DimensionID: le.Uint32(rec[o:]), Index: le.Uint32(rec[o+4:])}
		}
	}
	c.Name, _ = tail(rec, 48+8*nd, le.Uint32(rec[40:]))
	return c
}
