package csv

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCSVNumberFormats(t *testing.T) {
	cases := []struct {
		name string
		f    func([]byte, float64) []byte
		v    float64
		want string
	}{
		{"trace ≥1 fixed", appendTraceFloat, 16384, "16384.000000"},
		{"trace <1 scientific", appendTraceFloat, 0.25, "2.50000000e-01"},
		{"trace zero", appendTraceFloat, 0, "0.00000000e+00"},
		{"stats > 0.01 fixed", appendStatsFloat, 433.5, "433.500000"},
		{"stats small scientific", appendStatsFloat, 0.001, "1.00000000e-03"},
		{"percent ≥1", appendPercentage, 85.149, "85.15"},
		{"percent > 0.01", appendPercentage, 0.5, "0.5000"},
		{"percent tiny", appendPercentage, 0.001, "1.000e-03"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, string(tc.f(nil, tc.v)))
		})
	}
	require.Equal(t, `"0x00007ffb26354000"`, string(appendAddress(nil, 0x7ffb26354000)))
}

func TestAppendDecimal(t *testing.T) {
	for _, v := range []uint64{0, 7, 10, 42, 99, 100, 101, 1000, 12345, 1e18, 1<<64 - 1} {
		require.Equal(t, strconv.FormatUint(v, 10), string(appendDecimal([]byte{}, v)))
		require.Equal(t, "x"+strconv.FormatUint(v, 10), string(appendDecimal([]byte("x"), v)))
	}
}

func TestAppendPythonFloat(t *testing.T) {
	for v, want := range map[float64]string{100: "100.0", 0: "0.0", 66.66666666666667: "66.66666666666667",
		0.5: "0.5", 1e-05: "1e-05", 12.25: "12.25"} {
		require.Equal(t, want, string(appendPythonFloat(nil, v)))
	}
	require.Equal(t, "16384", string(appendV1Counter(nil, 16384)))
	require.Equal(t, "0.2500000000", string(appendV1Counter(nil, 0.25)))
}

// TestV1Registers: rocprof 5.2.3's vgpr = (granulated VGPRs + 1) × 4 and
// sgpr = (granulated SGPRs + 2) × 8 (gfx8: + 1), from rocprofv3's counts.
func TestV1Registers(t *testing.T) {
	for _, c := range []struct {
		arch                       string
		vgpr, agpr, sgpr, wv, wsgp uint32
	}{
		{"gfx900", 12, 0, 16, 12, 24},
		{"gfx906", 32, 0, 48, 32, 56},
		{"gfx908", 12, 12, 16, 12, 24}, // AGPRs mirror the VGPRs: field 2
		{"gfx90a", 8, 0, 16, 4, 24},    // one granule of 8 registers, no AGPRs
		{"gfx90a", 4, 4, 16, 4, 24},    // one granule: 4 arch, 4 accum
		{"gfx90a", 12, 4, 16, 8, 24},   // two granules
		{"gfx90a", 12, 20, 32, 16, 40}, // arch 12 + AGPRs: 32
		{"gfx942", 16, 0, 32, 8, 40},
		{"gfx803", 8, 0, 16, 8, 16},
		{"gfx1030", 8, 0, 128, 8, 16},
	} {
		v, s := v1Registers(c.arch, c.vgpr, c.agpr, c.sgpr)
		require.Equal(t, [2]uint32{c.wv, c.wsgp}, [2]uint32{v, s}, "%+v", c)
	}
}
