package summary_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis"
	"github.com/rocprof-go/rocprof-go/internal/analysis/summary"
	"github.com/rocprof-go/rocprof-go/internal/output"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
)

// pcSampleRun writes the PC-sample fixture as a run's ROCpd database and
// CSV files and returns the database and the CSV directory.
func pcSampleRun(t *testing.T) (db, csvDir string) {
	spools := t.TempDir()
	outputtest.PCSampleSpool(t, spools)
	dir := t.TempDir()
	cfg := model.Config{Dir: dir, PrefixTemplate: "out", Formats: []model.Format{model.FormatCSV, output.FormatROCpd},
		PCInstructions: func(*model.PCSamples) model.PCInstructions { return outputtest.FakePCInstructions{} }}
	_, err := output.Write(cfg, spools)
	require.NoError(t, err)
	// The database apart, so that the CSV directory is a CSV run.
	db = filepath.Join(t.TempDir(), "results.db")
	require.NoError(t, os.Rename(filepath.Join(dir, "out_results.db"), db))
	return db, dir
}

// The hottest instructions per kernel: the PC offsets with the most
// samples, their text and share of the kernel's samples, from a ROCpd
// database (keyed by offset) and from CSV files (keyed by text: the CSV
// has no PC).
func TestSummaryHottestInstructions(t *testing.T) {
	db, csvDir := pcSampleRun(t)
	hot := func(input string, top int) string {
		s, err := summary.Build([]string{input}, summary.Options{TopInstructions: top})
		require.NoError(t, err)
		// No domain table of PC samples: they are no API instants.
		for _, tb := range s.Total.Tables {
			require.NotContains(t, string(tb.Domain), "PC_SAMPLING")
		}
		require.Equal(t, analysis.Kernel, s.Total.Tables[0].Domain)
		var b bytes.Buffer
		require.NoError(t, summary.Write(&b, s, "text"))
		out := b.String()
		i := strings.Index(out, "\nHOTTEST INSTRUCTIONS")
		require.GreaterOrEqual(t, i, 0, out)
		return out[i:]
	}
	va, scan := "vectorAdd_float(float*, float const*, float const*, int)          ", "void rocprim::detail::scan_kernel<false>(int*, int*, unsigned int)"
	head := `
HOTTEST INSTRUCTIONS (PC samples, most sampled per kernel):

KERNEL                                                             | KERNEL SAMPLES | OFFSET | INSTRUCTION                         | SAMPLES | PERCENT (OF KERNEL)
-------------------------------------------------------------------|----------------|--------|-------------------------------------|---------|--------------------
`
	require.Equal(t, head+
		va+" |              8 |   0x10 | s_nop 0x10                          |       4 |               50.00\n"+
		va+" |              8 |   0x20 | s_nop 0x20                          |       2 |               25.00\n"+
		va+" |              8 |   0x40 | s_nop 0x40                          |       1 |               12.50\n"+
		va+" |              8 |        | (PC 0x1234 in no known code object) |       1 |               12.50\n"+
		scan+" |              1 |   0x30 | s_nop 0x30                          |       1 |              100.00\n", hot(db, 4))
	// From CSV the offset is unknown (the instruction text is the key),
	// but an unrecognised PC's comment gives it.
	require.Equal(t, head+
		va+" |              8 |        | s_nop 0x10                          |       4 |               50.00\n"+
		va+" |              8 |        | s_nop 0x20                          |       2 |               25.00\n"+
		va+" |              8 |        | s_nop 0x40                          |       1 |               12.50\n"+
		va+" |              8 |        | (PC 0x1234 in no known code object) |       1 |               12.50\n"+
		scan+" |              1 |        | s_nop 0x30                          |       1 |              100.00\n", hot(csvDir, 4))
	// --top-instructions 1: the hottest of each kernel.
	require.Contains(t, hot(db, 1), va+" |              8 |   0x10 | s_nop 0x10  |       4 |               50.00\n"+
		scan+" |              1 |   0x30 | s_nop 0x30  |       1 |              100.00\n")
}

// The CSV and JSON renderings carry the same rows; names reach a terminal
// escaped.
func TestSummaryHottestInstructionsCSVAndJSON(t *testing.T) {
	db, _ := pcSampleRun(t)
	s, err := summary.Build([]string{db}, summary.Options{TopInstructions: 2})
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, summary.Write(&b, s, "csv"))
	var hot []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "hottest_instructions,") {
			hot = append(hot, l)
		}
	}
	require.Equal(t, []string{
		`hottest_instructions,PC_SAMPLING_HOST_TRAP,,,"vectorAdd_float(float*, float const*, float const*, int)",4,,,50.000000,,,,,s_nop 0x10,16,`,
		`hottest_instructions,PC_SAMPLING_HOST_TRAP,,,"vectorAdd_float(float*, float const*, float const*, int)",2,,,25.000000,,,,,s_nop 0x20,32,`,
		`hottest_instructions,PC_SAMPLING_HOST_TRAP,,,"void rocprim::detail::scan_kernel<false>(int*, int*, unsigned int)",1,,,100.000000,,,,,s_nop 0x30,48,`,
	}, hot)
	require.Len(t, s.HotInstructions, 2)
	require.Equal(t, summary.PCKernel{Kernel: "vectorAdd_float(float*, float const*, float const*, int)", Method: "host_trap",
		Samples: 8, Instructions: []summary.HotInstruction{
			{Offset: 0x10, HasOffset: true, Instruction: "s_nop 0x10", Comment: "k.cpp:16", Samples: 4, Percent: 50},
			{Offset: 0x20, HasOffset: true, Instruction: "s_nop 0x20", Comment: "k.cpp:32", Samples: 2, Percent: 25}}},
		s.HotInstructions[0])
	s.HotInstructions[0].Instructions[0].Instruction = "s_nop\x1b[2J"
	require.Equal(t, `s_nop\x1b[2J`, s.ForTerminal().HotInstructions[0].Instructions[0].Instruction)
	require.Equal(t, "s_nop\x1b[2J", s.HotInstructions[0].Instructions[0].Instruction, "the summary itself keeps the text")
}

// Stochastic samples add each instruction's top not-issued reasons, from
// the database and from pc_sampling_stochastic.csv alike.
func TestSummaryHottestInstructionsStallReasons(t *testing.T) {
	spools := t.TempDir()
	outputtest.PCSampleStochasticSpool(t, spools)
	dir := t.TempDir()
	cfg := model.Config{Dir: dir, PrefixTemplate: "out", Formats: []model.Format{model.FormatCSV, output.FormatROCpd},
		PCInstructions: func(*model.PCSamples) model.PCInstructions { return outputtest.FakePCInstructions{} }}
	_, err := output.Write(cfg, spools)
	require.NoError(t, err)
	db := filepath.Join(t.TempDir(), "results.db")
	require.NoError(t, os.Rename(filepath.Join(dir, "out_results.db"), db))
	for _, in := range []string{db, dir} {
		s, err := summary.Build([]string{in}, summary.Options{})
		require.NoError(t, err)
		require.Len(t, s.HotInstructions, 2)
		k := s.HotInstructions[0]
		require.Equal(t, "stochastic", k.Method)
		require.Equal(t, int64(6), k.Samples)
		require.Len(t, k.Instructions, 2)
		require.Equal(t, "s_nop 0x10", k.Instructions[0].Instruction)
		require.Equal(t, int64(4), k.Instructions[0].Samples)
		require.Equal(t, []summary.Stall{{Reason: "WAITCNT", Samples: 2, Percent: 200.0 / 3}, {Reason: "ALU_DEPENDENCY", Samples: 1, Percent: 100.0 / 3}},
			k.Instructions[0].Stalls)
		require.Equal(t, []summary.Stall{{Reason: "WAITCNT", Samples: 2, Percent: 100}}, k.Instructions[1].Stalls)
		require.Empty(t, s.HotInstructions[1].Instructions[0].Stalls, "scan_kernel's one sample issued")
		var b bytes.Buffer
		require.NoError(t, summary.Write(&b, s, "text"))
		require.Contains(t, b.String(), "| PERCENT (OF KERNEL) | STALL REASONS (OF NOT ISSUED)\n")
		require.Contains(t, b.String(), "|       4 |               66.67 | WAITCNT 66.7%, ALU_DEPENDENCY 33.3%\n")
		require.Contains(t, b.String(), "|       1 |              100.00 | (all issued)\n")
	}
}
