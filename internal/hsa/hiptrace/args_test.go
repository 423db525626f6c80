package hiptrace

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/hipapi"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// argMap decodes a call's arguments into name -> value.
func argMap(t *testing.T, c tracing.APICall) map[string]string {
	args, err := hipapi.DecodeArgs(c.Function, c.Args)
	require.NoError(t, err)
	m := map[string]string{}
	for i, a := range args {
		require.Equal(t, i, a.Position)
		m[a.Name] = a.Value
	}
	return m
}

func TestHIPArgumentsRecordedWhenAsked(t *testing.T) {
	_, dir := run{app: "testdata/hip_calls_counts", preload: true,
		env: []string{"ROCPROF_HIP_RUNTIME_API_TRACE=1", "ROCPROF_OUTPUT_FORMAT=csv,rocpd"}}.exec(t)
	tr := readTrace(t, dir)
	var launches []map[string]string
	memcpyKinds := []string{}
	for _, c := range tr.calls {
		m := argMap(t, c)
		require.Len(t, m, len(hipapi.Params(c.Function)), tr.name(c))
		switch tr.name(c) {
		case "hipMalloc":
			require.Equal(t, "4096", m["size"])
			require.Regexp(t, "^0x[0-9a-f]+$", m["ptr"])
		case "hipMemcpy":
			require.Equal(t, "4096", m["sizeBytes"])
			memcpyKinds = append(memcpyKinds, m["kind"])
		case "hipLaunchKernel":
			launches = append(launches, m)
		}
	}
	// hipMemcpyHostToDevice = 1, hipMemcpyDeviceToHost = 2.
	require.Equal(t, []string{"1", "1", "2"}, memcpyKinds)
	require.Len(t, launches, 6)
	for i, m := range launches {
		require.Equal(t, "{4, 1, 1}", m["numBlocks"])
		require.Equal(t, "{256, 1, 1}", m["dimBlocks"])
		require.Equal(t, "0", m["sharedMemBytes"])
		if i < 4 {
			require.Equal(t, "0x0", m["stream"])
		} else {
			require.NotEqual(t, "0x0", m["stream"], "arguments keep the handle itself")
		}
	}

	// CSV alone does not show arguments: none are recorded.
	_, dir = run{app: "testdata/hip_calls_counts", preload: true,
		env: []string{"ROCPROF_HIP_RUNTIME_API_TRACE=1", "ROCPROF_OUTPUT_FORMAT=csv"}}.exec(t)
	for _, c := range readTrace(t, dir).calls {
		require.Empty(t, c.Args)
	}
}
