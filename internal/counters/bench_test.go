package counters

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/aql"
)

// BenchmarkDerivedOver8Instances evaluates L2CacheHit
// (100*reduce(TCC_HIT,sum)/(reduce(TCC_HIT,sum)+reduce(TCC_MISS,sum))) over
// 8 TCC instances: the target is ≤ 1 µs.
func BenchmarkDerivedOver8Instances(b *testing.B) {
	dev, err := aql.ParseAgent("gfx90a")
	if err != nil {
		b.Fatal(err)
	}
	db, err := Load(dev)
	if err != nil {
		b.Fatal(err)
	}
	c, _ := db.Lookup("L2CacheHit")
	in := Inputs{"TCC_HIT": records(DimInstance, 1, 2, 3, 4, 5, 6, 7, 8), "TCC_MISS": records(DimInstance, 8, 7, 6, 5, 4, 3, 2, 1)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.Evaluate(c, in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPMCDecodeAndEvaluate is the shim's completion thread's Go work per
// profiled dispatch: decode the output buffer, collect, evaluate.
func BenchmarkPMCDecodeAndEvaluate(b *testing.B) {
	db, err := ForAgent("gfx90a")
	require.NoError(b, err)
	plan, err := db.Validate([]string{"SQ_WAVES", "GPU_UTIL"}, 0)
	require.NoError(b, err)
	var arena aql.Arena
	arena.Next = 0x10000
	p, err := db.Device.BuildPMC(plan.Passes[0].Events, arena.Alloc)
	require.NoError(b, err)
	buf := make([]byte, p.OutputSize)
	m := db.PlanSamples(p)
	in := Inputs{}
	var cs []*Counter
	for _, n := range []string{"SQ_WAVES", "GPU_UTIL"} {
		c, _ := db.Lookup(n)
		cs = append(cs, c)
	}
	b.ReportAllocs()
	for b.Loop() {
		m.Collect(buf, in)
		for _, c := range cs {
			if _, err := db.Evaluate(c, in); err != nil {
				b.Fatal(err)
			}
		}
	}
}
