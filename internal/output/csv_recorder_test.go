package output

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// TestCSVFromRecorder goes the whole way: the C recorder writes spools in a
// process and its fork children, Write turns them into CSV files.
func TestCSVFromRecorder(t *testing.T) {
	t.Cleanup(spooltest.CleanupNative)
	const children, records = 2, 1000
	spools := t.TempDir()
	cmd := spooltest.DriverCommand(t, spools, "fork", "2", "1000")
	require.NoError(t, cmd.Run())
	out := t.TempDir()
	res, err := Write(model.Config{Dir: out, Formats: []model.Format{model.FormatCSV}, Stats: true,
		PrefixTemplate: "all"}, spools)
	require.NoError(t, err)
	require.Len(t, res.Processes, 1+children)
	rows := map[string]uint64{}
	for _, f := range res.Files {
		rows[f.Name] = f.Records
	}
	// The parent writes `children` threads of records, each child one.
	require.Equal(t, uint64(2*children*records), rows["hip_api_trace"])
	require.Equal(t, uint64(1), rows["hsa_api_trace"])
	require.Equal(t, uint64(1), rows["kernel_trace"])
	require.Equal(t, uint64(1), rows["counter_collection"])
	files := outputtest.ReadTree(t, out)
	require.Contains(t, files["all_kernel_trace.csv"],
		`"KERNEL_DISPATCH","Agent 1",1,2,`)
	require.Contains(t, files["all_kernel_trace.csv"],
		`,1,5,"addition_kernel(float*, float const*, float const*, int)",44,1000,2000,512,16,8,4,16,64,1,1,1024,1,1`)
	require.Contains(t, files["all_counter_collection.csv"], `"SQ_WAVES",16384.000000,1000,2000`)
	require.Contains(t, files["all_marker_api_trace.csv"], `"MARKER_CORE_RANGE_API","outer range",`)
	require.Contains(t, files["all_memory_allocation_trace.csv"], `"0x00007ffb26354000"`)
	require.True(t, strings.HasPrefix(files["all_hip_api_trace.csv"], `"Domain","Function"`))
	// The recorder wrote no name for function 0: the HIP function table the
	// output package knows (internal/hsa/hiptrace) names it.
	require.Contains(t, files["all_hip_api_trace.csv"], `"HIP_RUNTIME_API_EXT","hipCreateSurfaceObject",`)
}
