package aql

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// The converted tables agree with the shared blocks.json for all ten
// architectures, and the sample counts computed from the agent and the block
// attributes equal AQLprofile's precomputed samples_per_xcc and output_bytes.
func TestTablesMatchSharedBlocks(t *testing.T) {
	var all map[string]any
	readJSON(t, filepath.Join(goldenRoot(t), "blocks.json"), &all)
	labels := 0
	for label, v := range all {
		if label == "_doc" {
			continue
		}
		labels++
		a := v.(map[string]any)
		num := func(k string) int { return int(a[k].(float64)) }
		d, err := NewDevice(Agent{GfxIP: a["gfxip"].(string), XCC: num("xcc_num"), SE: num("se_num"), CU: num("cu_num"), SAPerSE: num("shader_arrays_per_se")})
		require.NoError(t, err, label)
		require.Equal(t, num("num_wgps_per_sa"), d.WGPPerSA(), label)
		require.Equal(t, num("gpu_id_enum"), d.Table.GpuID, label)
		blocks := a["blocks"].([]any)
		require.Len(t, d.Table.Blocks, len(blocks), label)
		for _, bv := range blocks {
			b := bv.(map[string]any)
			blk, ok := d.Table.BlockByID(BlockID(b["block_name_enum"].(float64)))
			require.True(t, ok)
			require.Equal(t, b["name"], blk.Name)
			require.Equal(t, int(b["samples_per_xcc"].(float64)), d.SamplesPerXCC(blk), "%s %s", label, blk.Name)
			require.Equal(t, int(b["output_bytes"].(float64)), d.BytesNeeded(blk), "%s %s", label, blk.Name)
			attr, err := strconv.ParseUint(b["attr"].(string), 0, 32)
			require.NoError(t, err)
			require.Equal(t, Attr(attr), blk.Attr)
			require.Len(t, blk.Regs, len(b["counters"].([]any)))
			sv := b["select_value"].(map[string]any)
			for k, ev := range map[string]uint32{"ev0": 0, "ev1": 1, "ev_max": blk.EventIDMax} {
				want, err := strconv.ParseUint(sv[k].(string), 0, 32)
				require.NoError(t, err)
				require.Equal(t, uint32(want), blk.SelectValue(ev), "%s %s %s", label, blk.Name, k)
			}
		}
	}
	require.Equal(t, 10, labels)
}

func TestParseAgent(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{in: "gfx90a", want: "gfx90a:xcc=1,se=8,cu=104,sa=1"},
		{in: "gfx942", want: "gfx942:xcc=8,se=32,cu=304,sa=1"},
		{in: "gfx942:xcc=1,se=4,cu=38", want: "gfx942:xcc=1,se=4,cu=38,sa=1"},
		{in: "gfx1101:se=3,cu=60", want: "gfx1101:xcc=1,se=3,cu=60,sa=2"},
		{in: "gfx909", err: `unsupported GPU architecture "gfx909"`},
		{in: "gfx90c", err: `unsupported GPU architecture "gfx90c"`},
		{in: "gfx90a:cu=0", err: "key=positive-integer"},
		{in: "gfx90a:gpus=2", err: `unknown key "gpus"`},
		{in: "gfx942:xcc=3,se=32", err: "not a multiple of xcc=3"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			d, err := ParseAgent(tt.in)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, d.String())
		})
	}
}
