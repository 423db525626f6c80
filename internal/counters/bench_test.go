package counters

import (
	"testing"

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
