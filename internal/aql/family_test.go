package aql

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/aql/pm4"
)

func buildPMC(t *testing.T, agent string, events []Event) (*Device, *PMCPackets) {
	t.Helper()
	d, err := ParseAgent(agent)
	require.NoError(t, err)
	arena := &Arena{Next: 0x100000000000}
	p, err := d.BuildPMC(events, arena.Alloc)
	require.NoError(t, err)
	return d, p
}

// gfx10 (no golden): without a GRBM event AQLprofile appends GRBM_COUNT; it is
// programmed and read after the user events (into the 8 spare bytes), a dummy
// GRBM read first lands in slot 0, and it is never reported.
func TestGfx10ImplicitGRBM(t *testing.T) {
	d, p := buildPMC(t, "gfx1030", []Event{{Block: BlockSQ, EventID: 4}})
	sq, _ := d.Table.BlockByID(BlockSQ)
	require.Equal(t, uint64(8+d.BytesNeeded(sq)), p.OutputSize)
	start := pm4.Format(p.Start.DW, d.RegName)
	require.Contains(t, start, "GRBM_PERFCOUNTER0_SELECT")
	read := pm4.Format(p.Read.DW, d.RegName)
	require.Contains(t, read, "[   6] COPY_DATA        REG GRBM_PERFCOUNTER0_LO(0x") // dummy read before the flush
	last := uint64(0x100000000000 + d.BytesNeeded(sq))
	require.Contains(t, read, fmt.Sprintf("-> TC_L2 0x%x (32b", last))
	refs := p.Samples()
	require.Len(t, refs, d.SamplesPerXCC(sq))
	for _, r := range refs {
		require.Equal(t, BlockSQ, r.Event.Block)
	}

	// With a GRBM event asked for, nothing is appended.
	_, p = buildPMC(t, "gfx1030", []Event{{Block: BlockGRBM, EventID: 2}})
	require.Equal(t, uint64(16), p.OutputSize)
	require.NotContains(t, pm4.Format(p.Start.DW, d.RegName), "GRBM_PERFCOUNTER1_SELECT")
}

// gfx12 (no golden): IB control policy 3, CP_PERFMON_CNTL stop 0x402,
// COPY_DATA temporal bits, WGP-wise reads of Wgp blocks.
func TestGfx12(t *testing.T) {
	d, p := buildPMC(t, "gfx1201", []Event{{Block: BlockSQ, EventID: 4}, {Block: 10, EventID: 1}})
	require.Equal(t, uint32(0x30800000)|uint32(len(p.Start.DW)), p.Start.Packet[4])
	require.Contains(t, pm4.Format(p.Stop.DW, d.RegName), "CP_PERFMON_CNTL(0xd808) = 0x00000402")
	require.Equal(t, uint32(0x06006200), p.Read.DW[findOp(p.Read.DW, pm4.OpCopyData)+1])
	sq, _ := d.Table.BlockByID(BlockSQ)
	ta, _ := d.Table.BlockByID(10)
	require.Equal(t, 4*2*4, d.SamplesPerXCC(sq)) // SE × SA × WGP
	require.Equal(t, uint64(8+8*(d.SamplesPerXCC(sq)+d.SamplesPerXCC(ta))), p.OutputSize)

	// SQ accumulation does not exist on gfx12.
	_, err := d.BuildPMC([]Event{{Block: BlockSQ, EventID: 5, Flags: uint32(AccumHiRes)}}, (&Arena{}).Alloc)
	require.ErrorContains(t, err, "not supported on gfx1201")
}

func findOp(dw []uint32, op pm4.Opcode) int {
	for _, p := range pm4.Disassemble(dw, nil) {
		if p.Opcode == op {
			return p.DW
		}
	}
	return -1
}

func TestBuildPMCErrors(t *testing.T) {
	d, err := ParseAgent("gfx90a")
	require.NoError(t, err)
	tests := []struct {
		name string
		ev   []Event
		msg  string
	}{
		{"empty", nil, "no PMC events given"},
		{"no block", []Event{{Block: 29}}, "block id 29 does not exist on gfx90a"},
		{"instance", []Event{{Block: BlockTCC, Index: 32}}, "TCC instance 32 out of range (0..31)"},
		{"event id", []Event{{Block: BlockSQ, EventID: 512}}, "SQ event id 512 out of range (0..511)"},
		{"flags off SQ", []Event{{Block: BlockTCC, Flags: 1}}, "valid only on SQ"},
		{"too many", []Event{{Block: BlockGRBM}, {Block: BlockGRBM, EventID: 1}, {Block: BlockGRBM, EventID: 2}}, "GRBM instance 0: more than 2 counters"},
		{"unsupported block", []Event{{Block: 23}}, "GCEA counters (attributes Mc) need programming rocprof-go does not build yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := d.BuildPMC(tt.ev, (&Arena{}).Alloc)
			require.ErrorContains(t, err, tt.msg)
		})
	}
}

// AQLprofile programs event ids beyond its tables' event_id_max as long as
// the select field holds them: rocprofiler-compute's SQC_DCACHE_INFLIGHT_LEVEL
// is SQ event 337 on gfx90a (max 303).
func TestEventBeyondTableMaxWithinSelectMask(t *testing.T) {
	d, err := ParseAgent("gfx90a")
	require.NoError(t, err)
	_, err = d.BuildPMC([]Event{{Block: BlockSQ, EventID: 337}}, (&Arena{}).Alloc)
	require.NoError(t, err)
}
