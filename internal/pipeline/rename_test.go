package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
)

// TestKernelRenameWithoutMarkerTrace: --kernel-rename renames dispatches
// after their ROCTx range without --marker-trace, as rocprofv3 does: the
// ranges are recorded for the names and shown in no output. hip_calls_counts
// launches its six kernels inside push "outer" { push "inner" { ... } }.
func TestKernelRenameWithoutMarkerTrace(t *testing.T) {
	t.Setenv(launch.LibDirEnv, builtLibDir(t))
	app := sampleApp(t, "hip_calls_counts")
	out := t.TempDir()
	res, err := Run(context.Background(), Options{Stdout: &bytes.Buffer{}, Args: []string{"--virtual-gpu",
		"--kernel-rename", "--kernel-trace", "--stats", "-f", "csv", "json", "rocpd", "pftrace", "parquet",
		"-d", out, "-o", "run"}}, []string{app})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus)

	names := column(readCSV(t, filepath.Join(out, "run_kernel_trace.csv")), "Kernel_Name")
	require.Equal(t, []string{"inner"}, uniq(names))
	require.Len(t, names, 6)
	require.Equal(t, []string{"inner"}, column(readCSV(t, filepath.Join(out, "run_kernel_stats.csv")), "Name"))
	files := listFiles(t, out)
	for _, f := range files {
		require.NotContains(t, f, "marker", "no marker output without --marker-trace")
	}
	require.NotContains(t, column(readCSV(t, filepath.Join(out, "run_domain_stats.csv")), "Name"), "MARKER_API")

	db := filepath.Join(out, "run_results.db")
	require.Equal(t, "inner|6", sqlite3(t, db, "SELECT region, COUNT(*) FROM kernels GROUP BY region"))
	require.Equal(t, "0", sqlite3(t, db, "SELECT COUNT(*) FROM regions_and_samples WHERE category LIKE 'MARKER%'"))

	raw, err := os.ReadFile(filepath.Join(out, "run_results.json"))
	require.NoError(t, err)
	var doc struct {
		Tool []struct {
			Strings struct {
				Markers     []json.RawMessage `json:"marker_api"`
				Correlation struct {
					External []struct {
						Key   uint64 `json:"key"`
						Value string `json:"value"`
					} `json:"external"`
				} `json:"correlation_id"`
			} `json:"strings"`
			BufferRecords struct {
				Markers []json.RawMessage `json:"marker_api"`
				Kernels []struct {
					Correlation struct {
						External uint64 `json:"external"`
					} `json:"correlation_id"`
				} `json:"kernel_dispatch"`
			} `json:"buffer_records"`
		} `json:"rocprofiler-sdk-tool"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	p := doc.Tool[0]
	require.Empty(t, p.BufferRecords.Markers)
	require.Empty(t, p.Strings.Markers)
	inner := uint64(0)
	for _, e := range p.Strings.Correlation.External {
		if e.Value == "inner" {
			inner = e.Key
		}
	}
	require.NotZero(t, inner, "the range names renamed dispatches refer to")
	require.Len(t, p.BufferRecords.Kernels, 6)
	for _, k := range p.BufferRecords.Kernels {
		require.Equal(t, inner, k.Correlation.External)
	}
	trace, err := os.ReadFile(filepath.Join(out, "run_results.pftrace"))
	require.NoError(t, err)
	require.False(t, bytes.Contains(trace, []byte("marker_api")), "no marker slices")
	require.False(t, strings.Contains(strings.Join(files, " "), "marker_api.parquet"))
}
