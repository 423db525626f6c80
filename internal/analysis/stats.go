package analysis

import (
	"math"
	"sort"
)

// Stats accumulates durations of one name: exact count, sum, min, max and a
// numerically stable (Welford) mean and variance. With quantiles on it also
// answers median and p95 — exactly while it holds at most exactLimit
// values, then from a logarithmic histogram whose buckets are 0.1% wide, so
// memory stays bounded whatever the record count.
type Stats struct {
	Count    int64
	Sum      int64
	Min, Max int64
	mean, m2 float64

	quantiles bool
	values    []int64
	buckets   map[int32]int64
	zeros     int64
}

// exactLimit is how many values a Stats keeps before switching to buckets.
const exactLimit = 4096

// logGamma is the log of the histogram's bucket ratio: a value is reported within
// 0.05% of its true size.
var logGamma = math.Log1p(0.001)

// NewStats returns an accumulator; quantiles enables Quantile.
func NewStats(quantiles bool) *Stats { return &Stats{quantiles: quantiles} }

// Add records one duration in ns.
func (s *Stats) Add(v int64) {
	if s.Count == 0 || v < s.Min {
		s.Min = v
	}
	if s.Count == 0 || v > s.Max {
		s.Max = v
	}
	s.Count++
	s.Sum += v
	d := float64(v) - s.mean
	s.mean += d / float64(s.Count)
	s.m2 += d * (float64(v) - s.mean)
	if !s.quantiles {
		return
	}
	if s.buckets == nil {
		s.values = append(s.values, v)
		if len(s.values) > exactLimit {
			s.toBuckets()
		}
		return
	}
	s.addBucket(v, 1)
}

func (s *Stats) toBuckets() {
	s.buckets = map[int32]int64{}
	for _, v := range s.values {
		s.addBucket(v, 1)
	}
	s.values = nil
}

func (s *Stats) addBucket(v, n int64) {
	if v <= 0 {
		s.zeros += n
		return
	}
	s.buckets[int32(math.Ceil(math.Log(float64(v))/logGamma))] += n
}

// Merge adds another accumulator's values (Chan et al.'s parallel variance).
func (s *Stats) Merge(o *Stats) {
	if o.Count == 0 {
		return
	}
	if s.Count == 0 {
		q := s.quantiles
		*s = Stats{Count: o.Count, Sum: o.Sum, Min: o.Min, Max: o.Max, mean: o.mean, m2: o.m2, quantiles: q}
		if q {
			s.mergeQuantiles(o)
		}
		return
	}
	n := float64(s.Count + o.Count)
	d := o.mean - s.mean
	s.m2 += o.m2 + d*d*float64(s.Count)*float64(o.Count)/n
	s.mean += d * float64(o.Count) / n
	s.Count += o.Count
	s.Sum += o.Sum
	s.Min = min(s.Min, o.Min)
	s.Max = max(s.Max, o.Max)
	if s.quantiles {
		s.mergeQuantiles(o)
	}
}

func (s *Stats) mergeQuantiles(o *Stats) {
	if o.buckets == nil && s.buckets == nil && len(s.values)+len(o.values) <= exactLimit {
		s.values = append(s.values, o.values...)
		return
	}
	if s.buckets == nil {
		s.toBuckets()
	}
	for _, v := range o.values {
		s.addBucket(v, 1)
	}
	for k, n := range o.buckets {
		s.buckets[k] += n
	}
	s.zeros += o.zeros
}

// Mean returns the average duration, from the exact integer sum so it does
// not depend on the order values arrived in.
func (s *Stats) Mean() float64 {
	if s.Count == 0 {
		return 0
	}
	return float64(s.Sum) / float64(s.Count)
}

// StdDev returns the sample standard deviation (n-1), 0 for fewer than two
// values, as rocprofv3's stats do.
func (s *Stats) StdDev() float64 {
	if s.Count < 2 {
		return 0
	}
	return math.Sqrt(s.m2 / float64(s.Count-1))
}

// Quantile returns the nearest-rank q-quantile (0 < q <= 1); NaN when
// quantiles were not enabled or nothing was added.
func (s *Stats) Quantile(q float64) float64 {
	if !s.quantiles || s.Count == 0 {
		return math.NaN()
	}
	rank := int64(math.Ceil(q * float64(s.Count)))
	rank = min(max(rank, 1), s.Count)
	if s.buckets == nil {
		v := append([]int64(nil), s.values...)
		sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
		return float64(v[rank-1])
	}
	if rank <= s.zeros {
		return 0
	}
	keys := make([]int32, 0, len(s.buckets))
	for k := range s.buckets {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	seen := s.zeros
	for _, k := range keys {
		seen += s.buckets[k]
		if seen >= rank {
			// The bucket's geometric middle, clamped to what was seen.
			v := math.Exp((float64(k) - 0.5) * logGamma)
			return math.Min(math.Max(v, float64(s.Min)), float64(s.Max))
		}
	}
	return float64(s.Max)
}

// ValueCount is one value of a distribution and how often it occurred.
type ValueCount struct {
	Value float64
	Count int64
}

// Distribution returns the values added, ascending, with their counts:
// exact while the accumulator holds them, else one entry per histogram
// bucket at the bucket's geometric middle (within 0.05%). Nil when
// quantiles were not enabled.
func (s *Stats) Distribution() []ValueCount {
	if !s.quantiles || s.Count == 0 {
		return nil
	}
	var out []ValueCount
	if s.buckets == nil {
		v := append([]int64(nil), s.values...)
		sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
		for i, x := range v {
			if i > 0 && x == v[i-1] {
				out[len(out)-1].Count++
				continue
			}
			out = append(out, ValueCount{float64(x), 1})
		}
		return out
	}
	if s.zeros > 0 {
		out = append(out, ValueCount{0, s.zeros})
	}
	keys := make([]int32, 0, len(s.buckets))
	for k := range s.buckets {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		v := math.Min(math.Max(math.Exp((float64(k)-0.5)*logGamma), float64(s.Min)), float64(s.Max))
		out = append(out, ValueCount{v, s.buckets[k]})
	}
	return out
}
