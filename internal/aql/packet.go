package aql

import (
	"encoding/binary"
	"fmt"

	"github.com/rocprof-go/rocprof-go/internal/aql/pm4"
)

// AQLPacket is the 64-byte vendor-specific AQL packet (amd_aql_pm4_ib_packet_t)
// that makes the CP run one indirect buffer. Dword 0's header half is left 0:
// the submitter sets the packet type, barrier and fences.
type AQLPacket [16]uint32

// Packet formats and constants of the vendor packet.
const (
	aqlPM4IBFormat   uint32 = 1 << 16 // pm4_ib_format = 1 in the high half of dword 0
	aqlDwCountRemain uint32 = 0xA
	ibSizeMask       uint32 = 0xFFFFF
)

// NewAQLPacket wraps the IB at ibAddr of sizeDW dwords.
func (d *Device) NewAQLPacket(ibAddr uint64, sizeDW int) AQLPacket {
	var p AQLPacket
	p[0] = aqlPM4IBFormat
	p[1] = pm4.IndirectBuffer
	p[2] = uint32(ibAddr) &^ 3
	p[3] = uint32(ibAddr >> 32)
	p[4] = d.spec.ibControl | uint32(sizeDW)&ibSizeMask
	p[5] = aqlDwCountRemain
	return p
}

// Bytes is the packet's little-endian encoding.
func (p AQLPacket) Bytes() []byte {
	b := make([]byte, 64)
	for i, v := range p {
		binary.LittleEndian.PutUint32(b[i*4:], v)
	}
	return b
}

// IBAlign is the alignment of each IB inside a command buffer.
const IBAlign = 0x100

func alignIB(n int) int { return (n + IBAlign - 1) &^ (IBAlign - 1) }

// MemoryHint is the memory_hint field of aqlprofile_buffer_desc_flags_t.
type MemoryHint uint32

// Memory hints.
const (
	HintNone MemoryHint = iota
	HintHost
	HintDeviceUncached
	HintDeviceCoherent
	HintDeviceNoncoherent
)

var hintNames = []string{"NONE", "HOST", "DEVICE_UNCACHED", "DEVICE_COHERENT", "DEVICE_NONCOHERENT"}

func (h MemoryHint) String() string {
	if int(h) < len(hintNames) {
		return hintNames[h]
	}
	return "UNKNOWN"
}

// BufferFlags is aqlprofile_buffer_desc_flags_t.raw.
type BufferFlags uint32

// NewBufferFlags packs the access bits and the hint.
func NewBufferFlags(device, host bool, hint MemoryHint) BufferFlags {
	var f BufferFlags
	if device {
		f |= 1
	}
	if host {
		f |= 2
	}
	return f | BufferFlags(hint)<<2
}

// DeviceAccess, HostAccess and Hint decode the flags.
func (f BufferFlags) DeviceAccess() bool { return f&1 != 0 }
func (f BufferFlags) HostAccess() bool   { return f&2 != 0 }
func (f BufferFlags) Hint() MemoryHint   { return MemoryHint(f >> 2 & 0x3F) }

// Flags of the buffers AQLprofile allocates.
var (
	FlagsPMCOutput  = NewBufferFlags(true, true, HintDeviceUncached)
	FlagsCmdBuffer  = NewBufferFlags(true, true, HintDeviceNoncoherent)
	FlagsATTControl = NewBufferFlags(true, true, HintHost)
	FlagsATTTrace   = NewBufferFlags(true, false, HintDeviceNoncoherent)
	FlagsMarker     = NewBufferFlags(true, true, HintNone)
)

// Allocation is one buffer a packet set needs.
type Allocation struct {
	Role  string
	Addr  uint64
	Size  uint64 // requested bytes, before any rounding
	Flags BufferFlags
}

// Allocator places buffers; it is called in AQLprofile's allocation order.
type Allocator func(size uint64, flags BufferFlags) (uint64, error)

// Arena is a bump allocator that rounds each allocation up to 4 KiB (at
// least 4 KiB), as the golden harness did; it makes addresses reproducible.
type Arena struct{ Next uint64 }

// ArenaPage is the arena's rounding.
const ArenaPage = 0x1000

// Alloc implements Allocator.
func (a *Arena) Alloc(size uint64, _ BufferFlags) (uint64, error) {
	addr := a.Next
	a.Next += max(ArenaPage, (size+ArenaPage-1)&^(ArenaPage-1))
	return addr, nil
}

// IB is one built indirect buffer.
type IB struct {
	Name   string // start, stop, read, codeobj_marker
	Addr   uint64
	Offset int // byte offset in its command buffer
	DW     []uint32
	Packet AQLPacket
}

func dwordsToBytes(dst []byte, dw []uint32) {
	for i, v := range dw {
		binary.LittleEndian.PutUint32(dst[i*4:], v)
	}
}

// Disassembly renders an IB readably (for errors, trace logs and tests).
func (d *Device) Disassembly(ib *IB) string {
	return fmt.Sprintf("%s IB @ 0x%x (%d dwords)\n%s", ib.Name, ib.Addr, len(ib.DW), pm4.Format(ib.DW, d.RegName))
}
