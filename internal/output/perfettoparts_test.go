package output

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/output/perfetto"
)

// A Perfetto trace past the part size is listed part by part in the
// result (run.json's files), each with the records it shows, which sum to
// the group's; results.pftrace itself is not written.
func TestPerfettoPartsAreListed(t *testing.T) {
	dir := t.TempDir()
	spoolDir := filepath.Join(dir, "spools")
	require.NoError(t, os.Mkdir(spoolDir, 0o755))
	outputtest.WriteSpools(t, spoolDir, []int32{100, 200}, 200)
	out := filepath.Join(dir, "out")
	res, err := Write(model.Config{Dir: out, PrefixTemplate: "run", Formats: []model.Format{FormatPerfetto},
		PerfettoPartBytes: 32 << 10}, spoolDir)
	require.NoError(t, err)
	require.Len(t, res.Groups, 1)
	var parts []model.File
	for _, f := range res.Files {
		if f.Format == FormatPerfetto {
			parts = append(parts, f)
		}
	}
	require.Greater(t, len(parts), 2)
	var records uint64
	for i, f := range parts {
		require.Equal(t, perfetto.PartPath(filepath.Join(out, "run_results.pftrace"), i+1), f.Path)
		require.FileExists(t, f.Path)
		records += f.Records
	}
	require.Equal(t, res.Groups[0].Events, records)
	require.NoFileExists(t, filepath.Join(out, "run_results.pftrace"))
}
