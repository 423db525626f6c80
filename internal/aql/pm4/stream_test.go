package pm4

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBuilders(t *testing.T) {
	tests := []struct {
		name  string
		build func(s *Stream)
		want  []uint32
	}{
		{"set uconfig", func(s *Stream) { s.SetUconfig(0xC200, 0xE0000000) }, []uint32{0xC0017900, 0x200, 0xE0000000}},
		{"set sh", func(s *Stream) { s.SetSh(0x2E0B, 1) }, []uint32{0xC0017600, 0x20B, 1}},
		{"partial flush", func(s *Stream) { s.EventWrite(EventCSPartialFlush) }, []uint32{0xC0004600, 0x407}},
		{"copy data", func(s *Stream) { s.CopyData(CopyControl(SelRegister, SelTCL2, CopyWrConfirm), 0xD9F4, 0, 0x20, 0x1000) },
			[]uint32{0xC0044000, 0x00100200, 0xD9F4, 0, 0x20, 0x1000}},
		{"wait reg mem", func(s *Stream) { s.WaitRegMem(3, 0, 0xD9F4, 0, 0, 0x3FC, 16) },
			[]uint32{0xC0053C00, 3, 0xD9F4, 0, 0, 0x3FC, 16}},
		// size256 is AQLprofile's rounding to 256-byte lines: ((addr%256+size)>>8) +
		// ceil(size/256) - floor(size/256).
		{"acquire gfx9", func(s *Stream) { s.AcquireMem(0x100000000, 1, false) },
			[]uint32{0xC0055800, 0x28C40000, 1, 0, 0x01000000, 0, 0x10}},
		{"acquire straddling", func(s *Stream) { s.AcquireMem(0x1000000FF, 2, true) },
			[]uint32{0xC0065800, 0, 2, 0, 0x01000000, 0, 0x10, 0x18000}},
		{"pred exec", func(s *Stream) {
			at := s.PredExec(1 << 3)
			s.SetUconfig(0xC200, 0)
			s.EndPredExec(at)
		}, []uint32{0xC0002300, 0x08000003, 0xC0017900, 0x200, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Stream
			tt.build(&s)
			require.Equal(t, tt.want, s.DW)
		})
	}
	require.Equal(t, uint32(0xC0023F00), IndirectBuffer)
}

func TestRegSpaces(t *testing.T) {
	require.True(t, Reg(0xC200).IsUconfig())
	require.False(t, Reg(0x2348).IsUconfig())
	require.True(t, Reg(0x2348).IsPrivConfig())
	require.False(t, Reg(0xD9F4).IsPrivConfig())
	require.Equal(t, "SET_UCONFIG_REG", OpSetUconfigReg.String())
	require.Equal(t, "OP_0x99", Opcode(0x99).String())
}
