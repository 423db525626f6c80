package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sharedGolden is ../shared/golden/aqlprofile beside the checkout: the truth
// the packets command is checked against (missing means failure, not skip).
func sharedGolden(t *testing.T) string {
	t.Helper()
	root := filepath.Join("..", "..", "..", "shared", "golden", "aqlprofile")
	_, err := os.Stat(filepath.Join(root, "blocks.json"))
	require.NoError(t, err, "the AQLprofile goldens must be at ../shared/golden/aqlprofile beside the checkout")
	return root
}

// goldenDoc is the part of a golden case the command must reproduce.
type goldenDoc struct {
	Agent struct {
		GfxIP string `json:"agent_gfxip"`
		XCC   int    `json:"xcc_num"`
		SE    int    `json:"se_num"`
		CU    int    `json:"cu_num"`
		SA    int    `json:"shader_arrays_per_se"`
	} `json:"agent"`
	Events []struct {
		Counter    string `json:"counter"`
		Block      string `json:"block"`
		BlockIndex uint32 `json:"block_index"`
		EventID    uint32 `json:"event_id"`
		Flags      uint32 `json:"flags_raw"`
		InstCount  int    `json:"block_instance_count"`
	} `json:"events"`
	Allocations []struct {
		Addr  string `json:"addr"`
		Size  uint64 `json:"size"`
		Flags string `json:"flags_raw"`
	} `json:"allocations"`
	Packets []struct {
		Name   string   `json:"name"`
		AQL    []string `json:"aql_dwords"`
		IBAddr string   `json:"ib_addr"`
		PM4    []string `json:"pm4"`
	} `json:"packets"`
	CmdBufSize  int             `json:"cmdbuf_size"`
	OutputSize  uint64          `json:"output_buffer_size"`
	IterateData json.RawMessage `json:"iterate_data"`
	Marker      *struct {
		Packet struct {
			AQL []string `json:"aql_dwords"`
			PM4 []string `json:"pm4"`
		} `json:"packet"`
	} `json:"codeobj_marker"`
}

func agentSpec(g *goldenDoc) string {
	a := g.Agent
	return strings.Join([]string{a.GfxIP + ":xcc=" + itoa(a.XCC), "se=" + itoa(a.SE), "cu=" + itoa(a.CU), "sa=" + itoa(a.SA)}, ",")
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func loadGolden(t *testing.T, path string) *goldenDoc {
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var g goldenDoc
	require.NoError(t, json.Unmarshal(raw, &g))
	return &g
}

func runPacketsJSON(t *testing.T, a *packetsArgs) *goldenDoc {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, runPackets(&out, a))
	var g goldenDoc
	require.NoError(t, json.Unmarshal(out.Bytes(), &g))
	return &g
}

func requireSamePackets(t *testing.T, want, got *goldenDoc) {
	t.Helper()
	require.Len(t, got.Packets, len(want.Packets))
	for i := range want.Packets {
		require.Equal(t, want.Packets[i].Name, got.Packets[i].Name)
		require.Equal(t, want.Packets[i].PM4, got.Packets[i].PM4, want.Packets[i].Name)
		require.Equal(t, want.Packets[i].AQL, got.Packets[i].AQL, want.Packets[i].Name)
		require.Equal(t, want.Packets[i].IBAddr, got.Packets[i].IBAddr)
	}
	require.Equal(t, want.CmdBufSize, got.CmdBufSize)
	require.Equal(t, want.OutputSize, got.OutputSize)
	require.Len(t, got.Allocations, len(want.Allocations))
	for i := range want.Allocations {
		require.Equal(t, want.Allocations[i], got.Allocations[i])
	}
}

// Every golden PMC case, given to the command as an --events file.
func TestPacketsEventsMatchGoldens(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(sharedGolden(t), "*", "pmc_*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			want := loadGolden(t, f)
			var evs []map[string]any
			for _, e := range want.Events {
				evs = append(evs, map[string]any{"block": e.Block, "block_index": e.BlockIndex, "event_id": e.EventID, "flags": e.Flags, "note": "ignored"})
			}
			raw, err := json.Marshal(evs)
			require.NoError(t, err)
			path := filepath.Join(t.TempDir(), "events.json")
			require.NoError(t, os.WriteFile(path, raw, 0o600))
			got := runPacketsJSON(t, &packetsArgs{agent: agentSpec(want), events: path, format: "json", baseAddr: "0x100000000000"})
			requireSamePackets(t, want, got)
			require.JSONEq(t, string(want.IterateData), stripNames(t, got.IterateData, want.IterateData))
		})
	}
}

// stripNames keeps only the golden's keys of iterate_data records, so extra
// keys in our output do not matter.
func stripNames(t *testing.T, got, want json.RawMessage) string {
	var g, w []map[string]any
	require.NoError(t, json.Unmarshal(got, &g))
	require.NoError(t, json.Unmarshal(want, &w))
	require.Len(t, g, len(w))
	for i := range g {
		for k := range g[i] {
			if _, ok := w[i][k]; !ok {
				delete(g[i], k)
			}
		}
	}
	b, _ := json.Marshal(g)
	return string(b)
}

// Counter names give the same packets as the goldens' raw events.
func TestPacketsPMCNames(t *testing.T) {
	root := sharedGolden(t)
	tests := []struct {
		golden string
		pmc    []string
	}{
		{"gfx90a_mi210/pmc_mixed.json", []string{"SQ_WAVES", "SQ_BUSY_CYCLES", "GRBM_GUI_ACTIVE", "TA_TA_BUSY[0]", "TCC_HIT[0]"}},
		{"gfx942_mi300x/pmc_grbm_count_gui_active.json", []string{"GRBM_COUNT", "GRBM_GUI_ACTIVE"}},
		{"gfx1100_rx7900xtx/pmc_l2_hit_miss.json", []string{"GL2C_HIT[0]", "GL2C_MISS[0]", "GL2C_HIT[1]"}},
		{"gfx900_vega10/pmc_l2_hit_all_instances.json", []string{"TCC_HIT"}},
		{"gfx90a_mi210/pmc_sq_insts_valu_salu.json", []string{"SQ_INSTS_VALU", "SQ_INSTS_SALU"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			want := loadGolden(t, filepath.Join(root, tt.golden))
			got := runPacketsJSON(t, &packetsArgs{agent: agentSpec(want), pmc: tt.pmc, format: "json", baseAddr: "0x100000000000"})
			requireSamePackets(t, want, got)
		})
	}
}

func TestPacketsATTMatchesGoldens(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(sharedGolden(t), "*", "att_cu0_se1_64mb.json"))
	require.NoError(t, err)
	require.Len(t, files, 4)
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f)), func(t *testing.T) {
			want := loadGolden(t, f)
			got := runPacketsJSON(t, &packetsArgs{agent: agentSpec(want), att: true, format: "json", baseAddr: "0x100000000000",
				attTargetCU: "0", attSIMD: "0xF", attSEMask: "1", attBufferSize: "0x4000000",
				marker: "id=7,addr=0x7F1234560000,size=0x2000"})
			requireSamePackets(t, want, got)
			require.Equal(t, want.Marker.Packet, got.Marker.Packet)
		})
	}
}

func TestPacketsBinAndText(t *testing.T) {
	root := sharedGolden(t)
	base := filepath.Join(root, "gfx942_mi300x", "pmc_mixed")
	want := loadGolden(t, base+".json")
	var pmc []string
	for _, e := range want.Events {
		pmc = append(pmc, e.Counter+"["+itoa(int(e.BlockIndex))+"]")
	}
	var out bytes.Buffer
	require.NoError(t, runPackets(&out, &packetsArgs{agent: agentSpec(want), pmc: pmc, format: "bin", baseAddr: "0x100000000000"}))
	aqlBin, err := os.ReadFile(base + ".aql.bin")
	require.NoError(t, err)
	cmd, err := os.ReadFile(base + ".cmdbuf.bin")
	require.NoError(t, err)
	require.Equal(t, append(aqlBin, cmd...), out.Bytes())

	out.Reset()
	require.NoError(t, runPackets(&out, &packetsArgs{agent: "gfx942", pmc: []string{"GRBM_COUNT"}, format: "text", baseAddr: "0x100000000000"}))
	require.Contains(t, out.String(), "PRED_EXEC        exec_count=26 xcc_select_mask=0x80")
	require.Contains(t, out.String(), "COPY_DATA        REG GRBM_PERFCOUNTER0_LO(0xd040) -> MEM 0x100000000000 (32b, wr_confirm=0)")
}

func TestPacketsErrors(t *testing.T) {
	tests := []struct {
		name string
		args packetsArgs
		msg  string
	}{
		{"no agent", packetsArgs{pmc: []string{"SQ_WAVES"}}, "--agent is required"},
		{"bad arch", packetsArgs{agent: "gfx909", pmc: []string{"SQ_WAVES"}}, `unsupported GPU architecture "gfx909"`},
		{"unknown counter", packetsArgs{agent: "gfx90a", pmc: []string{"SQ_WAVE"}}, `did you mean "SQ_WAVES"?`},
		{"both inputs", packetsArgs{agent: "gfx90a"}, "give exactly one of --pmc NAMES, --events FILE or --att"},
		{"too many", packetsArgs{agent: "gfx90a", pmc: []string{"GRBM_COUNT", "GRBM_GUI_ACTIVE", "GRBM_CP_BUSY"}}, "pmc: GRBM_COUNT GRBM_GUI_ACTIVE\npmc: GRBM_CP_BUSY"},
		{"att buffer", packetsArgs{agent: "gfx1201", att: true, attTargetCU: "1", attSIMD: "0xF", attSEMask: "1", attBufferSize: "0x40000"}, "ATT buffer size 0x40000 gives 0x1000 bytes per shader engine; it must be at least 0x20000"},
		{"att target cu", packetsArgs{agent: "gfx90a", att: true, attTargetCU: "16", attSIMD: "0xF", attSEMask: "1", attBufferSize: "0x10000000"}, "--att-target-cu: ATT target CU 16 out of range 0..15"},
		{"bad format", packetsArgs{agent: "gfx90a", pmc: []string{"SQ_WAVES"}, format: "xml"}, `--format "xml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.args
			if a.format == "" {
				a.format = "json"
			}
			if a.baseAddr == "" {
				a.baseAddr = "0x100000000000"
			}
			require.ErrorContains(t, runPackets(&bytes.Buffer{}, &a), tt.msg)
		})
	}
	path := filepath.Join(t.TempDir(), "events.json")
	require.NoError(t, os.WriteFile(path, []byte(`[{"block": "SQ", "block_index": 0, "event_id": 5, "flags": 2}]`), 0o600))
	err := runPackets(&bytes.Buffer{}, &packetsArgs{agent: "gfx1201", events: path, format: "json", baseAddr: "0"})
	require.ErrorContains(t, err, "SQ accumulate flags 0x2 are not supported on gfx1201")
	require.NoError(t, os.WriteFile(path, []byte(`[{"block": "TCC", "block_index": 0, "event_id": 5}]`), 0o600))
	err = runPackets(&bytes.Buffer{}, &packetsArgs{agent: "gfx1100", events: path, format: "json", baseAddr: "0"})
	require.ErrorContains(t, err, `block "TCC" does not exist on gfx1100`)
}

func TestAvailCommand(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, writeAvail(&out, []string{"gfx90a"}, "", "", ""))
	want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "counters", "avail_gfx90a.txt"))
	require.NoError(t, err)
	require.Equal(t, string(want), out.String())

	out.Reset()
	require.NoError(t, writeAvail(&out, nil, "gfx942", "", filepath.Join("..", "..", "testdata", "counters", "extra.yaml")))
	require.True(t, strings.HasPrefix(out.String(), "GPU:0\nName:gfx942\n"))
	require.Contains(t, out.String(), "Counter_Name : WAVES_PER_ACTIVE_CYCLE\n")

	require.ErrorContains(t, writeAvail(&out, []string{"gfx909"}, "", "", ""), "unsupported GPU architecture")

	// $ROCPROFILER_METRICS_PATH's definitions replace the built-in ones.
	out.Reset()
	require.NoError(t, writeAvail(&out, []string{"gfx90a"}, "", filepath.Join("..", "..", "testdata", "counters", "metrics", "counter_defs.yaml"), ""))
	require.Contains(t, out.String(), "Counter_Name : SQC_DCACHE_INFLIGHT_LEVEL_ACCUM\n")
	require.Contains(t, out.String(), "Counter_Name : TCC_HIT[3]\n")
	require.NotContains(t, out.String(), "Counter_Name : GRBM_COUNT\n")
}

// As a user runs them: output on stdout, errors as one line with exit 1,
// command-line mistakes with exit 2.
func TestPacketsAndAvailBinary(t *testing.T) {
	base := filepath.Join(sharedGolden(t), "gfx90a_mi210", "pmc_sq_waves")
	r := runCLI(t, nil, "packets", "--agent", "gfx90a:xcc=1,se=8,cu=104,sa=1", "--pmc", "SQ_WAVES", "--format", "bin")
	require.Equal(t, 0, r.code, r.stderr)
	aqlBin, err := os.ReadFile(base + ".aql.bin")
	require.NoError(t, err)
	cmd, err := os.ReadFile(base + ".cmdbuf.bin")
	require.NoError(t, err)
	require.Equal(t, string(append(aqlBin, cmd...)), r.stdout)

	r = runCLI(t, nil, "packets", "--agent", "gfx90a", "--pmc", "SQ_WAVEZ")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, `rocprof-go: error: counter "SQ_WAVEZ" is not available on gfx90a; did you mean "SQ_WAVES"?`)

	r = runCLI(t, nil, "packets", "--pmc", "SQ_WAVES")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "--agent is required")

	r = runCLI(t, nil, "avail", "--arch", "gfx942")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "Counter_Name : SQ_WAVES\n")
	require.Contains(t, r.stdout, "Dimensions : DIMENSION_XCC[0:7] DIMENSION_INSTANCE[0:0] DIMENSION_SHADER_ENGINE[0:3]\n")

	r = runCLI(t, nil, "-L", "--virtual-gpu", "gfx908")
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, strings.HasPrefix(r.stdout, "GPU:0\nName:gfx908\n"), r.stdout[:min(len(r.stdout), 80)])
}
