package aql

import (
	"fmt"

	"github.com/rocprof-go/rocprof-go/internal/aql/pm4"
)

// unsupportedPMC are block attributes whose extra programming steps
// (memory-controller, clean, SDMA, AID, UMC, RPB, ATC, GUS paths) rocprof-go
// does not build yet; no golden covers them.
const unsupportedPMC = AttrMc | AttrClean | AttrSdma | AttrAid | AttrUmc | AttrRpb | AttrAtc | AttrGus

// PMCPackets is a complete PMC packet set, as aqlprofile_pmc_create_packets
// returns it: three AQL packets over one command buffer and an output buffer.
type PMCPackets struct {
	Device      *Device
	Events      []Event // the caller's events, in request order
	Start, Stop IB
	Read        IB
	OutputAddr  uint64
	OutputSize  uint64
	CmdBufAddr  uint64
	CmdBuf      []byte // read | start | stop, each padded to IBAlign
	Allocations []Allocation

	counters []counter
}

// Packets returns the IBs in AQLprofile's order: start, stop, read.
func (p *PMCPackets) Packets() []*IB { return []*IB{&p.Start, &p.Stop, &p.Read} }

// BuildPMC builds the PMC packets for events, allocating the output buffer and
// then the command buffer through alloc (AQLprofile's order and flags).
func (d *Device) BuildPMC(events []Event, alloc Allocator) (*PMCPackets, error) {
	cs, err := d.plan(events)
	if err != nil {
		return nil, err
	}
	var attrs Attr
	outBytes := uint64(8) // room for gfx10's implicit GRBM sample
	for _, c := range cs {
		if c.block.Attr.Any(unsupportedPMC) {
			return nil, fmt.Errorf("%s counters (attributes %s) need programming rocprof-go does not build yet", c.block.Name, c.block.Attr)
		}
		attrs |= c.block.Attr
		if !c.implicit {
			outBytes += uint64(d.BytesNeeded(c.block))
		}
	}
	p := &PMCPackets{Device: d, Events: append([]Event(nil), events...), counters: cs, OutputSize: outBytes}
	if p.OutputAddr, err = alloc(outBytes, FlagsPMCOutput); err != nil {
		return nil, fmt.Errorf("allocating the PMC output buffer: %w", err)
	}
	// Size the streams up front: growing them dominates the build time.
	samples := 0
	for _, c := range cs {
		samples += d.SamplesPerXCC(c.block)
	}
	start := pm4.Stream{DW: make([]uint32, 0, 32+12*len(cs))}
	stop := pm4.Stream{DW: make([]uint32, 0, 16)}
	read := pm4.Stream{DW: make([]uint32, 0, 16+d.XCC*(24+3*len(cs)+15*samples))}
	d.pmcStart(&start, cs, attrs)
	d.pmcStop(&stop, attrs)
	d.pmcRead(&read, cs, attrs, p.OutputAddr)
	size := alignIB(read.Len()*4) + alignIB(start.Len()*4) + alignIB(stop.Len()*4)
	if p.CmdBufAddr, err = alloc(uint64(size), FlagsCmdBuffer); err != nil {
		return nil, fmt.Errorf("allocating the PMC command buffer: %w", err)
	}
	p.Allocations = []Allocation{
		{Role: "output_buffer", Addr: p.OutputAddr, Size: outBytes, Flags: FlagsPMCOutput},
		{Role: "command_buffer", Addr: p.CmdBufAddr, Size: uint64(size), Flags: FlagsCmdBuffer},
	}
	p.CmdBuf = make([]byte, size)
	off := 0
	for _, part := range []struct {
		ib *IB
		s  *pm4.Stream
		n  string
	}{{&p.Read, &read, "read"}, {&p.Start, &start, "start"}, {&p.Stop, &stop, "stop"}} {
		addr := p.CmdBufAddr + uint64(off)
		*part.ib = IB{Name: part.n, Addr: addr, Offset: off, DW: part.s.DW, Packet: d.NewAQLPacket(addr, part.s.Len())}
		dwordsToBytes(p.CmdBuf[off:], part.s.DW)
		off += alignIB(part.s.Len() * 4)
	}
	return p, nil
}

// writeConfig writes a counter register: SET_UCONFIG_REG when it is a UCONFIG
// register, else a COPY_DATA immediate write.
func (d *Device) writeConfig(s *pm4.Stream, r pm4.Reg, v uint32) {
	if r.IsUconfig() {
		s.SetUconfig(r, v)
		return
	}
	ctrl := pm4.CopyControl(pm4.SelImmOrMem, d.regSel(r), 0)
	if d.spec.copyCacheImm {
		ctrl |= d.spec.copyCache
	}
	s.CopyData(ctrl, v, 0, uint32(r), 0)
}

// regSel is the COPY_DATA selector for a register: the PERFCOUNTERS path for
// privileged CONFIG registers (not on multi-XCC gfx9, which uses plain
// memory-mapped register access).
func (d *Device) regSel(r pm4.Reg) pm4.CopySel {
	if r.IsPrivConfig() && d.spec.perfCounterSel && (d.Family != GFX9 || d.XCC == 1) {
		return pm4.SelPerfCounters
	}
	return pm4.SelRegister
}

// copyRegToMem copies a 32-bit register to memory.
func (d *Device) copyRegToMem(s *pm4.Stream, r pm4.Reg, addr uint64, confirm bool) {
	ctrl := pm4.CopyControl(d.regSel(r), d.spec.memDst, d.spec.copyCache)
	if confirm {
		ctrl |= pm4.CopyWrConfirm
	}
	s.CopyData(ctrl, uint32(r), 0, uint32(addr)&^3, uint32(addr>>32))
}

func (d *Device) grbm(s *pm4.Stream, v uint32) { s.SetUconfig(RegGRBMGfxIndex, v) }

func (d *Device) pmcStart(s *pm4.Stream, cs []counter, attrs Attr) {
	sp := d.spec
	s.EventWrite(pm4.EventCSPartialFlush)
	d.grbm(s, grbmBroadcast)
	if sp.rlcClock {
		s.SetUconfig(RegRLCPerfmonClkCntl, 1)
	}
	cpmon := attrs.Any(AttrCpmon)
	if cpmon {
		s.SetUconfig(RegCPPerfmonCntl, cpPerfmonReset)
	}
	if attrs.Any(AttrTc) {
		s.SetUconfig(RegSQPerfcounterCtrl, sp.sqCtrlTc)
	}
	if sp.sqCtrl2 && attrs.Any(AttrTc|AttrSq) {
		s.SetUconfig(RegSQPerfcounterCtrl2, 0x1FFFF)
	}
	for _, c := range cs {
		b := c.block
		if b.InstanceCount > 1 && !b.Attr.Has(AttrWgp) {
			d.grbm(s, grbmSEBcast|grbmSHBcast|c.Index)
		} else {
			d.grbm(s, grbmBroadcast)
		}
		d.writeConfig(s, c.regs.Select, b.SelectValue(c.sel))
		if b.Attr.Has(AttrSq) {
			if sp.sqMask {
				s.SetUconfig(RegSQPerfcounterMask, 0xFFFFFFFF)
			}
			if c.regs.Control != 0 {
				s.SetUconfig(c.regs.Control, sp.sqEventCtrl)
			}
		}
	}
	d.grbm(s, grbmBroadcast)
	s.SetSh(RegComputePerfcountEnable, 1)
	if cpmon {
		s.SetUconfig(RegCPPerfmonCntl, cpPerfmonReset)
		s.SetUconfig(RegCPPerfmonCntl, cpPerfmonStart)
	}
	s.EventWrite(pm4.EventCSPartialFlush)
}

func (d *Device) pmcStop(s *pm4.Stream, attrs Attr) {
	d.grbm(s, grbmBroadcast)
	if attrs.Any(AttrCpmon) {
		s.SetUconfig(RegCPPerfmonCntl, d.spec.cpStop)
	}
	if d.spec.rlcClock {
		s.SetUconfig(RegRLCPerfmonClkCntl, 0)
	}
	s.EventWrite(pm4.EventCSPartialFlush)
}

func (d *Device) pmcRead(s *pm4.Stream, cs []counter, attrs Attr, out uint64) {
	if attrs.Any(AttrCpmon) {
		s.SetUconfig(RegCPPerfmonCntl, cpPerfmonRead)
	}
	sp := d.spec
	wgp := d.WGPPerSA()
	off := uint64(0)
	for x := 0; x < d.XCC; x++ {
		pe := -1
		if d.XCC > 1 {
			pe = s.PredExec(1 << x)
		}
		d.grbm(s, grbmBroadcast)
		if sp.implicitGRBM {
			// The dummy GRBM read lands in slot 0; the real samples overwrite it.
			for _, c := range cs {
				if c.block.Attr.Has(AttrGRBM) {
					d.copyRegToMem(s, c.regs.Lo, out, false)
					d.copyRegToMem(s, c.regs.Hi, out+4, false)
					break
				}
			}
		}
		s.EventWrite(pm4.EventCSPartialFlush)
		for _, c := range cs {
			b := c.block
			d.grbm(s, grbmBroadcast)
			seN, saN := 1, 1
			if b.Attr.Has(AttrSe) {
				seN = d.SEPerXCC()
			}
			if b.Attr.Has(AttrSa) {
				saN = 2
			}
			multi := b.InstanceCount > 1
			for se := 0; se < seN; se++ {
				for sa := 0; sa < saN; sa++ {
					base := uint32(se)<<16 | uint32(sa)<<8
					switch {
					case sp.sqWgpLoOnly && b.Attr.Has(AttrSq):
						for w := 0; w < wgp; w++ {
							d.grbm(s, base|uint32(w)<<2)
							d.copyRegToMem(s, c.regs.Lo, out+off, false)
							off += 8
						}
						continue
					case sp.wgpReads && b.Attr.Has(AttrWgp):
						for w := 0; w < wgp; w++ {
							v := base | uint32(w)<<2
							if multi {
								v |= c.Index
							}
							d.grbm(s, v)
							d.copyRegToMem(s, c.regs.Lo, out+off, false)
							if c.regs.Hi != 0 {
								d.copyRegToMem(s, c.regs.Hi, out+off+4, false)
							}
							off += 8
						}
						continue
					}
					var g uint32
					switch {
					case multi && b.Attr.Has(AttrSa):
						g = base | c.Index
					case multi && b.Attr.Has(AttrSe):
						g = grbmSHBcast | uint32(se)<<16 | c.Index
					case multi:
						g = grbmSEBcast | grbmSHBcast | c.Index
					case b.Attr.Has(AttrSe):
						g = grbmInstBcast | grbmSHBcast | uint32(se)<<16
					default:
						g = grbmBroadcast
					}
					d.grbm(s, g)
					d.copyRegToMem(s, c.regs.Lo, out+off, false)
					d.copyRegToMem(s, c.regs.Hi, out+off+4, false)
					off += 8
				}
			}
		}
		d.grbm(s, grbmBroadcast)
		if pe >= 0 {
			s.EndPredExec(pe)
		}
	}
	s.AcquireMem(out, off, sp.acquire10)
}
