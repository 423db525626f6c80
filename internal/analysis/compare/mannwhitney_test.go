package compare

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// bruteP is the exact two-sided p-value by brute force: every way of
// choosing which len(x) of the pooled values are x's, with mid-ranks.
func bruteP(x, y []float64) float64 {
	pool := append(append([]float64{}, x...), y...)
	sorted := append([]float64{}, pool...)
	sort.Float64s(sorted)
	rank := func(v float64) float64 {
		lo := sort.SearchFloat64s(sorted, v)
		hi := lo
		for hi < len(sorted) && sorted[hi] == v {
			hi++
		}
		return float64(lo+hi+1) / 2
	}
	n, N := len(x), len(pool)
	mean := float64(n) * float64(N+1) / 2
	obs := 0.0
	for _, v := range x {
		obs += rank(v)
	}
	dev := math.Abs(obs - mean)
	hit, all := 0, 0
	for mask := 0; mask < 1<<N; mask++ {
		if popcount(mask) != n {
			continue
		}
		s := 0.0
		for i := range N {
			if mask&(1<<i) != 0 {
				s += rank(pool[i])
			}
		}
		all++
		if math.Abs(s-mean) >= dev-1e-9 {
			hit++
		}
	}
	return float64(hit) / float64(all)
}

func popcount(v int) int {
	c := 0
	for ; v != 0; v &= v - 1 {
		c++
	}
	return c
}

func TestMannWhitneyExactMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n, m := 1+rng.IntN(7), 1+rng.IntN(7)
		levels := 2 + rng.IntN(12) // few levels: many ties
		var x, y []float64
		for range n {
			x = append(x, float64(rng.IntN(levels)))
		}
		for range m {
			y = append(y, float64(rng.IntN(levels)+rng.IntN(2)))
		}
		require.InDelta(t, bruteP(x, y), mannWhitneyP(valueCounts(x), valueCounts(y)), 1e-9, "trial %d: %v %v", trial, x, y)
	}
	// Known values: complete separation of 5 and 5 is 2/252; of 8 and 8, 2/12870.
	require.InDelta(t, 2.0/252, mannWhitneyP(valueCounts([]float64{1, 2, 3, 4, 5}), valueCounts([]float64{6, 7, 8, 9, 10})), 1e-12)
	require.InDelta(t, 2.0/12870, minP(8, 8), 1e-12)
	require.Equal(t, 1.0, mannWhitneyP(valueCounts([]float64{3, 3, 3}), valueCounts([]float64{3, 3, 3, 3})))
}

// Beyond the exact limit the normal approximation stays close to the
// exact answer (checked where both can be computed).
func TestMannWhitneyNormalApproximation(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		var x, y []float64
		for range 12 {
			x = append(x, math.Round(rng.NormFloat64()*10))
		}
		for range 12 {
			y = append(y, math.Round(rng.NormFloat64()*10+5))
		}
		ranks, rx := midRanks(valueCounts(x), valueCounts(y))
		exact := exactP(ranks, 12, math.Abs(rx-12*25/2.0))
		approx := mannWhitneyP(valueCounts(x), valueCounts(y)) // 24 values: C(24,12) > exactLimit
		require.InDelta(t, exact, approx, 0.01+0.1*exact)
	}
}
