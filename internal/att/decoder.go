package att

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "decoder.h"
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// Decoder is a loaded librocprof-trace-decoder.so.
type Decoder struct {
	Path string
	lib  C.rpg_td_lib
	mu   sync.Mutex
}

// Open loads the decoder library at path.
func Open(path string) (*Decoder, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var errbuf [512]C.char
	d := &Decoder{Path: path}
	if C.rpg_td_open(cpath, &d.lib, &errbuf[0], C.int(len(errbuf))) != 0 {
		return nil, fmt.Errorf("cannot load the thread-trace decoder: %s", C.GoString(&errbuf[0]))
	}
	return d, nil
}

// Close unloads the library.
func (d *Decoder) Close() { C.rpg_td_close(&d.lib) }

// parseState is what the callbacks fill during one parse.
type parseState struct {
	d   *Decoder
	isa ISA
	out *SETrace
	err error
}

// Decode parses one shader engine's raw data (as written to the .att file,
// header included) and returns the decoded records.
func (d *Decoder) Decode(se int, data []byte, isa ISA) (*SETrace, error) {
	if len(data) == 0 {
		return &SETrace{SE: se}, nil
	}
	d.mu.Lock() // the decoder is not documented as reentrant
	defer d.mu.Unlock()
	st := &parseState{d: d, isa: isa, out: &SETrace{SE: se}}
	h := cgo.NewHandle(st)
	defer h.Delete()
	buf := C.CBytes(data)
	defer C.free(buf)
	status := int(C.rpg_td_parse(&d.lib, (*C.uint8_t)(buf), C.uint64_t(len(data)), C.uintptr_t(h)))
	if status != statusSuccess {
		msg := C.rpg_td_status_string(&d.lib, C.int(status))
		text := fmt.Sprintf("status %d", status)
		if msg != nil {
			text = C.GoString(msg)
		}
		return st.out, errors.Join(fmt.Errorf("thread-trace decoder: SE %d: %s", se, text), st.err)
	}
	return st.out, st.err
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

func readPC(b []byte) PC { return PC{Addr: le64(b), CodeObj: le64(b[8:])} }

// Record sizes of the decoder's structures (x86-64 layout).
const (
	szOccupancy  = 32
	szPerfEvent  = 24
	szWave       = 64
	szWaveState  = 8
	szInst       = 32
	szShaderData = 24
	szRealtime   = 24
)

func bytesAt(p unsafe.Pointer, n uint64) []byte {
	if p == nil || n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(p), n)
}

//export rpgTdTrace
func rpgTdTrace(ctx C.uintptr_t, kind C.int, events unsafe.Pointer, n C.uint64_t) C.int {
	st := cgo.Handle(ctx).Value().(*parseState)
	out := st.out
	cnt := uint64(n)
	switch int(kind) {
	case recGFXIP:
		out.GFXIP = int(uintptr(events))
	case recOccupancy:
		b := bytesAt(events, cnt*szOccupancy)
		for i := uint64(0); i < cnt; i++ {
			r := b[i*szOccupancy:]
			out.Occupancy = append(out.Occupancy, Occupancy{PC: readPC(r), Time: le64(r[16:]),
				CU: r[25], SIMD: r[26], WaveID: r[27], Start: le32(r[28:])&1 != 0})
		}
	case recPerfEvent:
		b := bytesAt(events, cnt*szPerfEvent)
		for i := uint64(0); i < cnt; i++ {
			r := b[i*szPerfEvent:]
			out.Perf = append(out.Perf, PerfEvent{Time: int64(le64(r)),
				Events: [4]uint16{le16(r[8:]), le16(r[10:]), le16(r[12:]), le16(r[14:])}, CU: r[16], Bank: r[17]})
		}
	case recWave:
		b := bytesAt(events, cnt*szWave)
		for i := uint64(0); i < cnt; i++ {
			r := b[i*szWave:]
			w := Wave{CU: r[0], SIMD: r[1], WaveID: r[2], Contexts: r[3],
				Begin: int64(le64(r[16:])), End: int64(le64(r[24:]))}
			nt, ni := le64(r[32:]), le64(r[40:])
			tl := bytesAt(*(*unsafe.Pointer)(unsafe.Pointer(&r[48])), nt*szWaveState)
			for j := uint64(0); j < nt; j++ {
				s := tl[j*szWaveState:]
				w.Timeline = append(w.Timeline, WaveState{Type: int32(le32(s)), Duration: int32(le32(s[4:]))})
			}
			in := bytesAt(*(*unsafe.Pointer)(unsafe.Pointer(&r[56])), ni*szInst)
			for j := uint64(0); j < ni; j++ {
				s := in[j*szInst:]
				head := le32(s)
				w.Insts = append(w.Insts, Inst{Category: uint8(head), Stall: head >> 8,
					Duration: int32(le32(s[4:])), Time: int64(le64(s[8:])), PC: readPC(s[16:])})
			}
			out.Waves = append(out.Waves, w)
		}
	case recInfo:
		b := bytesAt(events, cnt*4)
		for i := uint64(0); i < cnt; i++ {
			code := int(le32(b[i*4:]))
			text := fmt.Sprintf("decoder info %d", code)
			if s := C.rpg_td_info_string(&st.d.lib, C.int(code)); s != nil {
				text = C.GoString(s)
			}
			out.Infos = append(out.Infos, text)
		}
	case recShaderData:
		b := bytesAt(events, cnt*szShaderData)
		for i := uint64(0); i < cnt; i++ {
			r := b[i*szShaderData:]
			out.ShaderData = append(out.ShaderData, ShaderData{Time: int64(le64(r)), Value: le64(r[8:]),
				CU: r[16], SIMD: r[17], WaveID: r[18], Flags: r[19]})
		}
	case recRealtime:
		b := bytesAt(events, cnt*szRealtime)
		for i := uint64(0); i < cnt; i++ {
			r := b[i*szRealtime:]
			out.Realtime = append(out.Realtime, Realtime{ShaderClock: int64(le64(r)), Realtime: le64(r[8:])})
		}
	case recRTFrequency:
		if events != nil {
			out.RTFrequency = *(*uint64)(events)
		}
	}
	return statusSuccess
}

//export rpgTdISA
func rpgTdISA(ctx C.uintptr_t, instr *C.char, memSize, size *C.uint64_t, addr, marker C.uint64_t) C.int {
	st := cgo.Handle(ctx).Value().(*parseState)
	if st.isa == nil {
		return statusInvalidArgument
	}
	l, err := st.isa.Instruction(PC{Addr: uint64(addr), CodeObj: uint64(marker)})
	if err != nil {
		return statusInvalidArgument
	}
	need := uint64(len(l.Text))
	if uint64(*size) < need+1 || instr == nil {
		*size = C.uint64_t(need + 1)
		return statusOutOfResources
	}
	dst := unsafe.Slice((*byte)(unsafe.Pointer(instr)), need+1)
	copy(dst, l.Text)
	dst[need] = 0
	*size = C.uint64_t(need)
	*memSize = C.uint64_t(l.Size)
	return statusSuccess
}
