package aql

import (
	"fmt"
	"math/bits"

	"github.com/rocprof-go/rocprof-go/internal/aql/pm4"
)

// ATTParam is hsa_ven_amd_aqlprofile_parameter_name_t.
type ATTParam uint32

// Thread-trace parameters.
const (
	ATTComputeUnitTarget ATTParam = 0
	ATTVMIDMask          ATTParam = 1
	ATTMask              ATTParam = 2
	ATTTokenMask         ATTParam = 3
	ATTTokenMask2        ATTParam = 4
	ATTSEMask            ATTParam = 5
	ATTSampleRate        ATTParam = 6
	ATTKConcurrent       ATTParam = 7
	ATTSIMDSelection     ATTParam = 8
	ATTOccupancyMode     ATTParam = 9
	ATTBufferSize        ATTParam = 10
	ATTBufferSizeHigh    ATTParam = 11
	ATTPerfcounterMask   ATTParam = 240
	ATTPerfcounterCtrl   ATTParam = 241
	ATTPerfcounterName   ATTParam = 242
)

// ATTConfig is a resolved thread-trace configuration. The zero value is not
// useful: start from DefaultATTConfig (AQLprofile's defaults) or
// RocprofATTConfig (rocprofv3's CLI defaults) and apply parameters.
type ATTConfig struct {
	TargetCU     uint32
	SEMask       uint64
	SIMDSelect   uint32
	VMIDMask     uint32
	BufferSize   uint64
	RTTimestamps bool
	// PerfCounters are SQ events streamed into the trace as perf-counter
	// tokens every PerfPeriod samples (rocprofv3's --att-perfcounters and
	// --att-perfcounter-ctrl, 1..32). Both must be set for counters to be
	// programmed, as rocprofiler-sdk passes them; AQLprofile programs them
	// on gfx9 only and ignores them from gfx10 on.
	PerfCounters []ATTPerfCounter
	PerfPeriod   uint32
	PerfMask     uint32 // SQ_THREAD_TRACE_PERF_MASK and SQ_PERFCOUNTER_MASK (0 = 0xFFFFFFFF)
}

// ATTPerfCounter is one SQ event streamed into the thread trace.
type ATTPerfCounter struct {
	Event    uint32
	SIMDMask uint32 // 4 bits; 0 means 0xF
}

// MaxATTPerfCounters is how many SQ counters a thread trace can stream.
const MaxATTPerfCounters = 8

// sqttPerfToken is the TOKEN_MASK bit of perf-counter tokens (gfx9).
const sqttPerfToken uint32 = 1 << 14

// PerfCountersOn says whether the start packet programs streamed counters.
func (c *ATTConfig) PerfCountersOn(f Family) bool {
	return f == GFX9 && len(c.PerfCounters) > 0 && c.PerfPeriod > 0
}

// perfCtrl is SQ_PERFCOUNTER_CTRL for the sampling period, as AQLprofile
// composes it from PERFCOUNTER_CTRL (= period - 1).
func (c *ATTConfig) perfCtrl() uint32 { return ((c.PerfPeriod-1)&0x1F)<<8 | 0xFFFF007F }

func (c *ATTConfig) perfMask() uint32 {
	if c.PerfMask == 0 {
		return 0xFFFFFFFF
	}
	return c.PerfMask
}

// DefaultATTConfig is AQLprofile's default configuration.
func DefaultATTConfig() ATTConfig {
	return ATTConfig{SEMask: 0x11, SIMDSelect: 0xF, BufferSize: 3 << 26, RTTimestamps: true}
}

// RocprofATTConfig is the configuration rocprofv3's --att gives without other
// --att-* options: target CU 1, SE mask 1, SIMD mask 0xF, 256 MiB.
func RocprofATTConfig() ATTConfig {
	c := DefaultATTConfig()
	c.TargetCU, c.SEMask, c.BufferSize = 1, 0x1, 0x10000000
	return c
}

// Apply sets one AQLprofile parameter, validating it as AQLprofile does.
func (c *ATTConfig) Apply(p ATTParam, v uint64) error {
	switch p {
	case ATTComputeUnitTarget:
		if v > 15 {
			return fmt.Errorf("ATT target CU %d out of range 0..15", v)
		}
		c.TargetCU = uint32(v)
	case ATTVMIDMask:
		c.VMIDMask = uint32(v)
	case ATTSEMask:
		c.SEMask = v
	case ATTSIMDSelection:
		c.SIMDSelect = uint32(v) & 0xF
	case ATTBufferSize:
		c.BufferSize = c.BufferSize&^0xFFFFFFFF | v&0xFFFFFFFF
	case ATTBufferSizeHigh:
		c.BufferSize = c.BufferSize&0xFFFFFFFF | v<<32
	case ATTPerfcounterMask:
		c.PerfMask = uint32(v)
	case ATTPerfcounterCtrl:
		if v > 31 {
			return fmt.Errorf("ATT perf-counter control %d out of range 0..31 (period - 1)", v)
		}
		c.PerfPeriod = uint32(v) + 1
	case ATTPerfcounterName:
		// value: event | SIMD mask << 24, as AQLprofile places them.
		if len(c.PerfCounters) >= MaxATTPerfCounters {
			return fmt.Errorf("at most %d counters can be streamed into a thread trace", MaxATTPerfCounters)
		}
		c.PerfCounters = append(c.PerfCounters, ATTPerfCounter{Event: uint32(v) & 0xFFFFFF, SIMDMask: uint32(v>>24) & 0xF})
	default:
		return fmt.Errorf("ATT parameter %d is not supported by rocprof-go's builder", p)
	}
	return nil
}

// attRegs are one family's thread-trace registers and constant values.
type attRegs struct {
	status, wptr, cntr, ctrl, mask, tokenMask pm4.Reg
	// gfx9
	base, base2, size, mode, hiwater, tokenMask2, perfMask pm4.Reg
	// gfx10+
	buf0Base, buf0Size pm4.Reg
	// gfx12: separate high base register, SQG event enable, finish event
	buf0BaseHi, spiSqgEventCtl pm4.Reg
	finishEvent                bool

	tokenOn, tokenOff uint32 // gfx9: tokenOn only
	ctrlOn, ctrlOff   uint32
	modeOn, modeOff   uint32
	maskConst         uint32
	waitPoll          uint32
	maxStep           uint64
	setUconfig        bool // config writes by SET_UCONFIG_REG (else COPY_DATA)
	acquireStop       bool
}

// attSpecs has every family's thread-trace registers and values. gfx9 and
// gfx11 are verified against AQLprofile goldens; gfx10's and gfx12's values
// are composed from AQLprofile's field choices and the gc_10_3 / gc_12_0
// register layouts (no golden covers them).
var attSpecs = map[Family]*attRegs{
	GFX9: {status: 0xC33A, wptr: 0xC339, cntr: 0xC33C, ctrl: 0xC335, mask: 0xC332, tokenMask: 0xC333,
		base: 0xC330, base2: 0xC337, size: 0xC331, mode: 0xC336, hiwater: 0xC33B, tokenMask2: 0xC338, perfMask: 0xC334,
		tokenOn: 0x000FBC6F, ctrlOn: 0x80000000, modeOn: 0x02240000, modeOff: 0x02040000,
		maskConst: 0xC080, waitPoll: 4, maxStep: 16 << 30, setUconfig: true, acquireStop: true},
	GFX10: {status: 0x2348, wptr: 0x2344, cntr: 0x2349, ctrl: 0x2347, mask: 0x2345, tokenMask: 0x2346,
		buf0Base: 0x2340, buf0Size: 0x2341,
		tokenOn: 0x00080683, tokenOff: 0x030007FF, ctrlOn: 0xA0423F41, ctrlOff: 0xA0423F40,
		maskConst: 0x00010000, waitPoll: 4, maxStep: 16 << 30},
	GFX11: {status: 0xD9F4, wptr: 0xD9EF, cntr: 0xD9FA, ctrl: 0xD9EC, mask: 0xD9ED, tokenMask: 0xD9EE,
		buf0Base: 0xD9E8, buf0Size: 0xD9E9,
		tokenOn: 0x0C080683, tokenOff: 0x0F0007FF, ctrlOn: 0xA0423941, ctrlOff: 0xA0423940,
		maskConst: 0x00030000, waitPoll: 16, maxStep: 512 << 20, setUconfig: true, acquireStop: true},
	GFX12: {status: 0xD9F4, wptr: 0xD9EF, cntr: 0xD9FA, ctrl: 0xD9EC, mask: 0xD9ED, tokenMask: 0xD9EE,
		buf0Base: 0xD9E7, buf0BaseHi: 0xD9E8, buf0Size: 0xD9E6, spiSqgEventCtl: 0xC448, finishEvent: true,
		tokenOn: 0x8C1F4003, tokenOff: 0x1F0007FF, ctrlOn: 0xA0405941, ctrlOff: 0xA0405940,
		maskConst: 0x00030000, waitPoll: 4, maxStep: 16 << 30, acquireStop: true},
}

var attRegNames = map[Family]map[pm4.Reg]string{
	GFX9: {0xC33A: "SQ_THREAD_TRACE_STATUS", 0xC339: "SQ_THREAD_TRACE_WPTR", 0xC33C: "SQ_THREAD_TRACE_CNTR",
		0xC335: "SQ_THREAD_TRACE_CTRL", 0xC332: "SQ_THREAD_TRACE_MASK", 0xC333: "SQ_THREAD_TRACE_TOKEN_MASK",
		0xC330: "SQ_THREAD_TRACE_BASE", 0xC337: "SQ_THREAD_TRACE_BASE2", 0xC331: "SQ_THREAD_TRACE_SIZE",
		0xC336: "SQ_THREAD_TRACE_MODE", 0xC33B: "SQ_THREAD_TRACE_HIWATER", 0xC338: "SQ_THREAD_TRACE_TOKEN_MASK2",
		0xC334: "SQ_THREAD_TRACE_PERF_MASK"},
	GFX10: {0x2348: "SQ_THREAD_TRACE_STATUS", 0x2344: "SQ_THREAD_TRACE_WPTR", 0x2349: "SQ_THREAD_TRACE_DROPPED_CNTR",
		0x2347: "SQ_THREAD_TRACE_CTRL", 0x2345: "SQ_THREAD_TRACE_MASK", 0x2346: "SQ_THREAD_TRACE_TOKEN_MASK",
		0x2340: "SQ_THREAD_TRACE_BUF0_BASE", 0x2341: "SQ_THREAD_TRACE_BUF0_SIZE"},
	GFX11: {0xD9F4: "SQ_THREAD_TRACE_STATUS", 0xD9EF: "SQ_THREAD_TRACE_WPTR", 0xD9FA: "SQ_THREAD_TRACE_DROPPED_CNTR",
		0xD9EC: "SQ_THREAD_TRACE_CTRL", 0xD9ED: "SQ_THREAD_TRACE_MASK", 0xD9EE: "SQ_THREAD_TRACE_TOKEN_MASK",
		0xD9E8: "SQ_THREAD_TRACE_BUF0_BASE", 0xD9E9: "SQ_THREAD_TRACE_BUF0_SIZE"},
	GFX12: {0xD9F4: "SQ_THREAD_TRACE_STATUS", 0xD9EF: "SQ_THREAD_TRACE_WPTR", 0xD9FA: "SQ_THREAD_TRACE_DROPPED_CNTR",
		0xD9EC: "SQ_THREAD_TRACE_CTRL", 0xD9ED: "SQ_THREAD_TRACE_MASK", 0xD9EE: "SQ_THREAD_TRACE_TOKEN_MASK",
		0xD9E7: "SQ_THREAD_TRACE_BUF0_BASE_LO", 0xD9E8: "SQ_THREAD_TRACE_BUF0_BASE_HI", 0xD9E6: "SQ_THREAD_TRACE_BUF0_SIZE",
		0xC448: "SPI_SQG_EVENT_CTL"},
}

// RegName names a register for disassembly, thread-trace registers included.
func (d *Device) RegName(r pm4.Reg) string {
	if n := attRegNames[d.Family][r]; n != "" {
		return n
	}
	return d.Table.RegName(r)
}

// SQTT header words written to USERDATA_2 after start: "\0ROC" then the
// decoder header word.
const (
	attHeaderMagic  uint32 = 0x434F5200
	attHeaderInfo   uint32 = 0x00080201
	attTimestampOp  uint32 = 5 // USERDATA_3 marker before the two clock halves
	attCodeObjOp    uint32 = 4
	attSEBuffer     uint64 = 0x1000 // masked SEs get one page
	sqgTopBopEvents uint32 = 3      // gfx12 SPI_SQG_EVENT_CTL: top and bottom-of-pipe events
	attMinStep      uint64 = 128 << 10
	traceControlSz         = 32 // TraceControl bytes per SE
)

// ATTPackets is a thread-trace packet set.
type ATTPackets struct {
	Device      *Device
	Config      ATTConfig
	Start, Stop IB
	ControlAddr uint64
	TraceAddr   uint64
	CmdBufAddr  uint64
	CmdBuf      []byte
	Allocations []Allocation
	SEBase      []uint64 // each SE's trace buffer start
	SEStep      uint64   // bytes per enabled SE
}

// Packets returns start and stop.
func (p *ATTPackets) Packets() []*IB { return []*IB{&p.Start, &p.Stop} }

// BuildATT builds the thread-trace start/stop packets, allocating the control
// buffer, the trace buffer and the command buffer through alloc.
func (d *Device) BuildATT(cfg ATTConfig, alloc Allocator) (*ATTPackets, error) {
	r := attSpecs[d.Family]
	if r == nil {
		return nil, fmt.Errorf("thread trace on %s (%s) is not supported by rocprof-go yet: its register values are not verified", d.GfxIP, d.Family)
	}
	if cfg.PerfCountersOn(d.Family) {
		sq, ok := d.Table.BlockByName("SQ")
		if !ok || len(sq.Regs) < len(cfg.PerfCounters) {
			return nil, fmt.Errorf("%s has no SQ counters to stream into the thread trace", d.GfxIP)
		}
		for _, pc := range cfg.PerfCounters {
			if pc.Event > sq.EventIDMax {
				return nil, fmt.Errorf("SQ event %d is beyond %s's last SQ event %d", pc.Event, d.GfxIP, sq.EventIDMax)
			}
		}
	}
	cfg.SEMask &= 1<<uint(d.SE) - 1
	n := uint64(bits.OnesCount64(cfg.SEMask))
	if n == 0 {
		n = 1
	}
	reserve := (64 - n) * attSEBuffer
	var step uint64
	if cfg.BufferSize > reserve {
		step = ((cfg.BufferSize - reserve) / n) &^ 0xFFF
	}
	if step < attMinStep || step >= r.maxStep {
		return nil, fmt.Errorf("ATT buffer size 0x%x gives 0x%x bytes per shader engine; it must be at least 0x%x and below 0x%x",
			cfg.BufferSize, step, attMinStep, r.maxStep)
	}
	p := &ATTPackets{Device: d, Config: cfg, SEStep: step}
	ctlSize := uint64(traceControlSz*d.SE + 0x100)
	var err error
	if p.ControlAddr, err = alloc(ctlSize, FlagsATTControl); err != nil {
		return nil, fmt.Errorf("allocating the ATT control buffer: %w", err)
	}
	if p.TraceAddr, err = alloc(cfg.BufferSize, FlagsATTTrace); err != nil {
		return nil, fmt.Errorf("allocating the ATT trace buffer: %w", err)
	}
	addr := p.TraceAddr
	for se := 0; se < d.SE; se++ {
		p.SEBase = append(p.SEBase, addr)
		if p.enabled(se) {
			addr += step
		} else {
			addr += attSEBuffer
		}
	}
	var start, stop pm4.Stream
	if d.Family == GFX9 {
		d.attStart9(&start, p, r)
		d.attStop9(&stop, p, r)
	} else {
		d.attStart10(&start, p, r)
		d.attStop10(&stop, p, r)
	}
	size := alignIB(start.Len()*4) + alignIB(stop.Len()*4)
	if p.CmdBufAddr, err = alloc(uint64(size), FlagsCmdBuffer); err != nil {
		return nil, fmt.Errorf("allocating the ATT command buffer: %w", err)
	}
	p.Allocations = []Allocation{
		{Role: "control_buffer", Addr: p.ControlAddr, Size: ctlSize, Flags: FlagsATTControl},
		{Role: "trace_buffer", Addr: p.TraceAddr, Size: cfg.BufferSize, Flags: FlagsATTTrace},
		{Role: "command_buffer", Addr: p.CmdBufAddr, Size: uint64(size), Flags: FlagsCmdBuffer},
	}
	p.CmdBuf = make([]byte, size)
	off := 0
	for _, part := range []struct {
		ib *IB
		s  *pm4.Stream
		n  string
	}{{&p.Start, &start, "start"}, {&p.Stop, &stop, "stop"}} {
		a := p.CmdBufAddr + uint64(off)
		*part.ib = IB{Name: part.n, Addr: a, Offset: off, DW: part.s.DW, Packet: d.NewAQLPacket(a, part.s.Len())}
		dwordsToBytes(p.CmdBuf[off:], part.s.DW)
		off += alignIB(part.s.Len() * 4)
	}
	return p, nil
}

func (p *ATTPackets) enabled(se int) bool { return p.Config.SEMask>>uint(se)&1 != 0 }

func (d *Device) copyImmToReg(s *pm4.Stream, r pm4.Reg, v uint32) {
	ctrl := pm4.CopyControl(pm4.SelImmOrMem, d.regSel(r), 0)
	if d.spec.copyCacheImm {
		ctrl |= d.spec.copyCache
	}
	s.CopyData(ctrl, v, 0, uint32(r), 0)
}

func (d *Device) attWrite(s *pm4.Stream, r *attRegs, reg pm4.Reg, v uint32) {
	if r.setUconfig {
		s.SetUconfig(reg, v)
		return
	}
	d.copyImmToReg(s, reg, v)
}

// predSE opens a PRED_EXEC for the SE's XCC on multi-XCC parts.
func (d *Device) predXCC(s *pm4.Stream, xcc int) int {
	if d.XCC > 1 {
		return s.PredExec(1 << uint(xcc))
	}
	return -1
}

func endPred(s *pm4.Stream, at int) {
	if at >= 0 {
		s.EndPredExec(at)
	}
}

// attTimestamps records the GPU clock into control[xcc] (+0x10 start, +0x18
// stop) and feeds it to the trace through USERDATA_3.
func (d *Device) attTimestamps(s *pm4.Stream, p *ATTPackets, stop bool) {
	spx := d.SEPerXCC()
	cache := d.spec.copyCache
	for x := 0; x < d.XCC; x++ {
		if p.Config.SEMask>>uint(x*spx)&(1<<uint(spx)-1) == 0 {
			continue
		}
		pe := d.predXCC(s, x)
		d.grbm(s, grbmBroadcast)
		s.SetUconfig(RegSQTTUserdata3, attTimestampOp)
		at := p.ControlAddr + uint64(traceControlSz*x) + 0x10
		if stop {
			at += 8
		}
		s.CopyData(pm4.CopyControl(pm4.SelGPUClock, d.spec.memDst, cache|pm4.CopyCount64|pm4.CopyWrConfirm), 0, 0, uint32(at)&^7, uint32(at>>32))
		for _, half := range []uint64{at, at + 4} {
			s.CopyData(pm4.CopyControl(pm4.SelMemory, pm4.SelRegister, cache), uint32(half), uint32(half>>32), uint32(RegSQTTUserdata3), 0)
		}
		s.CopyData(pm4.CopyControl(pm4.SelGPUClock, pm4.SelRegister, cache|pm4.CopyWrConfirm), 0, 0, uint32(RegSQTTUserdata3), 0)
		endPred(s, pe)
	}
}

func (d *Device) attStart9(s *pm4.Stream, p *ATTPackets, r *attRegs) {
	c := p.Config
	d.grbm(s, grbmBroadcast)
	s.EventWrite(pm4.EventCSPartialFlush)
	s.SetUconfig(r.mask, r.maskConst|c.TargetCU|c.SIMDSelect<<8|(c.VMIDMask&3)<<12)
	token := r.tokenOn
	if c.PerfCountersOn(d.Family) {
		d.attPerfStart(s, p, r)
		token |= sqttPerfToken
	}
	s.SetUconfig(r.tokenMask, token)
	s.SetUconfig(r.mode, r.modeOff)
	s.SetUconfig(r.hiwater, 6)
	spx := d.SEPerXCC()
	for se := 0; se < d.SE; se++ {
		if !p.enabled(se) {
			continue
		}
		pe := d.predXCC(s, se/spx)
		d.grbm(s, grbmInstBcast|uint32(se%spx)<<16)
		s.SetUconfig(r.tokenMask2, 0xFFFFFFFF)
		d.copyImmToReg(s, r.status, 0)
		s.SetUconfig(r.base, uint32(p.SEBase[se]>>12))
		s.SetUconfig(r.base2, uint32(p.SEBase[se]>>44))
		s.SetUconfig(r.size, uint32(p.SEStep>>12))
		s.SetUconfig(r.ctrl, r.ctrlOn)
		s.EventWrite(pm4.EventCSPartialFlush)
		s.SetUconfig(r.mode, r.modeOn)
		endPred(s, pe)
	}
	s.EventWrite(pm4.EventCSPartialFlush)
	s.SetUconfig(RegSQTTUserdata2, attHeaderMagic)
	s.SetUconfig(RegSQTTUserdata2, attHeaderInfo)
	if c.RTTimestamps {
		d.attTimestamps(s, p, false)
	}
}

// attPerfStart programs the SQ counters streamed into a gfx9 trace, in
// AQLprofile's order: perfmon clock on, compute perf counting on, CP perfmon
// reset, the eight SQ_PERFCOUNTERn_SELECT (event | SIMD mask << 24, unused
// ones 0), the trace's and the SQ's perf masks, SQ_PERFCOUNTER_CTRL with the
// sampling period, CP perfmon start, then a partial flush.
func (d *Device) attPerfStart(s *pm4.Stream, p *ATTPackets, r *attRegs) {
	c := &p.Config
	s.SetUconfig(RegRLCPerfmonClkCntl, 1)
	s.SetSh(RegComputePerfcountEnable, 1)
	s.SetUconfig(RegCPPerfmonCntl, cpPerfmonReset)
	sq, _ := d.Table.BlockByName("SQ")
	for n := 0; n < MaxATTPerfCounters && sq != nil && n < len(sq.Regs); n++ {
		v := uint32(0)
		if n < len(c.PerfCounters) {
			pc := c.PerfCounters[n]
			mask := pc.SIMDMask & 0xF
			if mask == 0 {
				mask = 0xF
			}
			v = pc.Event | mask<<24
		}
		d.writeConfig(s, sq.Regs[n].Select, v)
	}
	s.SetUconfig(r.perfMask, c.perfMask())
	s.SetUconfig(RegSQPerfcounterMask, c.perfMask())
	d.writeConfig(s, RegSQPerfcounterCtrl, c.perfCtrl())
	s.SetUconfig(RegCPPerfmonCntl, cpPerfmonStart)
	s.EventWrite(pm4.EventCSPartialFlush)
}

// The gfx9 wait polls the register as AQLprofile emits it: 0x338, not the
// STATUS address itself (reproduced for byte identity).
const attGfx9WaitAddr uint32 = 0x338

func (d *Device) attStatusReads(s *pm4.Stream, p *ATTPackets, r *attRegs, se int) {
	ctl := p.ControlAddr + uint64(traceControlSz*se)
	d.copyRegToMem(s, r.status, ctl, true)
	d.copyRegToMem(s, r.cntr, ctl+4, true)
	d.copyRegToMem(s, r.wptr, ctl+8, true)
}

func (d *Device) attStop9(s *pm4.Stream, p *ATTPackets, r *attRegs) {
	d.grbm(s, grbmBroadcast)
	s.EventWrite(pm4.EventCSPartialFlush)
	if p.Config.RTTimestamps {
		d.attTimestamps(s, p, true)
		s.EventWrite(pm4.EventCSPartialFlush)
	}
	s.SetUconfig(r.mode, r.modeOff)
	s.EventWrite(pm4.EventCSPartialFlush)
	if p.Config.PerfCountersOn(d.Family) {
		s.SetUconfig(RegCPPerfmonCntl, d.spec.cpStop)
		s.SetUconfig(RegCPPerfmonCntl, cpPerfmonReset)
		s.SetUconfig(RegRLCPerfmonClkCntl, 0)
		s.EventWrite(pm4.EventCSPartialFlush)
	}
	spx := d.SEPerXCC()
	for se := 0; se < d.SE; se++ {
		if !p.enabled(se) {
			continue
		}
		pe := d.predXCC(s, se/spx)
		d.grbm(s, grbmInstBcast|uint32(se%spx)<<16)
		s.WaitRegMem(4, 0, attGfx9WaitAddr, 0, 1, 0x40000000, r.waitPoll)
		d.attStatusReads(s, p, r, se)
		endPred(s, pe)
	}
	d.grbm(s, grbmBroadcast)
	ctl := uint64(traceControlSz * d.SE)
	s.AcquireMem(p.ControlAddr, ctl, d.spec.acquire10)
	s.AcquireMem(p.TraceAddr, p.Config.BufferSize, d.spec.acquire10)
	s.SetUconfig(r.size, 0)
	s.SetUconfig(r.ctrl, r.ctrlOn)
	s.EventWrite(pm4.EventCSPartialFlush)
	s.AcquireMem(p.ControlAddr, ctl, d.spec.acquire10)
	s.EventWrite(pm4.EventCSPartialFlush)
}

func (d *Device) attStart10(s *pm4.Stream, p *ATTPackets, r *attRegs) {
	c := p.Config
	d.grbm(s, grbmBroadcast)
	d.copyImmToReg(s, r.status, 0)
	if r.spiSqgEventCtl != 0 {
		d.attWrite(s, r, r.spiSqgEventCtl, sqgTopBopEvents)
	}
	// SIMD_SEL is bits 1:0 and WGP_SEL bits 7:4; AQLprofile programs the
	// target CU number into WGP_SEL as is.
	mask := r.maskConst | c.SIMDSelect&3 | (c.TargetCU&0xF)<<4
	for se := 0; se < d.SE; se++ {
		d.grbm(s, grbmInstBcast|uint32(se)<<16)
		page := p.SEBase[se] >> 12
		units := attSEBuffer >> 12
		if p.enabled(se) {
			units = p.SEStep >> 12
		}
		if r.buf0BaseHi != 0 {
			d.attWrite(s, r, r.buf0Size, uint32(units))
			d.attWrite(s, r, r.buf0Base, uint32(page))
			d.attWrite(s, r, r.buf0BaseHi, uint32(page>>32))
			d.attWrite(s, r, r.wptr, 0)
		} else {
			// SIZE (bits 29:8, 4 KiB units) shares the register with BASE_HI (3:0).
			d.attWrite(s, r, r.buf0Size, uint32(units)<<8|uint32(page>>32)&0xF)
			d.attWrite(s, r, r.buf0Base, uint32(page))
		}
		d.attWrite(s, r, r.mask, mask)
		tok := r.tokenOff
		if p.enabled(se) {
			tok = r.tokenOn
		}
		d.attWrite(s, r, r.tokenMask, tok)
		d.attWrite(s, r, r.ctrl, r.ctrlOn)
	}
	for se := 0; se < d.SE; se++ {
		if p.enabled(se) {
			d.grbm(s, grbmInstBcast|uint32(se)<<16)
			s.SetSh(RegComputeThreadTraceEnable, 1)
		}
	}
	d.grbm(s, grbmBroadcast)
	s.EventWrite(pm4.EventCSPartialFlush)
	s.SetUconfig(RegSQTTUserdata2, attHeaderMagic)
	s.SetUconfig(RegSQTTUserdata2, attHeaderInfo)
}

func (d *Device) attStop10(s *pm4.Stream, p *ATTPackets, r *attRegs) {
	d.grbm(s, grbmBroadcast)
	s.EventWrite(pm4.EventCSPartialFlush)
	d.grbm(s, grbmBroadcast)
	s.SetSh(RegComputeThreadTraceEnable, 0)
	if r.finishEvent {
		s.EventWrite(pm4.EventThreadTraceFinish)
	}
	s.WaitRegMem(3, 0, uint32(r.status), 0, 0, 0x3FC, r.waitPoll)
	d.attWrite(s, r, r.ctrl, r.ctrlOff)
	s.WaitRegMem(3, 0, uint32(r.status), 0, 0, 0x02000000, r.waitPoll)
	for se := 0; se < d.SE; se++ {
		d.grbm(s, grbmInstBcast|uint32(se)<<16)
		d.attStatusReads(s, p, r, se)
	}
	d.grbm(s, grbmBroadcast)
	if r.acquireStop {
		s.AcquireMem(p.ControlAddr, uint64(traceControlSz*d.SE), d.spec.acquire10)
	}
	s.EventWrite(pm4.EventCSPartialFlush)
}

// CodeObjMarker describes a code object load or unload for the trace.
type CodeObjMarker struct {
	ID        uint64
	Addr      uint64
	Size      uint64
	IsUnload  bool
	FromStart bool
}

// marker channels (USERDATA_2 header 4 | channel<<8).
const (
	chHeader, chSizeLo, chAddrLo, chAddrHi, chSizeHi, chIDLo, chIDHi uint32 = 0, 1, 2, 3, 4, 5, 6
	markerSmallID                                                           = 1 << 30
)

// BuildCodeObjMarker builds the marker IB in one allocation of exactly its
// size (flags 0x03) and wraps it in an AQL packet.
func (d *Device) BuildCodeObjMarker(m CodeObjMarker, alloc Allocator) (*IB, error) {
	return d.BuildCodeObjMarkers([]CodeObjMarker{m}, alloc)
}

// BuildCodeObjMarkers builds one IB holding the markers of several code
// objects in order (the "loaded from start" set a trace begins with), in one
// allocation of exactly its size, wrapped in an AQL packet.
func (d *Device) BuildCodeObjMarkers(ms []CodeObjMarker, alloc Allocator) (*IB, error) {
	var s pm4.Stream
	for _, m := range ms {
		d.codeObjMarker(&s, m)
	}
	addr, err := alloc(uint64(s.Len()*4), FlagsMarker)
	if err != nil {
		return nil, fmt.Errorf("allocating the code-object marker: %w", err)
	}
	return &IB{Name: "codeobj_marker", Addr: addr, DW: s.DW, Packet: d.NewAQLPacket(addr, s.Len())}, nil
}

// codeObjMarker appends one code object's marker: USERDATA_2 word pairs
// (opcode 4 | channel << 8, value), the header last.
func (d *Device) codeObjMarker(s *pm4.Stream, m CodeObjMarker) {
	put := func(ch, v uint32) {
		d.grbm(s, grbmBroadcast)
		s.SetUconfig(RegSQTTUserdata2, attCodeObjOp|ch<<8)
		s.SetUconfig(RegSQTTUserdata2, v)
	}
	if !m.IsUnload {
		put(chAddrLo, uint32(m.Addr))
		put(chAddrHi, uint32(m.Addr>>32))
		put(chSizeLo, uint32(m.Size))
		put(chSizeHi, uint32(m.Size>>32))
	}
	hdr := uint32(0)
	if m.IsUnload {
		hdr |= 1
	}
	if m.FromStart {
		hdr |= 2
	}
	if m.ID >= markerSmallID {
		put(chIDLo, uint32(m.ID))
		put(chIDHi, uint32(m.ID>>32))
	} else {
		hdr |= uint32(m.ID) << 2
	}
	put(chHeader, hdr)
}
