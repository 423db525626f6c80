package aql

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/aql/pm4"
)

// The disassembler splits every golden IB into the same packets as the
// goldens' own decode, with the same opcodes and lengths.
func TestDisassembleGoldenIBs(t *testing.T) {
	type decoded struct {
		DW  int    `json:"dw"`
		Op  string `json:"op"`
		NDW int    `json:"ndw"`
	}
	type pkt struct {
		Name    string    `json:"name"`
		PM4     []string  `json:"pm4"`
		Decoded []decoded `json:"decoded"`
	}
	files, err := filepath.Glob(filepath.Join(goldenRoot(t), "*", "*_*.json"))
	require.NoError(t, err)
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "event_dimension_ids.json") {
			continue
		}
		var doc struct {
			Packets []pkt `json:"packets"`
			Marker  struct {
				Packet pkt `json:"packet"`
			} `json:"codeobj_marker"`
		}
		readJSON(t, f, &doc)
		pkts := doc.Packets
		if doc.Marker.Packet.Name != "" {
			pkts = append(pkts, doc.Marker.Packet)
		}
		for _, p := range pkts {
			got := pm4.Disassemble(hexDW(t, p.PM4), nil)
			require.Len(t, got, len(p.Decoded), "%s %s", f, p.Name)
			for i, d := range p.Decoded {
				require.Equal(t, d.DW, got[i].DW)
				require.Equal(t, d.NDW, len(got[i].Words))
				require.Equal(t, d.Op, got[i].Opcode.String(), "%s %s dw %d", f, p.Name, d.DW)
				n++
			}
		}
	}
	require.Greater(t, n, 5000)
}

func TestDisassembleBrokenStream(t *testing.T) {
	// A truncated packet and a non-type-3 word still decode, as RAW words.
	got := pm4.Format([]uint32{0xC0017900, 0x200, 0xE0000000, 0x12345678, 0xC0044000, 1}, func(r pm4.Reg) string {
		if r == RegGRBMGfxIndex {
			return "GRBM_GFX_INDEX"
		}
		return ""
	})
	require.Equal(t, "[   0] SET_UCONFIG_REG  GRBM_GFX_INDEX(0xc200) = 0xe0000000\n"+
		"[   3] RAW              RAW 0x12345678\n"+
		"[   4] RAW              RAW 0xc0044000\n"+
		"[   5] RAW              RAW 0x00000001\n", got)
}
