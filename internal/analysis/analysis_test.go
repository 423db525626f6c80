package analysis

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStatsMoments(t *testing.T) {
	s := NewStats(true)
	for _, v := range []int64{2, 4, 4, 4, 5, 5, 7, 9} {
		s.Add(v)
	}
	require.Equal(t, int64(8), s.Count)
	require.Equal(t, int64(40), s.Sum)
	require.Equal(t, int64(2), s.Min)
	require.Equal(t, int64(9), s.Max)
	require.InDelta(t, 5.0, s.Mean(), 1e-12)
	require.InDelta(t, math.Sqrt(32.0/7), s.StdDev(), 1e-12)
	require.Equal(t, 4.0, s.Quantile(0.5))
	require.Equal(t, 9.0, s.Quantile(0.95))

	one := NewStats(false)
	one.Add(10)
	require.Zero(t, one.StdDev())
	require.True(t, math.IsNaN(one.Quantile(0.5)))
}

func TestStatsQuantilesStayAccurateBeyondExactLimit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name string
		n    int
	}{{"exact", exactLimit}, {"buckets", 50 * exactLimit}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewStats(true)
			vals := make([]int64, c.n)
			for i := range vals {
				vals[i] = 1000 + rng.Int64N(1_000_000)
				s.Add(vals[i])
			}
			sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
			for _, q := range []float64{0.5, 0.95} {
				want := float64(vals[int(math.Ceil(q*float64(c.n)))-1])
				require.InEpsilon(t, want, s.Quantile(q), 0.001, "q=%v", q)
			}
			if c.n > exactLimit {
				require.Nil(t, s.values)
				require.Less(t, len(s.buckets), 8000)
			}
		})
	}
}

func TestStatsMergeEqualsOnePass(t *testing.T) {
	all, a, b := NewStats(true), NewStats(true), NewStats(true)
	for i := int64(0); i < 3*exactLimit; i++ {
		v := 100 + (i*7919)%1000
		all.Add(v)
		if i%3 == 0 {
			a.Add(v)
		} else {
			b.Add(v)
		}
	}
	a.Merge(b)
	require.Equal(t, all.Count, a.Count)
	require.Equal(t, all.Sum, a.Sum)
	require.Equal(t, all.Min, a.Min)
	require.Equal(t, all.Max, a.Max)
	require.InDelta(t, all.Mean(), a.Mean(), 1e-9)
	require.InDelta(t, all.StdDev(), a.StdDev(), 1e-6)
	require.InEpsilon(t, all.Quantile(0.5), a.Quantile(0.5), 0.001)

	empty := NewStats(true)
	empty.Merge(a)
	require.Equal(t, a.Count, empty.Count)
	require.InEpsilon(t, a.Quantile(0.95), empty.Quantile(0.95), 0.001)
}

func TestSplitRow(t *testing.T) {
	cases := []struct {
		line string
		want []string
	}{
		{`"a","b",1,2`, []string{"a", "b", "1", "2"}},
		{`"void f<int, 2>(int*)",5`, []string{"void f<int, 2>(int*)", "5"}},
		{`"bar "quoted"",7`, []string{`bar "quoted"`, "7"}},
		{`1,,"",3`, []string{"1", "", "", "3"}},
		{`1,2,`, []string{"1", "2", ""}},
		{`"end"`, []string{"end"}},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			got, open := splitRow(nil, c.line)
			require.Equal(t, c.want, got)
			require.False(t, open)
		})
	}
}

func TestAllocOperation(t *testing.T) {
	cases := []struct{ typ, level, want string }{
		{"ALLOC", "REAL", "MEMORY_ALLOCATION_ALLOCATE"},
		{"FREE", "REAL", "MEMORY_ALLOCATION_FREE"},
		{"ALLOC", "VIRTUAL", "MEMORY_ALLOCATION_VMEM_ALLOCATE"},
		{"FREE", "VIRTUAL", "MEMORY_ALLOCATION_VMEM_FREE"},
		{"ALLOC", "SCRATCH", "SCRATCH_MEMORY_ALLOC"},
		{"FREE", "SCRATCH", "SCRATCH_MEMORY_FREE"},
		{"RECLAIM", "SCRATCH", "SCRATCH_MEMORY_ASYNC_RECLAIM"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, AllocOperation(c.typ, c.level))
	}
}

func TestCategoryDomain(t *testing.T) {
	cases := map[string]Domain{"HIP_RUNTIME_API_EXT": HIP, "HIP_COMPILER_API": HIP, "HSA_AMD_EXT_API": HSA,
		"MARKER_CORE_RANGE_API": Marker, "RCCL_API": RCCL, "KERNEL_DISPATCH": Kernel, "ompt": "OMPT"}
	for c, want := range cases {
		require.Equal(t, want, CategoryDomain(c), c)
	}
}
