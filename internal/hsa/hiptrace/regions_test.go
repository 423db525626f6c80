package hiptrace

import (
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// --selected-regions: only the calls between roctxProfilerResume(0) and
// roctxProfilerPause(0) are recorded; the control markers always are.
func TestSelectedRegions(t *testing.T) {
	env := []string{"ROCPROF_HIP_RUNTIME_API_TRACE=1", "ROCPROF_MARKER_API_TRACE=1",
		"ROCPROF_SELECTED_REGIONS=1"}
	out, dir := run{app: "testdata/hip_calls_regions", preload: true, env: env}.exec(t)
	require.Contains(t, out, "failures=0")
	tr := readTrace(t, dir)
	require.Equal(t, map[string]int{"hipGetDevice": 5}, tr.count(tracing.DomainHIPRuntime))
	require.Len(t, tr.markers, 2)
	resume, pause := tr.markers[0], tr.markers[1]
	require.Equal(t, tracing.MarkerProfilerResume, resume.Function)
	require.Equal(t, tracing.MarkerProfilerPause, pause.Function)
	for _, c := range tr.calls {
		require.True(t, resume.End <= c.Start && c.End <= pause.Start)
	}

	// Without the option, marker tracing makes the calls act as in
	// rocprofv3 (issue 24): Resume starts what runs already, Pause stops
	// everything, so the 7 calls after it are not recorded.
	_, dir = run{app: "testdata/hip_calls_regions", preload: true, env: env[:2]}.exec(t)
	tr = readTrace(t, dir)
	require.Equal(t, map[string]int{"hipGetDevice": 8}, tr.count(tracing.DomainHIPRuntime))
	require.Len(t, tr.markers, 2, "the Resume and the Pause themselves")

	// Without marker tracing nor the option, every call is there.
	_, dir = run{app: "testdata/hip_calls_regions", preload: true, env: env[:1]}.exec(t)
	require.Equal(t, map[string]int{"hipGetDevice": 15}, readTrace(t, dir).count(tracing.DomainHIPRuntime))

	// Without marker tracing the region still selects.
	_, dir = run{app: "testdata/hip_calls_regions", preload: true,
		env: []string{env[0], env[2]}}.exec(t)
	tr = readTrace(t, dir)
	require.Equal(t, map[string]int{"hipGetDevice": 5}, tr.count(tracing.DomainHIPRuntime))
	require.Empty(t, tr.markers)
}

var periodOut = regexp.MustCompile(`start=(\d+) end=(\d+) calls=(\d+)`)

// --collection-period 150ms:50ms:forever over a 1 s loop of calls made
// every ~0.2 ms: the recorded calls fall into separate bursts no longer than
// the 50 ms window (plus scheduling slack), separated by ~150 ms gaps. The
// long gaps keep a stall inside a window (this machine is shared) from
// passing for a gap.
func TestCollectionPeriod(t *testing.T) {
	const window, gap, slack = 50 * time.Millisecond, 150 * time.Millisecond, 40 * time.Millisecond
	out, dir := run{app: "testdata/hip_calls_period", args: []string{"1000"}, preload: true,
		env: []string{"ROCPROF_HIP_RUNTIME_API_TRACE=1",
			"ROCPROF_COLLECTION_PERIOD=150000000:50000000:0"}}.exec(t)
	m := periodOut.FindStringSubmatch(out)
	require.NotNil(t, m, out)
	total, _ := strconv.Atoi(m[3])
	loopStart, _ := strconv.ParseUint(m[1], 10, 64)

	tr := readTrace(t, dir)
	var starts []uint64
	for _, c := range tr.calls {
		if tr.name(c) == "hipGetDevice" && c.Start >= loopStart {
			starts = append(starts, c.Start)
		}
	}
	slices.Sort(starts)
	require.NotEmpty(t, starts)
	require.Less(t, len(starts), total, "calls outside the windows are not recorded")

	var bursts [][2]uint64
	for i, s := range starts {
		if i == 0 || time.Duration(s-starts[i-1]) > gap-window {
			bursts = append(bursts, [2]uint64{s, s})
		}
		bursts[len(bursts)-1][1] = s
	}
	require.GreaterOrEqual(t, len(bursts), 3, "1 s holds at least 4 windows of 200 ms")
	for _, b := range bursts {
		require.LessOrEqual(t, time.Duration(b[1]-b[0]), window+slack)
	}
	for i := 1; i < len(bursts); i++ {
		require.GreaterOrEqual(t, time.Duration(bursts[i][0]-bursts[i-1][1]), gap-slack)
	}
}
