package pm4

// Stream is a PM4 command stream under construction.
type Stream struct {
	DW []uint32
}

// Len is the stream length in dwords.
func (s *Stream) Len() int { return len(s.DW) }

func (s *Stream) emit(op Opcode, body ...uint32) {
	s.DW = append(s.DW, Header(op, len(body)))
	s.DW = append(s.DW, body...)
}

// SetUconfig writes a UCONFIG register.
func (s *Stream) SetUconfig(r Reg, v uint32) {
	s.DW = append(s.DW, hdrSetUconfig1, uint32(r-UconfigBase), v)
}

// Headers of the hot one-register and COPY_DATA packets, precomputed.
var (
	hdrSetUconfig1 = Header(OpSetUconfigReg, 2)
	hdrCopyData    = Header(OpCopyData, 5)
)

// SetSh writes a persistent SH register.
func (s *Stream) SetSh(r Reg, v uint32) { s.emit(OpSetShReg, uint32(r-ShBase), v) }

// EventWrite emits an EVENT_WRITE.
func (s *Stream) EventWrite(e Event) { s.emit(OpEventWrite, uint32(e)) }

// CopyData emits a COPY_DATA with a ready control dword.
func (s *Stream) CopyData(control, srcLo, srcHi, dstLo, dstHi uint32) {
	s.DW = append(s.DW, hdrCopyData, control, srcLo, srcHi, dstLo, dstHi)
}

// WaitRegMem polls a register (space 0) or memory (space 1).
func (s *Stream) WaitRegMem(function, space, addrLo, addrHi, ref, mask, poll uint32) {
	s.emit(OpWaitRegMem, function|space<<4, addrLo, addrHi, ref, mask, poll)
}

// AcquireMem emits the cache-coherence acquire over [addr, addr+size). The
// gfx9 form has 7 dwords; the gfx10+ form carries an extra GCR control dword.
func (s *Stream) AcquireMem(addr, size uint64, gfx10Form bool) {
	size256 := uint32(((addr%256 + size) >> 8) + ((size + 0xFF) >> 8) - (size >> 8))
	lo, hi := uint32(addr>>8), uint32(addr>>40)&0xFF
	if gfx10Form {
		s.emit(OpAcquireMem, 0, size256, 0, lo, hi, 0x10, 0x00018000)
		return
	}
	s.emit(OpAcquireMem, 0x28C40000, size256, 0, lo, hi, 0x10)
}

// PredExec opens a section executed only on the XCCs in mask. Close it with
// EndPredExec, which patches the dword count.
func (s *Stream) PredExec(xccMask uint32) int {
	s.emit(OpPredExec, xccMask<<24)
	return len(s.DW) - 1
}

// EndPredExec patches the section count of the PRED_EXEC whose body dword is
// at index at.
func (s *Stream) EndPredExec(at int) {
	s.DW[at] |= uint32(len(s.DW) - at - 1)
}

// IndirectBuffer is the type-3 INDIRECT_BUFFER header carried by the vendor
// AQL packet (count 2: base lo, base hi, control).
var IndirectBuffer = Header(OpIndirectBuffer, 3)
