package testsys

import "slices"

// Median is the middle value of v (the mean of the two middle ones for an
// even count): what the benchmarks report over their rounds.
func Median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
