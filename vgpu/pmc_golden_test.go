package vgpu

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
)

// goldenSet is the part of an AQLprofile golden PMC description the test needs.
type goldenSet struct {
	CmdbufAddr string `json:"cmdbuf_addr"`
	OutAddr    string `json:"output_buffer_addr"`
	OutSize    int    `json:"output_buffer_size"`
	Events     []struct {
		Counter    string `json:"counter"`
		Block      string `json:"block"`
		EventID    int    `json:"event_id"`
		BlockIndex int    `json:"block_index"`
	} `json:"events"`
	Iterate []struct {
		EventID    int `json:"event_id"`
		BlockIndex int `json:"block_index"`
		Slot       int `json:"output_slot_u64"`
		Coords     []struct {
			Name  string `json:"name"`
			Coord int    `json:"coord"`
		} `json:"coords"`
	} `json:"iterate_data"`
}

// The default kernel duration model (docs/virtual-gpu.md).
const (
	baseNs = 2000
	waveNs = 8
)

// shape is an emulated agent as the counter model sees it.
type shape struct {
	golden, arch          string // golden directory, ROCPROF_VGPU_ARCH
	se, cu, tcc, clockMHz int    // SEs and TCC instances per XCC
	xcc                   int
}

var (
	mi210  = shape{"gfx90a_mi210", "gfx90a", 8, 104, 32, 1700, 1}
	vega10 = shape{"gfx900_vega10", "gfx900", 4, 64, 16, 1500, 1}
	// ROCR 5.2.3 has no gfx942: there, the standalone interpreter runs it.
	mi300x = shape{"gfx942_mi300x", "gfx942", 4, 38, 16, 2100, 8}
)

// expected restates the documented counter model for one dispatch of grid
// work-items in workgroups of wg (1-D, wave size 64) at SE se / instance inst.
func (a shape) expected(counter string, grid, wg, xcd, se, inst int) uint64 {
	wgs := (grid + wg - 1) / wg
	wpg := (wg + 63) / 64
	waves := wgs * wpg
	share := func(total, parts, i int) int {
		v := total / parts
		if i < total%parts {
			v++
		}
		return v
	}
	// Workgroup i runs on XCC (i mod X), then SE ((i div X) mod S).
	wgsX := share(wgs, a.xcc, xcd)
	wavesSE := share(wgsX, a.se, se) * wpg
	cycles := uint64(baseNs+waveNs*waves) * uint64(a.clockMHz) / 1000
	req := share(4*wgsX*wpg, a.tcc, inst)
	miss := (req + 3) / 4
	switch counter {
	case "SQ_WAVES", "SQ_LEVEL_WAVES":
		return uint64(wavesSE)
	case "SQ_INSTS_VALU":
		return uint64(16 * wavesSE)
	case "SQ_INSTS_SALU":
		return uint64(8 * wavesSE)
	case "SQ_BUSY_CYCLES":
		return cycles
	case "GRBM_COUNT":
		return cycles + 1000
	case "GRBM_GUI_ACTIVE", "CPC_CPC_STAT_BUSY", "SPI_CSN_BUSY":
		return cycles
	case "TCC_HIT":
		return uint64(req - miss)
	case "TCC_MISS":
		return uint64(miss)
	}
	return 0 // not modelled (e.g. TA_TA_BUSY, SQ_ACTIVE_INST_*)
}

// Runs AQLprofile's golden start packet, one dispatch of known grid, then the
// golden stop and read packets on the virtual GPU under every runtime of
// the ROCm matrix, and checks that the output buffer holds exactly the
// modelled values.
func TestGoldenPMCPackets(t *testing.T) {
	standalone := artefact(t, "vgpu-tests/pm4_standalone")
	cases := []struct {
		agent    shape
		set      string
		grid, wg int
	}{
		{mi210, "sq_waves", 65536, 256},
		{mi210, "sq_waves", 1000, 64},
		{mi210, "grbm_count_gui_active", 65536, 256},
		{mi210, "l2_hit_miss", 65536, 256},
		{mi210, "l2_hit_all_instances", 40000, 128},
		{mi210, "sq_insts_valu_salu", 12345, 96},
		{mi210, "mixed", 65536, 256},
		{mi210, "cpc_spi", 4096, 64},
		{vega10, "sq_waves", 65536, 256},
		{vega10, "grbm_count_gui_active", 4096, 64},
		{vega10, "l2_hit_miss", 65536, 256},
		{vega10, "sq_insts_valu_salu", 777, 128},
		{mi300x, "sq_waves", 12345, 64},
		{mi300x, "grbm_count_gui_active", 65536, 256},
		{mi300x, "l2_hit_miss", 50000, 128},
		{mi300x, "sq_insts_valu_salu", 9999, 192},
	}
	shared := sharedDir(t)
	for _, rt := range runtimes(t) {
		rt := rt.WithBinds(shared)
		driver := filepath.Join(rt.Apps, "pmc_golden")
		if rt.Name == rocmmatrix.HostName {
			driver = artefact(t, "vgpu-tests/pmc_golden")
		}
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%s/%s/grid%d/wg%d", rt.Name, c.agent.arch, c.set, c.grid, c.wg), func(t *testing.T) {
				goldenPMC(t, rt, driver, standalone, c.agent, c.set, c.grid, c.wg)
			})
		}
	}
}

// goldenPMC runs one golden packet set around one dispatch on one runtime
// (through the standalone interpreter where the runtime lacks the
// architecture) and checks every output slot against the counter model.
func goldenPMC(t *testing.T, rt rocmmatrix.Runtime, driver, standalone string, agent shape, set string, grid, wg int) {
	golden := filepath.Join(sharedDir(t), "golden", "aqlprofile", agent.golden)
	_, err := os.Stat(golden)
	require.NoErrorf(t, err, "golden packets missing: %s must exist (the shared folder next to the checkout)", golden)
	base := filepath.Join(golden, "pmc_"+set)
	raw, err := os.ReadFile(base + ".json")
	require.NoError(t, err)
	var g goldenSet
	require.NoError(t, json.Unmarshal(raw, &g))
	log := filepath.Join(t.TempDir(), "vgpu.jsonl")
	require.NoError(t, os.WriteFile(log, nil, 0o644))
	args := []string{base + ".aql.bin", base + ".cmdbuf.bin", g.CmdbufAddr, g.OutAddr,
		strconv.Itoa(g.OutSize), strconv.Itoa(grid), strconv.Itoa(wg)}
	var r result
	if !slices.Contains(rt.Archs(), agent.arch) {
		r = run(t, time.Minute, nil, standalone, append([]string{agent.golden}, args...)...)
		require.NotContains(t, r.stderr, "error", "the interpreter met an unknown opcode or register")
	} else {
		r = runOn(t, rt, time.Minute, []string{"ROCPROF_VGPU_LOG=" + log, "ROCPROF_VGPU_ARCH=" + agent.arch}, driver, args...)
	}
	require.Equalf(t, 0, r.code, "stderr: %s", r.stderr)
	var out []uint64
	for _, f := range strings.Fields(r.stdout) {
		v, err := strconv.ParseUint(f, 0, 64)
		require.NoError(t, err)
		out = append(out, v)
	}
	require.NotEmpty(t, g.Iterate)
	nonzero := 0
	for _, it := range g.Iterate {
		name := ""
		for _, e := range g.Events {
			if e.EventID == it.EventID && e.BlockIndex == it.BlockIndex {
				name = e.Counter
			}
		}
		require.NotEmpty(t, name, "slot %d: no event %d", it.Slot, it.EventID)
		xcd, se, inst := 0, 0, it.BlockIndex
		for _, co := range it.Coords {
			switch co.Name {
			case "SE":
				se = co.Coord
			case "XCD":
				xcd = co.Coord
			}
		}
		want := agent.expected(name, grid, wg, xcd, se, inst)
		require.Lessf(t, it.Slot, len(out), "output too short")
		require.Equalf(t, want, out[it.Slot], "%s at XCC %d SE %d instance %d (slot %d)", name, xcd, se, inst, it.Slot)
		if want != 0 {
			nonzero++
		}
	}
	require.Positive(t, nonzero)
	logged, err := os.ReadFile(log)
	require.NoError(t, err)
	require.NotContains(t, string(logged), `"type":"error"`, "the interpreter met an unknown opcode or register")
}

// SQ_WAVES per SE sums to the dispatch's wave count and every SE is busy.
func TestSQWavesPerSE(t *testing.T) {
	total := uint64(0)
	for se := 0; se < mi210.se; se++ {
		v := mi210.expected("SQ_WAVES", 65536, 256, 0, se, 0)
		require.Positive(t, v)
		total += v
	}
	require.Equal(t, uint64(65536/256*4), total)
}

// AQLprofile's golden SQTT start and stop packets around one dispatch leave
// a well-formed synthetic trace in the buffer, and the stop packet's reads of
// STATUS, CNTR and WPTR agree with it.
func TestGoldenSQTTPackets(t *testing.T) {
	base := filepath.Join(sharedDir(t), "golden", "aqlprofile", "gfx90a_mi210", "att_cu0_se1_64mb")
	_, err := os.Stat(base + ".aql.bin")
	require.NoErrorf(t, err, "golden packets missing: %s.aql.bin must exist", base)
	// Control words at 0x100000000000, trace buffer at 0x100000001000 (the
	// golden arena; the start packet programs BASE/BASE2 = 1 for SE 0).
	r := run(t, time.Minute, nil, artefact(t, "vgpu-tests/pmc_golden"), base+".aql.bin", base+".cmdbuf.bin",
		"0x100004001000", "0x100000000000", "16", "65536", "256", "0x100000001000", "4096")
	require.Equalf(t, 0, r.code, "stderr: %s", r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 3)
	ctl0, err := strconv.ParseUint(lines[0], 0, 64)
	require.NoError(t, err)
	ctl1, err := strconv.ParseUint(lines[1], 0, 64)
	require.NoError(t, err)
	status, cntr, wptr := uint32(ctl0), uint32(ctl0>>32), uint32(ctl1)
	require.Zero(t, status, "no busy, full or error bits")
	require.True(t, strings.HasPrefix(lines[2], "dump "))
	raw, err := hex.DecodeString(strings.TrimPrefix(lines[2], "dump "))
	require.NoError(t, err)
	require.Equal(t, "VGPUSQTT", string(raw[:8]))
	le := binary.LittleEndian
	require.Equal(t, uint32(1), le.Uint32(raw[8:]), "version")
	require.Equal(t, uint32(0), le.Uint32(raw[12:]), "SE")
	require.Equal(t, uint32(1), le.Uint32(raw[16:]), "dispatches")
	nuser := le.Uint32(raw[20:])
	require.Equal(t, uint64(128), le.Uint64(raw[24:]), "waves on SE 0")
	require.Equal(t, uint32(0x434f5200), le.Uint32(raw[32:]), "first USERDATA_2 word of the start packet")
	recOff := 32 + (int(nuser)*4+31)/32*32
	require.Equal(t, uint32(recOff+32), wptr*32, "WPTR counts the 32-byte blocks written")
	require.Equal(t, uint32(1+nuser+1), cntr)
	require.Equal(t, uint64(128), le.Uint64(raw[recOff+8:]), "dispatch record: waves on SE 0")
	require.Equal(t, uint64(baseNs+waveNs*1024), le.Uint64(raw[recOff+16:]), "dispatch record: modelled ns")
}
