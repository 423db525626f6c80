package compare

import (
	"math"
	"sort"

	"github.com/rocprof-go/rocprof-go/internal/analysis"
)

// The Mann–Whitney U test (Wilcoxon rank-sum) decides whether one side's
// values tend to be larger than the other's without assuming any shape of
// their distributions — timings are skewed, multi-modal and heavy-tailed —
// as benchstat does for Go benchmarks.

// exactLimit is the most arrangements of the pooled sample the exact test
// enumerates (C(20,10) = 184,756); larger samples use the normal
// approximation, which is good there.
const exactLimit = 200_000

// mannWhitneyP returns the two-sided p-value of the U test for samples
// given as ascending (value, count) lists. Ties get mid-ranks. Small
// samples are tested exactly: every way of splitting the pooled ranks into
// groups of the two sizes is equally likely under the null hypothesis, and
// the p-value is the share of splits whose rank sum is at least as far from
// its expectation as the one observed. Larger ones use the normal
// approximation with the tie correction and a continuity correction.
func mannWhitneyP(x, y []analysis.ValueCount) float64 {
	n, m := total(x), total(y)
	if n == 0 || m == 0 {
		return 1
	}
	ranks, rx := midRanks(x, y)
	mean := float64(n) * float64(n+m+1) / 2
	if binomial(n+m, n) <= exactLimit {
		return exactP(ranks, int(n), math.Abs(rx-mean))
	}
	var ties float64
	for _, r := range ranks.counts {
		t := float64(r)
		ties += t*t*t - t
	}
	N := float64(n + m)
	variance := float64(n) * float64(m) / 12 * ((N + 1) - ties/(N*(N-1)))
	if variance <= 0 {
		return 1 // every value equal
	}
	z := (math.Abs(rx-mean) - 0.5) / math.Sqrt(variance)
	if z < 0 {
		return 1
	}
	return math.Min(1, math.Erfc(z/math.Sqrt2))
}

// pooledRanks is the pooled sample's distinct values' mid-ranks and counts.
type pooledRanks struct {
	ranks  []float64
	counts []int64
}

// midRanks ranks the pooled sample and returns x's rank sum.
func midRanks(x, y []analysis.ValueCount) (pooledRanks, float64) {
	var p pooledRanks
	var rx float64
	next := 1.0 // the rank the next value starts at
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		var v float64
		switch {
		case j >= len(y) || (i < len(x) && x[i].Value <= y[j].Value):
			v = x[i].Value
		default:
			v = y[j].Value
		}
		var cx, cy int64
		for i < len(x) && x[i].Value == v {
			cx += x[i].Count
			i++
		}
		for j < len(y) && y[j].Value == v {
			cy += y[j].Count
			j++
		}
		c := cx + cy
		r := next + float64(c-1)/2
		p.ranks = append(p.ranks, r)
		p.counts = append(p.counts, c)
		rx += r * float64(cx)
		next += float64(c)
	}
	return p, rx
}

// exactP enumerates how many of the pooled values fall in group x, value
// by distinct value (a multiset split is as likely as the number of ways
// to pick it), and sums the probability of rank sums at least dev from
// their mean.
func exactP(p pooledRanks, n int, dev float64) float64 {
	N := 0
	for _, c := range p.counts {
		N += int(c)
	}
	mean := float64(n) * float64(N+1) / 2
	// dist maps a rank sum (doubled, to keep mid-ranks integral) to the
	// number of ways of reaching it, for each number of values taken.
	type key struct {
		taken int
		sum2  int64
	}
	dist := map[key]float64{{0, 0}: 1}
	for d, c := range p.counts {
		r2 := int64(math.Round(2 * p.ranks[d]))
		next := map[key]float64{}
		for k, ways := range dist {
			for t := 0; t <= int(c) && k.taken+t <= n; t++ {
				next[key{k.taken + t, k.sum2 + int64(t)*r2}] += ways * binomial(c, int64(t))
			}
		}
		dist = next
	}
	var hit, all float64
	for k, ways := range dist {
		if k.taken != n {
			continue
		}
		all += ways
		if math.Abs(float64(k.sum2)/2-mean) >= dev-1e-9 {
			hit += ways
		}
	}
	if all == 0 {
		return 1
	}
	return math.Min(1, hit/all)
}

// minP is the smallest two-sided p-value the test can give for samples of
// n and m values: every value of one side below every value of the other.
func minP(n, m int64) float64 {
	if n == 0 || m == 0 {
		return 1
	}
	return math.Min(1, 2/binomial(n+m, n))
}

func binomial(n, k int64) float64 {
	if k < 0 || k > n {
		return 0
	}
	k = min(k, n-k)
	r := 1.0
	for i := int64(1); i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return math.Round(r)
}

func total(v []analysis.ValueCount) int64 {
	var n int64
	for _, x := range v {
		n += x.Count
	}
	return n
}

// valueCounts turns plain values into an ascending (value, count) list.
func valueCounts(v []float64) []analysis.ValueCount {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	var out []analysis.ValueCount
	for i, x := range s {
		if i > 0 && x == s[i-1] {
			out[len(out)-1].Count++
			continue
		}
		out = append(out, analysis.ValueCount{Value: x, Count: 1})
	}
	return out
}

// median of plain values (the mean of the middle two for an even count).
func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
