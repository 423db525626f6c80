package output

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
)

// TestSpilledOrderWritesTheSameFiles: with the record order spilled to disk
// from 3 records on (the ids' numbering through external sorts
// into a file-backed table, the out-of-order kinds' positions through
// sorted runs), every format's files are byte for byte those written with
// the order in memory: on the scale spool (threads' ids in blocks, calls
// and kernels out of spool order), on the mixed fixture (every domain) and
// on testdata's one-of-each spool (a recorder's, every record kind).
func TestSpilledOrderWritesTheSameFiles(t *testing.T) {
	spools := t.TempDir()
	outputtest.ScaleSpool(t, filepath.Join(spools, "rpg-4242-4242000000-0.spool"), 30_000)
	mixed := t.TempDir()
	outputtest.WriteSpools(t, mixed, []int32{101}, 3_000)
	oneOfEach := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "spool", "one-of-each.spool"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(oneOfEach, "one-of-each.spool"), data, 0o600))
	formats := []model.Format{model.FormatCSV, FormatJSON, FormatPerfetto, FormatOTF2, FormatROCpd, FormatParquet}
	for _, dir := range []string{spools, mixed, oneOfEach} {
		write := func() map[string]string {
			out := t.TempDir()
			_, err := Write(model.Config{Dir: out, PrefixTemplate: "o", Formats: formats, SpillDir: t.TempDir()}, dir)
			require.NoError(t, err)
			files := outputtest.ReadTree(t, out)
			for name := range files {
				if filepath.Ext(name) == ".otf2" || filepath.Ext(name) == ".def" {
					delete(files, name) // OTF2's random trace identifier
				}
			}
			return files
		}
		inMemory := write()
		restore := model.SetSpillThreshold(3)
		spilled := write()
		restore()
		require.Equal(t, len(inMemory), len(spilled))
		for name, want := range inMemory {
			require.True(t, want == spilled[name], "%s differs when the order is spilled", name)
		}
	}
}
