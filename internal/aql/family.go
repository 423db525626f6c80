package aql

import (
	"fmt"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/aql/pm4"
)

// Family is a GPU generation whose PM4 programming differs.
type Family int

// Families.
const (
	GFX9  Family = 9
	GFX10 Family = 10
	GFX11 Family = 11
	GFX12 Family = 12
)

func (f Family) String() string { return fmt.Sprintf("gfx%d", int(f)) }

// Fixed registers (dword addresses; the same on every family the goldens cover).
const (
	RegGRBMGfxIndex             pm4.Reg = 0xC200
	RegCPPerfmonCntl            pm4.Reg = 0xD808
	RegRLCPerfmonClkCntl        pm4.Reg = 0xDCBF
	RegSQPerfcounterCtrl        pm4.Reg = 0xD9E0
	RegSQPerfcounterMask        pm4.Reg = 0xD9E1
	RegSQPerfcounterCtrl2       pm4.Reg = 0xD9E2
	RegComputePerfcountEnable   pm4.Reg = 0x2E0B
	RegComputeThreadTraceEnable pm4.Reg = 0x2E1E
	RegSQTTUserdata2            pm4.Reg = 0xC342
	RegSQTTUserdata3            pm4.Reg = 0xC343
)

var commonRegNames = map[pm4.Reg]string{
	RegGRBMGfxIndex: "GRBM_GFX_INDEX", RegCPPerfmonCntl: "CP_PERFMON_CNTL",
	RegRLCPerfmonClkCntl: "RLC_PERFMON_CLK_CNTL", RegSQPerfcounterCtrl: "SQ_PERFCOUNTER_CTRL",
	RegSQPerfcounterMask: "SQ_PERFCOUNTER_MASK", RegSQPerfcounterCtrl2: "SQ_PERFCOUNTER_CTRL2",
	RegComputePerfcountEnable: "COMPUTE_PERFCOUNT_ENABLE", RegComputeThreadTraceEnable: "COMPUTE_THREAD_TRACE_ENABLE",
	RegSQTTUserdata2: "SQ_THREAD_TRACE_USERDATA_2", RegSQTTUserdata3: "SQ_THREAD_TRACE_USERDATA_3",
}

// GRBM_GFX_INDEX selections.
const (
	grbmSEBcast   uint32 = 0x80000000 // SE_BROADCAST_WRITES
	grbmInstBcast uint32 = 0x40000000 // INSTANCE_BROADCAST_WRITES
	grbmSHBcast   uint32 = 0x20000000 // SH_BROADCAST_WRITES
	grbmBroadcast        = grbmSEBcast | grbmInstBcast | grbmSHBcast
)

// CP_PERFMON_CNTL values.
const (
	cpPerfmonReset uint32 = 0
	cpPerfmonStart uint32 = 1
	cpPerfmonRead  uint32 = 0x401
)

// familySpec holds what differs between families. Architectures are data:
// every family difference the builders know is a field here.
type familySpec struct {
	ibControl      uint32 // AQL IB control high bits (VALID | cache policy)
	rlcClock       bool   // RLC_PERFMON_CLK_CNTL toggled around collection
	cpStop         uint32 // CP_PERFMON_CNTL stop value
	sqCtrlTc       uint32 // SQ_PERFCOUNTER_CTRL when a Tc block is present
	sqCtrl2        bool   // SQ_PERFCOUNTER_CTRL2 = 0x1FFFF when Tc or Sq present
	sqEventCtrl    uint32 // per-SQ-event control register value
	sqMask         bool   // SQ_PERFCOUNTER_MASK = ~0 per SQ event
	acquire10      bool   // 8-dword ACQUIRE_MEM
	memDst         pm4.CopySel
	copyCache      uint32 // cache-policy bits of COPY_DATA control
	copyCacheImm   bool   // the cache bits also go on immediate sources
	implicitGRBM   bool   // gfx10: GRBM_COUNT appended when no GRBM event is asked
	sqWgpLoOnly    bool   // gfx11: Sq blocks are read per WGP, LO only
	wgpReads       bool   // gfx12: Wgp blocks are read per WGP
	wgpFactor      bool   // samples include wgp_per_sa (gfx11+)
	sqWgpFactor    bool   // gfx11: Sq blocks multiply by wgp_per_sa again
	sqWgpDim       bool   // gfx11/12: Sq blocks have a WGP dimension instead of INSTANCE
	perfCounterSel bool   // CONFIG-space registers use the PERFCOUNTERS copy selector
	tcSeDimClamp   bool   // gfx9: Tc+Se blocks clamp their INSTANCE extent
}

var familySpecs = map[Family]*familySpec{
	GFX9: {ibControl: 0x10800000, rlcClock: true, cpStop: 2, sqCtrlTc: 0xFFFF007F, sqEventCtrl: 0xFFFF0057,
		sqMask: true, memDst: pm4.SelImmOrMem, copyCache: 0x02002000, perfCounterSel: true, tcSeDimClamp: true},
	GFX10: {ibControl: 0x10800000, cpStop: 2, sqCtrlTc: 0x7F, sqEventCtrl: 0x57, acquire10: true,
		memDst: pm4.SelTCL2, implicitGRBM: true, perfCounterSel: true},
	GFX11: {ibControl: 0x10800000, cpStop: 2, sqCtrlTc: 0x55, sqCtrl2: true, sqEventCtrl: 0x55, acquire10: true,
		memDst: pm4.SelTCL2, sqWgpLoOnly: true, wgpFactor: true, sqWgpFactor: true, sqWgpDim: true, perfCounterSel: true},
	GFX12: {ibControl: 0x30800000, cpStop: 0x402, sqCtrlTc: 0x55, sqCtrl2: true, sqEventCtrl: 0x55, acquire10: true,
		memDst: pm4.SelTCL2, copyCache: 0x06006000, copyCacheImm: true, wgpReads: true, wgpFactor: true,
		sqWgpDim: true, perfCounterSel: true},
}

// archSpec maps a gfxip prefix onto its family, block table and SQ
// accumulate event ids (0 = accumulation unsupported).
type archSpec struct {
	prefix           string
	family           Family
	table            string
	accumLo, accumHi uint32
}

// archSpecs is searched in order; the first matching prefix wins. gfx909 and
// gfx90c are rejected as AQLprofile does.
var archSpecs = []archSpec{
	{"gfx900", GFX9, "gfx900_vega10", 0, 0},
	{"gfx902", GFX9, "gfx900_vega10", 0, 0},
	{"gfx906", GFX9, "gfx906_mi50", 0, 0},
	{"gfx908", GFX9, "gfx908_mi100", 1, 158},
	{"gfx90a", GFX9, "gfx90a_mi210", 1, 185},
	{"gfx94", GFX9, "gfx942_mi300x", 1, 184},
	{"gfx95", GFX9, "gfx950_mi355x", 1, 200},
	{"gfx10", GFX10, "gfx1030_rx6800xt", 1, 1},
	{"gfx11", GFX11, "gfx1100_rx7900xtx", 1, 1},
	{"gfx12", GFX12, "gfx1201_rx9070xt", 0, 0},
}

func lookupArch(gfxip string) (*archSpec, error) {
	for i := range archSpecs {
		if strings.HasPrefix(gfxip, archSpecs[i].prefix) {
			return &archSpecs[i], nil
		}
	}
	var known []string
	for _, a := range archSpecs {
		known = append(known, a.prefix+"*")
	}
	return nil, fmt.Errorf("unsupported GPU architecture %q: expected one of %s", gfxip, strings.Join(known, ", "))
}
