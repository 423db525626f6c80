package aql

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestATTTraces(t *testing.T) {
	tests := []struct {
		agent      string
		wptr       func(p *ATTPackets) uint32
		status     uint32
		wantSize   uint64
		wantErr    error
		wantHeader bool
	}{
		{"gfx90a", func(*ATTPackets) uint32 { return 100 }, 0, 3200, nil, true},
		{"gfx90a", func(*ATTPackets) uint32 { return 100 }, 0x80000000, 3200, ErrTraceFull, true},
		{"gfx90a", func(*ATTPackets) uint32 { return 100 }, 0x10000000, 3200, ErrTraceMemory, true},
		{"gfx90a", func(p *ATTPackets) uint32 { return uint32(p.SEStep/32) + 5 }, 0, 0x3FC1000, ErrTraceFull, true},
		// gfx11 counts from address 0: 0x100000001000/32 + 10 blocks, low 29 bits kept.
		{"gfx1100", func(p *ATTPackets) uint32 { return uint32((p.SEBase[0] + 320) / 32) }, 0, 320, nil, false},
		{"gfx1201", func(*ATTPackets) uint32 { return 7 }, 0, 224, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.agent, func(t *testing.T) {
			d, err := ParseAgent(tt.agent)
			require.NoError(t, err)
			cfg := RocprofATTConfig()
			cfg.TargetCU, cfg.BufferSize = 1, 0x4000000
			p, err := d.BuildATT(cfg, (&Arena{Next: 0x100000000000}).Alloc)
			require.NoError(t, err)
			ctl := make([]byte, 32*d.SE+0x100)
			binary.LittleEndian.PutUint32(ctl[0:], tt.status)
			binary.LittleEndian.PutUint32(ctl[8:], tt.wptr(p))
			traces, err := p.Traces(ctl)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
			}
			require.Len(t, traces, 1, "SE mask 1 traces SE 0 only")
			require.Equal(t, tt.wantSize, traces[0].Size)
			require.Equal(t, p.SEBase[0], traces[0].Addr)
			if tt.wantHeader {
				// legacy 0x11, version 4, SIMD mask 0xF, CU 1, SE 0
				require.Equal(t, []byte{0x11, 0x80, 0x1F, 0x00, 0, 0, 0, 0}, traces[0].Header)
			} else {
				require.Nil(t, traces[0].Header)
			}
		})
	}
	d, _ := ParseAgent("gfx90a")
	p, err := d.BuildATT(RocprofATTConfig(), (&Arena{}).Alloc)
	require.NoError(t, err)
	_, err = p.Traces(make([]byte, 8))
	require.ErrorContains(t, err, "control buffer has 8 bytes")
}
