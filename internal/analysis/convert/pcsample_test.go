package convert_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/convert"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
	"github.com/rocprof-go/rocprof-go/internal/output"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
)

// pcSampleRecords are results.json's PC-sample records and instruction
// tables.
func pcSampleRecords(t *testing.T, path string) (records []any, instructions, comments []string) {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc struct {
		Tool []struct {
			Strings struct {
				Instructions []string `json:"pc_sample_instructions"`
				Comments     []string `json:"pc_sample_comments"`
			} `json:"strings"`
			BufferRecords map[string][]any `json:"buffer_records"`
		} `json:"rocprofiler-sdk-tool"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	require.Len(t, doc.Tool, 1)
	p := doc.Tool[0]
	return p.BufferRecords["pc_sample_host_trap"], p.Strings.Instructions, p.Strings.Comments
}

// A database's PC samples come back through convert as the run's: the
// CSV's pc_sampling_host_trap.csv and JSON's pc_sample_host_trap records
// converted from the ROCpd database equal those written from the spool,
// instruction texts and comments included (stored, not disassembled
// again).
func TestConvertKeepsPCSamples(t *testing.T) {
	spoolDir := t.TempDir()
	outputtest.PCSampleSpool(t, spoolDir)
	run := t.TempDir()
	cfg := model.Config{Dir: run, PrefixTemplate: "out",
		Formats:        []model.Format{model.FormatCSV, output.FormatJSON, output.FormatROCpd},
		PCInstructions: func(*model.PCSamples) model.PCInstructions { return outputtest.FakePCInstructions{} }}
	_, err := output.Write(cfg, spoolDir)
	require.NoError(t, err)

	db, err := rocpdread.Open(filepath.Join(run, "out_results.db"))
	require.NoError(t, err)
	defer db.Close()
	conv := t.TempDir()
	res, err := convert.Run([]*rocpdread.DB{db}, convert.Options{Formats: []output.Format{output.FormatCSV, output.FormatJSON}, Dir: conv})
	require.NoError(t, err)
	require.Equal(t, 1, res.Spools)

	want := lines(t, filepath.Join(run, "out_pc_sampling_host_trap.csv"))
	require.Len(t, want, 10)
	require.Equal(t, `"Sample_Timestamp","Exec_Mask","Dispatch_Id","Instruction","Instruction_Comment","Correlation_Id"`, want[0])
	require.Equal(t, want, lines(t, filepath.Join(conv, "out_pc_sampling_host_trap.csv")))

	wr, wi, wc := pcSampleRecords(t, filepath.Join(run, "out_results.json"))
	gr, gi, gc := pcSampleRecords(t, filepath.Join(conv, "out_results.json"))
	require.Len(t, wr, 9)
	require.Equal(t, wr, gr)
	require.Equal(t, wi, gi)
	require.Equal(t, wc, gc)
	require.Equal(t, []string{"s_nop 0x10", "s_nop 0x20", "s_nop 0x30", "s_nop 0x40"}, gi)
}

// Stochastic samples come back too: pc_sampling_stochastic.csv converted
// from the database equals the run's.
func TestConvertKeepsStochasticPCSamples(t *testing.T) {
	spoolDir := t.TempDir()
	outputtest.PCSampleStochasticSpool(t, spoolDir)
	run := t.TempDir()
	cfg := model.Config{Dir: run, PrefixTemplate: "out", Formats: []model.Format{model.FormatCSV, output.FormatROCpd},
		PCInstructions: func(*model.PCSamples) model.PCInstructions { return outputtest.FakePCInstructions{} }}
	_, err := output.Write(cfg, spoolDir)
	require.NoError(t, err)
	db, err := rocpdread.Open(filepath.Join(run, "out_results.db"))
	require.NoError(t, err)
	defer db.Close()
	conv := t.TempDir()
	_, err = convert.Run([]*rocpdread.DB{db}, convert.Options{Formats: []output.Format{output.FormatCSV}, Dir: conv})
	require.NoError(t, err)
	want := lines(t, filepath.Join(run, "out_pc_sampling_stochastic.csv"))
	require.Len(t, want, 8)
	require.Equal(t, want, lines(t, filepath.Join(conv, "out_pc_sampling_stochastic.csv")))
	_, err = os.Stat(filepath.Join(conv, "out_pc_sampling_host_trap.csv"))
	require.True(t, os.IsNotExist(err))
}
