package request

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestATTRequestParsing(t *testing.T) {
	env := map[string]string{"ROCPROF_ADVANCED_THREAD_TRACE": "1", "ROCPROF_ATT_PARAM_TARGET_CU": "0x3",
		"ROCPROF_ATT_PARAM_BUFFER_SIZE": "0x1000000", "ROCPROF_ATT_PARAM_GPU_INDEX": "0, 2"}
	r, err := ParseATT(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, uint32(3), r.Config.TargetCU)
	require.Equal(t, uint64(0x1000000), r.Config.BufferSize)
	require.Equal(t, map[int]bool{0: true, 2: true}, r.GPUs)
	env["ROCPROF_ATT_PARAM_TARGET_CU"] = "99"
	_, err = ParseATT(func(k string) string { return env[k] })
	require.ErrorContains(t, err, "ROCPROF_ATT_PARAM_TARGET_CU")
	r, err = ParseATT(func(string) string { return "" })
	require.NoError(t, err)
	require.Nil(t, r)

	env = map[string]string{"ROCPROF_ADVANCED_THREAD_TRACE": "1", "ROCPROF_ATT_PARAM_SERIALIZE_ALL": "1",
		"ROCPROF_ATT_PARAM_PERFCOUNTERS": "sq_waves SQ_BUSY_CYCLES:3", "ROCPROF_ATT_PARAM_PERFCOUNTER_CTRL": "4"}
	r, err = ParseATT(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.True(t, r.SerializeAll)
	require.Equal(t, []ATTPerf{{"SQ_WAVES", 0xF}, {"SQ_BUSY_CYCLES", 3}}, r.Perf)
	require.Equal(t, uint32(4), r.PerfPeriod)
	env["ROCPROF_ATT_PARAM_PERFCOUNTERS"] = "SQ_WAVES:0"
	_, err = ParseATT(func(k string) string { return env[k] })
	require.ErrorContains(t, err, "SIMD mask")
}

func TestIterationRangeParsing(t *testing.T) {
	r, err := parseIterationRange("[1, 3, [5-8]]")
	require.NoError(t, err)
	require.Equal(t, [][2]uint64{{1, 1}, {3, 3}, {5, 8}}, r)
	r, err = parseIterationRange("[11-14], [4-5]")
	require.NoError(t, err)
	require.Equal(t, [][2]uint64{{4, 5}, {11, 14}}, r)
	r, err = parseIterationRange("")
	require.NoError(t, err)
	require.Empty(t, r)
	_, err = parseIterationRange("[1, x]")
	require.ErrorContains(t, err, `"x" is not a number`)
	_, err = parseIterationRange("[5-2]")
	require.ErrorContains(t, err, "A <= B")
}

func TestPMCRequestParsing(t *testing.T) {
	env := map[string]string{
		"ROCPROF_COUNTER_GROUPS":              "pmc: SQ_WAVES GRBM_COUNT\npmc: TCC_HIT,TCC_MISS\n",
		"ROCPROF_COUNTER_GROUPS_INTERVAL":     "3",
		"ROCPROF_KERNEL_FILTER_INCLUDE_REGEX": "vadd",
	}
	r, err := ParsePMC(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, [][]string{{"SQ_WAVES", "GRBM_COUNT"}, {"TCC_HIT", "TCC_MISS"}}, r.Groups)
	require.Equal(t, 3, r.Interval)
	require.True(t, r.Selects("_Z4vaddPKfS0_Pfi.kd"), "demangled: vadd(float const*, ...)")
	require.False(t, r.Selects("_Z5scalePffi.kd"))
	env["ROCPROF_COUNTER_GROUPS_INTERVAL"] = "0"
	_, err = ParsePMC(func(k string) string { return env[k] })
	require.ErrorContains(t, err, "not a positive integer")
	_, err = ParsePMC(func(string) string { return "" })
	require.ErrorContains(t, err, "no counters requested")
}

// With -T the filters match the truncated name, as rocprofv3 does.
func TestFiltersMatchTruncatedNames(t *testing.T) {
	req, err := ParsePMC(func(k string) string {
		return map[string]string{"ROCPROF_COUNTERS": "pmc: SQ_WAVES", "ROCPROF_TRUNCATE_KERNELS": "1",
			"ROCPROF_KERNEL_FILTER_EXCLUDE_REGEX": "^saxpy$"}[k]
	})
	require.NoError(t, err)
	require.False(t, req.Selects("_Z5saxpyIfEvPT_S1_i.kd"), "void saxpy<float>(float*, float*, int) is saxpy")
	require.True(t, req.Selects("_Z4vaddPKfS0_Pfi.kd"))
}

// The raw thread-trace files go beside the spools when rocprof-go launched
// the process, else to the output path.
func TestATTOutDir(t *testing.T) {
	env := map[string]string{"ROCPROF_ADVANCED_THREAD_TRACE": "1", "ROCPROF_OUTPUT_PATH": "/out"}
	r, err := ParseATT(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, "/out", r.OutDir)
	env["ROCPROF_GO_SPOOL_DIR"] = "/dev/shm/run/pass_1"
	r, err = ParseATT(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, "/dev/shm/run/pass_1/att", r.OutDir)
}
