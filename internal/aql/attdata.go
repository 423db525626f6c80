package aql

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// attStatusMasks are the TraceControl status bits and WPTR mask per family.
type attStatusMasks struct {
	utcError, full, wptr uint32
}

var attMasks = map[Family]attStatusMasks{
	GFX9:  {utcError: 0x10000000, full: 0x80000000, wptr: 0x3FFFFFFF},
	GFX10: {utcError: 0x01000000, wptr: 0x1FFFFFFF},
	GFX11: {utcError: 0x01000000, wptr: 0x1FFFFFFF},
	GFX12: {utcError: 0x01000000, wptr: 0x1FFFFFFF},
}

// attWptrBlock is the bytes per WPTR increment.
const attWptrBlock = 32

// Trace-data errors; several can apply at once (errors.Join).
var (
	ErrTraceMemory = errors.New("thread trace: the GPU reported a memory error")
	ErrTraceFull   = errors.New("thread trace: a shader engine's buffer filled up; data was dropped (raise --att-buffer-size)")
)

// SETrace locates one traced shader engine's data in the trace buffer.
type SETrace struct {
	SE     int
	Addr   uint64 // where the data starts (the SE's buffer)
	Size   uint64 // bytes of trace data
	Status uint32
	// Header is the 8-byte header AQLprofile puts before gfx9 data (legacy
	// version 0x11, version 4, SIMD mask, CU, SE); nil from gfx10 on.
	Header []byte
}

// Traces reads the control buffer the stop packet filled (32 bytes per SE:
// status, dropped count, write pointer) and returns, per enabled SE, where
// its data is and how long it is, as aqlprofile_att_iterate_data does. A size
// past the SE's capacity is clamped and reported as ErrTraceFull.
func (p *ATTPackets) Traces(control []byte) ([]SETrace, error) {
	d := p.Device
	if len(control) < traceControlSz*d.SE {
		return nil, fmt.Errorf("thread trace control buffer has %d bytes, %d shader engines need %d", len(control), d.SE, traceControlSz*d.SE)
	}
	m := attMasks[d.Family]
	var errs []error
	var out []SETrace
	for se := 0; se < d.SE; se++ {
		c := control[traceControlSz*se:]
		status := binary.LittleEndian.Uint32(c[0:])
		switch {
		case status&m.utcError != 0:
			errs = append(errs, fmt.Errorf("SE %d: %w", se, ErrTraceMemory))
		case m.full != 0 && status&m.full != 0:
			errs = append(errs, fmt.Errorf("SE %d: %w", se, ErrTraceFull))
		}
		if !p.enabled(se) {
			continue
		}
		size := uint64(binary.LittleEndian.Uint32(c[8:])&m.wptr) * attWptrBlock
		if d.Family == GFX11 {
			// gfx11's WPTR counts from address 0: make it relative to the SE buffer.
			size = (size - p.SEBase[se]) & (1<<29 - 1)
		}
		if size >= p.SEStep {
			errs = append(errs, fmt.Errorf("SE %d: %d bytes of data in a %d-byte buffer: %w", se, size, p.SEStep, ErrTraceFull))
			size = p.SEStep
		}
		t := SETrace{SE: se, Addr: p.SEBase[se], Size: size, Status: status}
		if d.Family == GFX9 {
			h := uint32(0x11) | 4<<13 | (p.Config.SIMDSelect&0xF)<<16 | (p.Config.TargetCU&0x1F)<<20 | uint32(se&0x3F)<<26
			t.Header = binary.LittleEndian.AppendUint64(nil, uint64(h))
		}
		out = append(out, t)
	}
	return out, errors.Join(errs...)
}
