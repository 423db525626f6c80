package counters

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/aql"
)

// From packets to a derived value: build the PMC packets for a request, fill
// the output buffer as the read IB would, decode it and evaluate.
func TestCollectAndEvaluate(t *testing.T) {
	db := loadDB(t, "gfx90a")
	p, err := db.Validate([]string{"GPU_UTIL", "SQ_WAVES", "MeanOccupancyPerCU"}, 0)
	require.NoError(t, err)
	arena := aql.Arena{Next: 0x100000000000}
	pk, err := db.Device.BuildPMC(p.Passes[0].Events, arena.Alloc)
	require.NoError(t, err)

	buf := make([]byte, pk.OutputSize)
	for _, s := range pk.Samples() {
		var v uint64
		switch {
		case s.Event.Block == aql.BlockGRBM && s.Event.EventID == 2: // GRBM_GUI_ACTIVE
			v = 600
		case s.Event.Block == aql.BlockGRBM && s.Event.EventID == 0: // GRBM_COUNT
			v = 800
		case s.Event.EventID == 4: // SQ_WAVES, per SE
			v = 10 + uint64(s.Coords[1].Value)
		case s.Event.Flags == uint32(aql.AccumHiRes): // accumulated SQ_LEVEL_WAVES
			v = 104 * 600 * 3 / 8
		}
		binary.LittleEndian.PutUint64(buf[s.Slot*8:], v)
	}
	samples, err := pk.Decode(buf)
	require.NoError(t, err)
	in := db.Collect(samples)
	require.Len(t, in["SQ_WAVES"], 8)
	require.Equal(t, 17.0, in["SQ_WAVES"][7].Value)
	require.Equal(t, 7, in["SQ_WAVES"][7].Pos.Get(DimShaderEngine))

	eval := func(name string) float64 {
		c, ok := db.Lookup(name)
		require.True(t, ok)
		r, err := db.Evaluate(c, in)
		require.NoError(t, err)
		require.Len(t, r, 1)
		return r[0].Value
	}
	require.Equal(t, 75.0, eval("GPU_UTIL")) // 100*600/800
	// sum over 8 SEs of 104*600*3/8, / 600 / CU_NUM(104) = 3
	require.Equal(t, 3.0, eval("MeanOccupancyPerCU"))

	_, err = pk.Decode(buf[:8])
	require.ErrorContains(t, err, "the packets need")
}

// The precomputed collect gives the evaluator what DB.Collect
// gives it, for counters over several blocks and dimensions.
func TestSampleMapMatchesCollect(t *testing.T) {
	db, err := ForAgent("gfx90a")
	require.NoError(t, err)
	names := []string{"SQ_WAVES", "GPU_UTIL", "TCC_HIT_sum", "SQ_INSTS_VALU"}
	plan, err := db.Validate(names, 0)
	require.NoError(t, err)
	arena := aql.Arena{Next: 0x10000}
	p, err := db.Device.BuildPMC(plan.Passes[0].Events, arena.Alloc)
	require.NoError(t, err)
	buf := make([]byte, p.OutputSize)
	for i := range buf {
		buf[i] = byte(i*7 + 3)
	}
	samples, err := p.Decode(buf)
	require.NoError(t, err)
	want := db.Collect(samples)
	m := db.PlanSamples(p)
	got := Inputs{"stale": {{Value: 1}}}
	m.Collect(buf, got)
	for _, n := range names {
		c, ok := db.Lookup(n)
		require.True(t, ok, n)
		w, err := db.Evaluate(c, want)
		require.NoError(t, err)
		h, err := db.Evaluate(c, got)
		require.NoError(t, err)
		require.Equal(t, w, h, n)
	}
}
