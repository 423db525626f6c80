package pm4

import (
	"fmt"
	"strings"
)

// Packet is one decoded PM4 packet.
type Packet struct {
	DW     int // index of the header in the stream
	Opcode Opcode
	Words  []uint32 // header and body
	Text   string
	Raw    bool // not a complete type-3 packet
}

// RegNamer names a register address, or returns "" when it is unknown.
type RegNamer func(Reg) string

func regText(r Reg, names RegNamer) string {
	if names != nil {
		if n := names(r); n != "" {
			return fmt.Sprintf("%s(0x%x)", n, uint32(r))
		}
	}
	return fmt.Sprintf("0x%x", uint32(r))
}

var selNames = map[CopySel]string{SelRegister: "REG", SelMemory: "MEM", SelTCL2: "TC_L2",
	SelPerfCounters: "PERF", SelGPUClock: "GPU_CLOCK"}

func copyEnd(sel CopySel, isSrc bool, lo, hi uint32, names RegNamer) string {
	switch {
	case sel == SelRegister || sel == SelPerfCounters:
		return selNames[sel] + " " + regText(Reg(lo), names)
	case sel == SelImmOrMem && isSrc:
		return fmt.Sprintf("IMM 0x%08x", lo)
	case sel == SelImmOrMem:
		return fmt.Sprintf("MEM 0x%x", uint64(hi)<<32|uint64(lo))
	case sel == SelGPUClock:
		return "GPU_CLOCK"
	default:
		n := selNames[sel]
		if n == "" {
			n = fmt.Sprintf("SEL%d", sel)
		}
		return fmt.Sprintf("%s 0x%x", n, uint64(hi)<<32|uint64(lo))
	}
}

func describe(op Opcode, b []uint32, names RegNamer) string {
	switch {
	case (op == OpSetUconfigReg || op == OpSetShReg) && len(b) >= 2:
		base := UconfigBase
		if op == OpSetShReg {
			base = ShBase
		}
		parts := make([]string, 0, len(b)-1)
		for i, v := range b[1:] {
			parts = append(parts, fmt.Sprintf("%s = 0x%08x", regText(base+Reg(b[0])+Reg(i), names), v))
		}
		return strings.Join(parts, ", ")
	case op == OpEventWrite && len(b) >= 1:
		t := fmt.Sprintf("event_type=0x%x", b[0]&0x3F)
		if n := eventNames[b[0]&0x3F]; n != "" {
			t += "(" + n + ")"
		}
		return fmt.Sprintf("%s event_index=%d", t, b[0]>>8&0xF)
	case op == OpCopyData && len(b) == 5:
		src, dst := CopySel(b[0]&0xF), CopySel(b[0]>>8&0xF)
		bits := "32b"
		if b[0]&CopyCount64 != 0 {
			bits = "64b"
		}
		return fmt.Sprintf("%s -> %s (%s, wr_confirm=%d)", copyEnd(src, true, b[1], b[2], names),
			copyEnd(dst, false, b[3], b[4], names), bits, b[0]>>20&1)
	case op == OpPredExec && len(b) == 1:
		return fmt.Sprintf("exec_count=%d xcc_select_mask=0x%02x", b[0]&0x3FFF, b[0]>>24)
	case op == OpWaitRegMem && len(b) == 6:
		space := "REG"
		if b[0]>>4&3 == 1 {
			space = "MEM"
		}
		return fmt.Sprintf("%s %s func=%d ref=0x%08x mask=0x%08x poll=%d", space, regText(Reg(b[1]), names),
			b[0]&7, b[3], b[4], b[5])
	case op == OpIndirectBuffer && len(b) == 3:
		return fmt.Sprintf("ib=0x%x size_dw=%d control=0x%08x", uint64(b[1])<<32|uint64(b[0]), b[2]&0xFFFFF, b[2])
	}
	parts := make([]string, len(b))
	for i, v := range b {
		parts[i] = fmt.Sprintf("0x%08x", v)
	}
	return strings.Join(parts, " ")
}

var eventNames = map[uint32]string{0x07: "CS_PARTIAL_FLUSH", 0x37: "THREAD_TRACE_FINISH"}

// Disassemble decodes a dword stream. A word that is not a type-3 header, or a
// packet that runs past the end, becomes a one-word "RAW" packet so that the
// decode never fails and still shows where a stream is broken.
func Disassemble(dw []uint32, names RegNamer) []Packet {
	var out []Packet
	for i := 0; i < len(dw); {
		h := dw[i]
		n := int(h>>16&0x3FFF) + 2
		if h>>30 != 3 || i+n > len(dw) {
			out = append(out, Packet{DW: i, Words: dw[i : i+1], Text: fmt.Sprintf("RAW 0x%08x", h), Raw: true})
			i++
			continue
		}
		op := Opcode(h >> 8 & 0xFF)
		out = append(out, Packet{DW: i, Opcode: op, Words: dw[i : i+n], Text: describe(op, dw[i+1:i+n], names)})
		i += n
	}
	return out
}

// Format renders a disassembly, one packet a line, with dword indices.
func Format(dw []uint32, names RegNamer) string {
	var sb strings.Builder
	for _, p := range Disassemble(dw, names) {
		name := p.Opcode.String()
		if p.Raw {
			name = "RAW"
		}
		fmt.Fprintf(&sb, "[%4d] %-16s %s\n", p.DW, name, p.Text)
	}
	return sb.String()
}
