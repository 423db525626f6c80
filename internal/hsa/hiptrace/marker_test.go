package hiptrace

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/ranges"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// row is a marker as marker_api_trace.csv shows it: Domain, Function (the
// message for marks and ranges, else the API name).
func row(m marker) string {
	f := m.Function.String()
	if m.Function.CarriesMessage() {
		f = m.Msg
	}
	return m.Domain.String() + "," + f
}

func TestMarkerRecordsFollowRocprofv3(t *testing.T) {
	out, dir := run{app: "testdata/hip_calls_counts", preload: true, env: allHIP}.exec(t)
	tr := readTrace(t, dir)
	var rows []string
	byRow := map[string]marker{}
	for _, m := range tr.markers {
		rows = append(rows, row(m))
		byRow[row(m)] = m
	}
	require.ElementsMatch(t, []string{
		"MARKER_NAME_API,roctxNameOsThread",
		"MARKER_CORE_RANGE_API,outer",
		"MARKER_CORE_RANGE_API,inner",
		"MARKER_CORE_RANGE_API,after-kernels",
		"MARKER_CORE_RANGE_API,process-range",
		"MARKER_CORE_RANGE_API,from-thread",
		"MARKER_CORE_API,roctxGetThreadId",
		"MARKER_CONTROL_API,roctxProfilerPause",
		"MARKER_CONTROL_API,roctxProfilerResume",
	}, rows)

	main := tr.calls[0].TID
	outer, inner := byRow["MARKER_CORE_RANGE_API,outer"], byRow["MARKER_CORE_RANGE_API,inner"]
	require.Equal(t, tracing.MarkerThreadRange, outer.Function)
	require.Equal(t, main, outer.TID)
	require.Equal(t, main, inner.TID)
	require.Less(t, outer.Start, inner.Start, "inner is pushed after outer")
	require.Less(t, inner.End, outer.End, "and popped before it")
	require.Less(t, outer.CorrelationID, inner.CorrelationID, "a range carries its push's id")
	// The six launches happen inside "inner"; the allocations before it.
	for _, c := range tr.calls {
		switch tr.name(c) {
		case "hipLaunchKernel":
			require.True(t, inner.Start < c.Start && c.End < inner.End)
		case "hipMalloc":
			require.True(t, outer.Start < c.Start && c.End < inner.Start)
		}
	}
	require.Equal(t, "main", byRow["MARKER_NAME_API,roctxNameOsThread"].Msg)

	// --kernel-rename's rule: a HIP call (and the dispatches under it, which
	// carry its id) belongs to the innermost range of its thread whose push
	// and pop ids enclose its id.
	wantRange := map[string]string{"hipLaunchKernel": "inner", "hipStreamCreate": "inner",
		"hipMalloc": "outer", "hipMemcpy": "outer", "hipDeviceSynchronize": "outer", "hipFree": ""}
	for _, c := range tr.calls {
		want, listed := wantRange[tr.name(c)]
		if !listed {
			continue
		}
		got, _ := innermostRange(tr, c.TID, c.CorrelationID)
		require.Equal(t, want, got, tr.name(c))
	}

	mark := byRow["MARKER_CORE_RANGE_API,after-kernels"]
	require.Equal(t, tracing.MarkerMark, mark.Function)
	require.Equal(t, mark.Start, mark.End, "a mark is an instant")
	require.True(t, inner.End <= mark.Start && mark.End <= outer.End)

	// The process range starts on main and stops on the other thread, which
	// also marked and asked for its id.
	pr := byRow["MARKER_CORE_RANGE_API,process-range"]
	other := byRow["MARKER_CORE_API,roctxGetThreadId"].TID
	require.Equal(t, tracing.MarkerProcessRange, pr.Function)
	require.EqualValues(t, 1, pr.RangeID)
	require.Equal(t, other, pr.TID)
	require.NotEqual(t, main, other)
	require.Equal(t, other, byRow["MARKER_CORE_RANGE_API,from-thread"].TID)
	require.Contains(t, out, fmt.Sprintf("other_tid=%d", other), "roctxGetThreadId returns the OS tid")
	require.Less(t, pr.Start, byRow["MARKER_CORE_RANGE_API,from-thread"].Start)
}

// Without --marker-trace the interposers forward to the app's ROCTx library:
// same return values, nothing recorded.
func TestMarkersOffForwardToTheLibrary(t *testing.T) {
	plain, _ := run{app: "testdata/hip_calls_counts"}.exec(t)
	out, dir := run{app: "testdata/hip_calls_counts", preload: true,
		env: []string{"ROCPROF_HIP_RUNTIME_API_TRACE=1"}}.exec(t)
	require.Contains(t, plain, countsOut)
	require.Contains(t, out, countsOut)
	require.Empty(t, readTrace(t, dir).markers)
}

// An app built for roctracer's legacy ROCTx, linked against libroctx64, is
// traced the same way (the preload library's definitions come first).
func TestLegacyROCTxAppIsTraced(t *testing.T) {
	plain, _ := run{app: "testdata/roctx_legacy"}.exec(t)
	out, dir := run{app: "testdata/roctx_legacy", preload: true,
		env: []string{"ROCPROF_MARKER_API_TRACE=1"}}.exec(t)
	const want = "version=4.1 level=0 popped=0 id=1"
	require.Contains(t, plain, want)
	require.Contains(t, out, want)
	tr := readTrace(t, dir)
	var rows []string
	for _, m := range tr.markers {
		rows = append(rows, row(m)+","+m.Function.String())
	}
	require.ElementsMatch(t, []string{
		"MARKER_CORE_RANGE_API,legacy-mark,roctxMarkA",
		"MARKER_CORE_RANGE_API,legacy-range,roctxThreadRangeA",
		"MARKER_CORE_RANGE_API,legacy-start,roctxProcessRangeA",
	}, rows)
}

// innermostRange is --kernel-rename's lookup (package ranges): the message
// of the innermost push/pop range on thread tid enclosing correlation id
// corr.
func innermostRange(tr *trace, tid uint32, corr uint64) (string, bool) {
	x := ranges.New()
	for _, m := range tr.markers {
		if m.Function == tracing.MarkerThreadRange {
			x.Add(m.TID, m.CorrelationID, m.RangeID, m.Msg)
		}
	}
	return x.Find(tid, corr)
}
