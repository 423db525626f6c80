package aql

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/aql/pm4"
)

// goldenRoot is the shared AQLprofile golden folder, which CI keeps beside the
// checkout. It is the truth this package is checked against: its absence is a
// failure, never a skip.
func goldenRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, parent, dir, "repository root not found")
		dir = parent
	}
	root := filepath.Join(dir, "..", "shared", "golden", "aqlprofile")
	_, err = os.Stat(filepath.Join(root, "blocks.json"))
	require.NoError(t, err, "the AQLprofile goldens must be at ../shared/golden/aqlprofile beside the checkout")
	return root
}

type goldenAgent struct {
	GfxIP string `json:"agent_gfxip"`
	XCC   int    `json:"xcc_num"`
	SE    int    `json:"se_num"`
	CU    int    `json:"cu_num"`
	SA    int    `json:"shader_arrays_per_se"`
}

type goldenPacket struct {
	Name     string   `json:"name"`
	AQL      []string `json:"aql_dwords"`
	IBAddr   string   `json:"ib_addr"`
	IBSize   int      `json:"ib_size_dwords"`
	IBOffset int      `json:"ib_offset_in_cmdbuf"`
	PM4      []string `json:"pm4"`
}

type goldenAlloc struct {
	Addr  string `json:"addr"`
	Size  uint64 `json:"size"`
	Flags string `json:"flags_raw"`
}

type goldenCase struct {
	Kind       string        `json:"kind"`
	Label      string        `json:"arch_label"`
	Set        string        `json:"set"`
	Agent      goldenAgent   `json:"agent"`
	ArenaBase  string        `json:"arena_base"`
	Allocs     []goldenAlloc `json:"allocations"`
	Packets    []goldenPacket
	CmdBufSize int    `json:"cmdbuf_size"`
	OutSize    uint64 `json:"output_buffer_size"`
	Events     []struct {
		Block     BlockID `json:"block_name_enum"`
		Index     uint32  `json:"block_index"`
		EventID   uint32  `json:"event_id"`
		Flags     uint32  `json:"flags_raw"`
		InstCount int     `json:"block_instance_count"`
		Counters  int     `json:"block_counters"`
	} `json:"events"`
	Iterate []struct {
		Block     BlockID `json:"block_name"`
		Index     uint32  `json:"block_index"`
		EventID   uint32  `json:"event_id"`
		Flags     uint32  `json:"flags"`
		CounterID uint64  `json:"counter_id"`
		Slot      int     `json:"output_slot_u64"`
		Coords    []struct {
			Pos    int   `json:"pos"`
			DimID  DimID `json:"dim_id"`
			Extent int   `json:"extent"`
			Coord  int   `json:"coord"`
		} `json:"coords"`
	} `json:"iterate_data"`
	Params []struct {
		ID    uint32 `json:"id"`
		Value uint64 `json:"value"`
	} `json:"parameters"`
	Marker struct {
		Input struct {
			ID        uint64 `json:"id"`
			Addr      string `json:"addr"`
			Size      uint64 `json:"size"`
			IsUnload  int    `json:"isUnload"`
			FromStart int    `json:"fromStart"`
		} `json:"input"`
		Allocation string       `json:"allocation"`
		Packet     goldenPacket `json:"packet"`
	} `json:"codeobj_marker"`
}

func hexU64(t testing.TB, s string) uint64 {
	v, err := strconv.ParseUint(s, 0, 64)
	require.NoError(t, err)
	return v
}

func hexDW(t testing.TB, ss []string) []uint32 {
	out := make([]uint32, len(ss))
	for i, s := range ss {
		out[i] = uint32(hexU64(t, s))
	}
	return out
}

func readJSON(t testing.TB, path string, v any) {
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, v), path)
}

func loadCase(t testing.TB, path string) *goldenCase {
	var g goldenCase
	readJSON(t, path, &g)
	return &g
}

func deviceFor(t testing.TB, g *goldenCase) *Device {
	d, err := NewDevice(Agent{GfxIP: g.Agent.GfxIP, XCC: g.Agent.XCC, SE: g.Agent.SE, CU: g.Agent.CU, SAPerSE: g.Agent.SA})
	require.NoError(t, err)
	return d
}

func goldenCases(t *testing.T, pattern string) []string {
	files, err := filepath.Glob(filepath.Join(goldenRoot(t), "*", pattern))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

// requireSameIB compares dwords and, on mismatch, shows both disassemblies.
func requireSameIB(t *testing.T, d *Device, name string, want, got []uint32) {
	t.Helper()
	if len(want) == len(got) {
		same := true
		for i := range want {
			if want[i] != got[i] {
				same = false
				break
			}
		}
		if same {
			return
		}
	}
	names := func(r pm4.Reg) string { return d.Table.RegName(r) }
	require.Equal(t, pm4.Format(want, names), pm4.Format(got, names), "%s IB differs", name)
	require.Equal(t, want, got, "%s IB differs", name)
}

func TestGoldenPMC(t *testing.T) {
	for _, path := range goldenCases(t, "pmc_*.json") {
		g := loadCase(t, path)
		t.Run(g.Label+"/"+g.Set, func(t *testing.T) {
			d := deviceFor(t, g)
			events := make([]Event, len(g.Events))
			for i, e := range g.Events {
				events[i] = Event{Block: e.Block, Index: e.Index, EventID: e.EventID, Flags: e.Flags}
				b, ok := d.Table.BlockByID(e.Block)
				require.True(t, ok)
				require.Equal(t, e.InstCount, d.InstanceExtent(b), "dimension instance count of %s", b.Name)
				require.Equal(t, e.Counters, b.CounterCount)
			}
			arena := &Arena{Next: hexU64(t, g.ArenaBase)}
			p, err := d.BuildPMC(events, arena.Alloc)
			require.NoError(t, err)

			for i, gp := range g.Packets {
				ib := p.Packets()[i]
				require.Equal(t, gp.Name, ib.Name)
				requireSameIB(t, d, gp.Name, hexDW(t, gp.PM4), ib.DW)
				require.Equal(t, hexDW(t, gp.AQL), ib.Packet[:], "%s AQL packet", gp.Name)
				require.Equal(t, gp.IBOffset, ib.Offset)
			}
			base := strings.TrimSuffix(path, ".json")
			aqlBin, err := os.ReadFile(base + ".aql.bin")
			require.NoError(t, err)
			var got []byte
			for _, ib := range p.Packets() {
				got = append(got, ib.Packet.Bytes()...)
			}
			require.Equal(t, aqlBin, got, "aql.bin")
			cmd, err := os.ReadFile(base + ".cmdbuf.bin")
			require.NoError(t, err)
			require.Equal(t, cmd, p.CmdBuf, "cmdbuf.bin")
			require.Equal(t, g.CmdBufSize, len(p.CmdBuf))
			require.Equal(t, g.OutSize, p.OutputSize)
			require.Len(t, p.Allocations, len(g.Allocs))
			for i, a := range g.Allocs {
				require.Equal(t, hexU64(t, a.Addr), p.Allocations[i].Addr)
				require.Equal(t, a.Size, p.Allocations[i].Size)
				require.Equal(t, hexU64(t, a.Flags), uint64(p.Allocations[i].Flags))
			}

			refs := p.Samples()
			require.Len(t, refs, len(g.Iterate))
			for i, it := range g.Iterate {
				r := refs[i]
				require.Equal(t, Event{Block: it.Block, Index: it.Index, EventID: it.EventID, Flags: it.Flags}, r.Event, "sample %d", i)
				require.Equal(t, it.CounterID, r.CounterID, "sample %d counter_id", i)
				require.Equal(t, it.Slot, r.Slot, "sample %d slot", i)
				require.Len(t, r.Coords, len(it.Coords))
				for j, c := range it.Coords {
					require.Equal(t, Coord{Dim: Dim{ID: c.DimID, Extent: c.Extent}, Pos: c.Pos, Value: c.Coord}, r.Coords[j], "sample %d coord %d", i, j)
				}
			}
		})
	}
}

func TestGoldenATT(t *testing.T) {
	for _, path := range goldenCases(t, "att_*.json") {
		g := loadCase(t, path)
		t.Run(g.Label, func(t *testing.T) {
			d := deviceFor(t, g)
			cfg := DefaultATTConfig()
			for _, p := range g.Params {
				require.NoError(t, cfg.Apply(ATTParam(p.ID), p.Value))
			}
			arena := &Arena{Next: hexU64(t, g.ArenaBase)}
			p, err := d.BuildATT(cfg, arena.Alloc)
			require.NoError(t, err)
			for i, gp := range g.Packets {
				ib := p.Packets()[i]
				require.Equal(t, gp.Name, ib.Name)
				requireSameIB(t, d, gp.Name, hexDW(t, gp.PM4), ib.DW)
				require.Equal(t, hexDW(t, gp.AQL), ib.Packet[:], "%s AQL packet", gp.Name)
				require.Equal(t, gp.IBOffset, ib.Offset)
			}
			base := strings.TrimSuffix(path, ".json")
			aqlBin, err := os.ReadFile(base + ".aql.bin")
			require.NoError(t, err)
			require.Equal(t, aqlBin, append(p.Start.Packet.Bytes(), p.Stop.Packet.Bytes()...))
			cmd, err := os.ReadFile(base + ".cmdbuf.bin")
			require.NoError(t, err)
			require.Equal(t, cmd, p.CmdBuf)
			require.Equal(t, g.CmdBufSize, len(p.CmdBuf))
			require.Len(t, p.Allocations, len(g.Allocs))
			for i, a := range g.Allocs {
				require.Equal(t, hexU64(t, a.Addr), p.Allocations[i].Addr)
				require.Equal(t, a.Size, p.Allocations[i].Size)
				require.Equal(t, hexU64(t, a.Flags), uint64(p.Allocations[i].Flags))
			}

			in := g.Marker.Input
			m, err := d.BuildCodeObjMarker(CodeObjMarker{ID: in.ID, Addr: hexU64(t, in.Addr), Size: in.Size,
				IsUnload: in.IsUnload != 0, FromStart: in.FromStart != 0}, arena.Alloc)
			require.NoError(t, err)
			require.Equal(t, hexU64(t, g.Marker.Allocation), m.Addr)
			requireSameIB(t, d, "marker", hexDW(t, g.Marker.Packet.PM4), m.DW)
			mk, err := os.ReadFile(base + ".marker.aql.bin")
			require.NoError(t, err)
			require.Equal(t, mk, m.Packet.Bytes())
		})
	}
}

// gfx10 has no ATT golden: check the parts its rules fix. Config writes go
// through COPY_DATA to the privileged CONFIG-space registers (selector 4),
// masked SEs get one page, and stop ends without a cache acquire.
func TestATTGfx10(t *testing.T) {
	d, err := ParseAgent("gfx1030:xcc=1,se=4,cu=72,sa=2")
	require.NoError(t, err)
	cfg := RocprofATTConfig()
	cfg.BufferSize = 0x4000000
	arena := &Arena{Next: 0x100000000000}
	p, err := d.BuildATT(cfg, arena.Alloc)
	require.NoError(t, err)
	start := pm4.Format(p.Start.DW, d.RegName)
	require.Contains(t, start, "COPY_DATA        IMM 0x00000000 -> PERF SQ_THREAD_TRACE_STATUS(0x2348) (32b, wr_confirm=0)\n")
	dw := p.Start.DW
	// SE0: BUF0_SIZE = 0x3FC1 pages | base bits 47:44; MASK: CS waves, SIMD 3, WGP_SEL = target CU 1.
	for _, want := range [][]uint32{
		{0xC0044000, 0x405, 0x003FC101, 0, 0x2341, 0},
		{0xC0044000, 0x405, 0x00010013, 0, 0x2345, 0},
		{0xC0044000, 0x405, 0x00080683, 0, 0x2346, 0},
		{0xC0044000, 0x405, 0x030007FF, 0, 0x2346, 0},
		{0xC0044000, 0x405, 0xA0423F41, 0, 0x2347, 0},
		{0xC0017600, 0x21E, 1},
	} {
		require.True(t, containsSeq(dw, want), "start lacks %x:\n%s", want, start)
	}
	stop := pm4.Format(p.Stop.DW, d.RegName)
	require.NotContains(t, stop, "ACQUIRE_MEM")
	require.Contains(t, stop, "WAIT_REG_MEM     REG SQ_THREAD_TRACE_STATUS(0x2348) func=3 ref=0x00000000 mask=0x000003fc poll=4")
	require.Contains(t, stop, "COPY_DATA        PERF SQ_THREAD_TRACE_STATUS(0x2348) -> TC_L2 0x100000000060 (32b, wr_confirm=1)")
	require.Equal(t, uint64(0x100000001000+0x3FC1000), p.SEBase[1])
}

func containsSeq(dw, seq []uint32) bool {
	for i := 0; i+len(seq) <= len(dw); i++ {
		ok := true
		for j := range seq {
			if dw[i+j] != seq[j] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// gfx12 has no ATT golden either: SQG events on, 64-bit base in two
// registers, WPTR reset, trace-finish event before the waits.
func TestATTGfx12(t *testing.T) {
	d, err := ParseAgent("gfx1201")
	require.NoError(t, err)
	cfg := RocprofATTConfig()
	cfg.BufferSize = 0x4000000
	p, err := d.BuildATT(cfg, (&Arena{Next: 0x100000000000}).Alloc)
	require.NoError(t, err)
	start := pm4.Format(p.Start.DW, d.RegName)
	for _, want := range [][]uint32{
		{0xC0044000, 0x06006005, 3, 0, 0xC448, 0},          // SPI_SQG_EVENT_CTL
		{0xC0044000, 0x06006005, 0x3FC1, 0, 0xD9E6, 0},     // BUF0_SIZE, 4 KiB units
		{0xC0044000, 0x06006005, 0x00000001, 0, 0xD9E7, 0}, // BASE_LO = (addr>>12) low
		{0xC0044000, 0x06006005, 0x00000001, 0, 0xD9E8, 0}, // BASE_HI = (addr>>12)>>32
		{0xC0044000, 0x06006005, 0x00030013, 0, 0xD9ED, 0}, // MASK
		{0xC0044000, 0x06006005, 0x8C1F4003, 0, 0xD9EE, 0}, // TOKEN_MASK on
		{0xC0044000, 0x06006005, 0xA0405941, 0, 0xD9EC, 0}, // CTRL on
	} {
		require.True(t, containsSeq(p.Start.DW, want), "start lacks %x:\n%s", want, start)
	}
	stop := pm4.Format(p.Stop.DW, d.RegName)
	require.Contains(t, stop, "EVENT_WRITE      event_type=0x37(THREAD_TRACE_FINISH) event_index=0")
	require.Contains(t, stop, "ACQUIRE_MEM")
	require.Equal(t, uint32(0x30800000)|uint32(len(p.Stop.DW)), p.Stop.Packet[4])
}
