package pm4

import "fmt"

// Opcode is a PM4 type-3 IT_OPCODE.
type Opcode uint8

// The opcodes the profiler emits (values from the gfx9+ PM4 specification).
const (
	OpNop            Opcode = 0x10
	OpPredExec       Opcode = 0x23
	OpWaitRegMem     Opcode = 0x3C
	OpIndirectBuffer Opcode = 0x3F
	OpCopyData       Opcode = 0x40
	OpEventWrite     Opcode = 0x46
	OpAcquireMem     Opcode = 0x58
	OpSetShReg       Opcode = 0x76
	OpSetUconfigReg  Opcode = 0x79
)

var opcodeNames = map[Opcode]string{
	OpNop: "NOP", OpPredExec: "PRED_EXEC", OpWaitRegMem: "WAIT_REG_MEM",
	OpIndirectBuffer: "INDIRECT_BUFFER", OpCopyData: "COPY_DATA", OpEventWrite: "EVENT_WRITE",
	OpAcquireMem: "ACQUIRE_MEM", OpSetShReg: "SET_SH_REG", OpSetUconfigReg: "SET_UCONFIG_REG",
}

func (o Opcode) String() string {
	if n, ok := opcodeNames[o]; ok {
		return n
	}
	return fmt.Sprintf("OP_0x%02X", uint8(o))
}

// typ3 marks a type-3 header in bits 31:30.
const typ3 uint32 = 0xC0000000

// Header encodes a type-3 header for a packet whose body has bodyDwords dwords.
func Header(op Opcode, bodyDwords int) uint32 {
	return typ3 | uint32(bodyDwords-1)<<16 | uint32(op)<<8
}

// Reg is a register's dword address (byte address / 4).
type Reg uint32

// Register spaces. SET_*_REG packets carry the offset from the space's base.
const (
	ConfigBase  Reg = 0x2000 // privileged CONFIG space, written through COPY_DATA
	ConfigEnd   Reg = 0xA000
	ShBase      Reg = 0x2C00 // persistent SH space (SET_SH_REG)
	UconfigBase Reg = 0xC000 // UCONFIG space (SET_UCONFIG_REG)
	UconfigEnd  Reg = 0x10000
)

// IsUconfig reports whether r is written with SET_UCONFIG_REG.
func (r Reg) IsUconfig() bool { return r >= UconfigBase && r < UconfigEnd }

// IsPrivConfig reports whether r is in the privileged CONFIG space.
func (r Reg) IsPrivConfig() bool { return r >= ConfigBase && r < ConfigEnd }

// Event is an EVENT_WRITE event dword (type | index<<8).
type Event uint32

// Events used by the profiler.
const (
	EventCSPartialFlush    Event = 0x07 | 4<<8
	EventThreadTraceFinish Event = 0x37
)

// CopySel is a COPY_DATA source or destination selector.
type CopySel uint32

// COPY_DATA selectors.
const (
	SelRegister     CopySel = 0
	SelMemory       CopySel = 1 // source memory
	SelTCL2         CopySel = 2
	SelPerfCounters CopySel = 4
	SelImmOrMem     CopySel = 5 // source: immediate; destination: memory (gfx9)
	SelGPUClock     CopySel = 9
)

// COPY_DATA control bits.
const (
	CopyCount64   uint32 = 1 << 16
	CopyWrConfirm uint32 = 1 << 20
)

// CopyControl packs a COPY_DATA control dword.
func CopyControl(src, dst CopySel, extra uint32) uint32 {
	return uint32(src) | uint32(dst)<<8 | extra
}
