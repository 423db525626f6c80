package hiptrace

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output"
)

// readCSV returns the rows of one output file as maps keyed by column.
func readCSV(t *testing.T, path string) []map[string]string {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	var rows []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, col := range recs[0] {
			m[col] = r[i]
		}
		rows = append(rows, m)
	}
	return rows
}

// The acceptance check, through the project's CSV writer: exactly
// the app's calls in hip_api_trace.csv and marker_api_trace.csv, and every
// kernel_trace.csv row's Correlation_Id naming the hipLaunchKernel row that
// caused it.
func TestCSVHasExactCallsAndKernelsNameTheirLaunch(t *testing.T) {
	_, spools := run{app: "testdata/hip_calls_counts", preload: true, shim: true,
		env: []string{"ROCPROF_HIP_RUNTIME_API_TRACE=1", "ROCPROF_HIP_COMPILER_API_TRACE=1",
			"ROCPROF_MARKER_API_TRACE=1", "ROCPROF_KERNEL_TRACE=1"}}.exec(t)
	out := t.TempDir()
	_, err := output.Write(output.Config{Dir: out, PrefixTemplate: "run",
		Formats: []output.Format{output.FormatCSV}}, spools)
	require.NoError(t, err)

	hip := readCSV(t, filepath.Join(out, "run_hip_api_trace.csv"))
	got := map[string]map[string]int{}
	launchCorr := map[string]bool{}
	for _, r := range hip {
		if got[r["Domain"]] == nil {
			got[r["Domain"]] = map[string]int{}
		}
		got[r["Domain"]][r["Function"]]++
		if r["Function"] == "hipLaunchKernel" {
			launchCorr[r["Correlation_Id"]] = true
		}
	}
	require.Equal(t, map[string]map[string]int{
		"HIP_RUNTIME_API_EXT":  wantRuntime,
		"HIP_COMPILER_API_EXT": wantCompiler,
	}, got)

	var markers []string
	for _, r := range readCSV(t, filepath.Join(out, "run_marker_api_trace.csv")) {
		markers = append(markers, r["Domain"]+","+r["Function"])
		if r["Function"] == "after-kernels" {
			require.Equal(t, r["Start_Timestamp"], r["End_Timestamp"])
		}
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
	}, markers)

	kernels := readCSV(t, filepath.Join(out, "run_kernel_trace.csv"))
	require.Len(t, kernels, 6)
	seen := map[string]bool{}
	for _, k := range kernels {
		require.True(t, launchCorr[k["Correlation_Id"]], "kernel row with Correlation_Id %s", k["Correlation_Id"])
		seen[k["Correlation_Id"]] = true
	}
	require.Len(t, seen, 6, "one kernel per launch")
	var streams []string
	for _, k := range kernels {
		streams = append(streams, k["Stream_Id"])
	}
	require.ElementsMatch(t, []string{"0", "0", "0", "0", "1", "2"}, streams)
}
