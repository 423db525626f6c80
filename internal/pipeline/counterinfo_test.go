package pipeline

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/options"
)

// The run describes its counters from its definitions (JSON's counters,
// ROCpd's rocpd_info_pmc): a hardware counter's block and dimensions, a
// derived counter's expression; nothing for a name or architecture the
// definitions lack, and no describer for a run without counters.
func TestCounterDescriberUsesTheRunsDefinitions(t *testing.T) {
	require.Nil(t, counterDescriber(&options.Config{}))
	describe := counterDescriber(&options.Config{Pmc: []string{"SQ_WAVES"}})
	m, ok := describe("gfx90a", "SQ_WAVES")
	require.True(t, ok)
	require.Equal(t, "SQ", m.Block)
	require.False(t, m.Derived)
	require.Equal(t, []uint64{7, 3}, m.DimensionIDs) // DIMENSION_INSTANCE, DIMENSION_SHADER_ENGINE
	require.NotEmpty(t, m.Description)
	m, ok = describe("gfx90a", "GPU_UTIL")
	require.True(t, ok)
	require.True(t, m.Derived)
	require.Equal(t, "100*reduce(GRBM_GUI_ACTIVE,max)/reduce(GRBM_COUNT,max)", m.Expression)
	_, ok = describe("gfx90a", "TCC_HIT[3]")
	require.False(t, ok)
	_, ok = describe("gfx9999", "SQ_WAVES")
	require.False(t, ok)
}
