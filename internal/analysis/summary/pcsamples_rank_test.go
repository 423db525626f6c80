package summary_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
	"github.com/rocprof-go/rocprof-go/internal/analysis/summary"
	"github.com/rocprof-go/rocprof-go/internal/output"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
)

// twoRankPCJob writes a two-rank job with PC samples as one run's outputs
// (one file set per process: %pid%) in ROCpd and CSV, and returns the
// databases and the CSV directory. Rank 0 (pid 100): vectorAdd 0x10 x3,
// 0x20; scan_kernel 0x30. Rank 1 (pid 200): vectorAdd 0x20 x2, 0x40,
// 0x10; scan_kernel 0x30, 0x34.
func twoRankPCJob(t *testing.T) (dbs []string, csvDir string) {
	spools := t.TempDir()
	outputtest.PCSampleRankSpool(t, spools, 100, 0, map[uint64][]uint64{1: {0x10, 0x20, 0x10, 0x10}, 2: {0x30}})
	outputtest.PCSampleRankSpool(t, spools, 200, 1, map[uint64][]uint64{1: {0x20, 0x20}, 2: {0x34, 0x30}, 4: {0x40, 0x10}})
	dir := t.TempDir()
	cfg := model.Config{Dir: dir, PrefixTemplate: "%pid%", Formats: []model.Format{model.FormatCSV, output.FormatROCpd},
		PCInstructions: func(*model.PCSamples) model.PCInstructions { return outputtest.FakePCInstructions{} }}
	_, err := output.Write(cfg, spools)
	require.NoError(t, err)
	dbDir := t.TempDir()
	for _, pid := range []string{"100", "200"} {
		db := filepath.Join(dbDir, pid+"_results.db")
		require.NoError(t, os.Rename(filepath.Join(dir, pid+"_results.db"), db))
		dbs = append(dbs, db)
	}
	return dbs, dir
}

// --by-rank gives each rank's own hottest instructions, after its domain
// tables, from the databases (ranks from the processes' environment) and
// from the CSV files (processes from the files' <pid>_ prefix: the CSV
// holds no environment).
func TestSummaryHottestInstructionsByRank(t *testing.T) {
	dbs, csvDir := twoRankPCJob(t)
	hot := func(inputs []string) (*summary.Summary, string) {
		s, err := summary.Build(inputs, summary.Options{ByRank: true})
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, summary.Write(&b, s, "text"))
		// The hot tables: each title and the table after it.
		var tables []string
		parts := strings.Split(b.String(), "\n\n")
		for i, part := range parts {
			if strings.Contains(part, "HOTTEST INSTRUCTIONS") {
				tables = append(tables, part, parts[i+1])
			}
		}
		return s, strings.Join(tables, "\n\n")
	}
	va, scan := "vectorAdd_float(float*, float const*, float const*, int)          ", "void rocprim::detail::scan_kernel<false>(int*, int*, unsigned int)"
	head := "KERNEL                                                             | KERNEL SAMPLES | OFFSET | INSTRUCTION | SAMPLES | PERCENT (OF KERNEL)\n" +
		"-------------------------------------------------------------------|----------------|--------|-------------|---------|--------------------\n"
	table := func(offsets bool, rows ...string) string {
		out := head
		for _, r := range rows {
			if !offsets { // from CSV: no offset
				r = r[:len(va)+20] + "       " + r[len(va)+27:]
			}
			out += r + "\n"
		}
		return out
	}
	want := func(offsets bool, rank0, rank1 string) string {
		return "HOTTEST INSTRUCTIONS (PC samples, most sampled per kernel):\n\n" + table(offsets,
			va+" |              8 |   0x10 | s_nop 0x10  |       4 |               50.00",
			va+" |              8 |   0x20 | s_nop 0x20  |       3 |               37.50",
			va+" |              8 |   0x40 | s_nop 0x40  |       1 |               12.50",
			scan+" |              3 |   0x30 | s_nop 0x30  |       2 |               66.67",
			scan+" |              3 |   0x34 | s_nop 0x34  |       1 |               33.33") +
			"\n" + rank0 + ": HOTTEST INSTRUCTIONS (PC samples, most sampled per kernel):\n\n" + table(offsets,
			va+" |              4 |   0x10 | s_nop 0x10  |       3 |               75.00",
			va+" |              4 |   0x20 | s_nop 0x20  |       1 |               25.00",
			scan+" |              1 |   0x30 | s_nop 0x30  |       1 |              100.00") +
			"\n" + rank1 + ": HOTTEST INSTRUCTIONS (PC samples, most sampled per kernel):\n\n" + table(offsets,
			va+" |              4 |   0x20 | s_nop 0x20  |       2 |               50.00",
			va+" |              4 |   0x10 | s_nop 0x10  |       1 |               25.00",
			va+" |              4 |   0x40 | s_nop 0x40  |       1 |               25.00",
			scan+" |              2 |   0x30 | s_nop 0x30  |       1 |               50.00",
			scan+" |              2 |   0x34 | s_nop 0x34  |       1 |               50.00")
	}
	s, text := hot(dbs)
	require.Equal(t, want(true, "RANK 0 (PID 100@testhost)", "RANK 1 (PID 200@testhost)"), text)
	require.Len(t, s.ByRank, 2)
	require.Equal(t, "rank 1", s.ByRank[1].Process)

	// One merged database: each image is one process.
	merged := filepath.Join(t.TempDir(), "all.db")
	_, err := rocpdread.Merge(context.Background(), merged, dbs)
	require.NoError(t, err)
	_, text = hot([]string{merged})
	require.Equal(t, want(true, "RANK 0 (PID 100@testhost)", "RANK 1 (PID 200@testhost)"), text)

	_, text = hot([]string{csvDir})
	require.Equal(t, want(false, "PID 100", "PID 200"), text)

	// CSV: a rank's rows are Section by_rank_hottest_instructions with its
	// Process and Rank; JSON: each by_rank group's hottest_instructions.
	s, err = summary.Build(dbs, summary.Options{ByRank: true, TopInstructions: 1})
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, summary.Write(&b, s, "csv"))
	var rows []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "hottest_instructions,") {
			rows = append(rows, l)
		}
	}
	vaQ, scanQ := `"vectorAdd_float(float*, float const*, float const*, int)"`, `"void rocprim::detail::scan_kernel<false>(int*, int*, unsigned int)"`
	require.Equal(t, []string{
		`hottest_instructions,PC_SAMPLING_HOST_TRAP,,,` + vaQ + `,4,,,50.000000,,,,,s_nop 0x10,16,`,
		`hottest_instructions,PC_SAMPLING_HOST_TRAP,,,` + scanQ + `,2,,,66.666667,,,,,s_nop 0x30,48,`,
		`by_rank_hottest_instructions,PC_SAMPLING_HOST_TRAP,rank 0,0,` + vaQ + `,3,,,75.000000,,,,,s_nop 0x10,16,`,
		`by_rank_hottest_instructions,PC_SAMPLING_HOST_TRAP,rank 0,0,` + scanQ + `,1,,,100.000000,,,,,s_nop 0x30,48,`,
		`by_rank_hottest_instructions,PC_SAMPLING_HOST_TRAP,rank 1,1,` + vaQ + `,2,,,50.000000,,,,,s_nop 0x20,32,`,
		`by_rank_hottest_instructions,PC_SAMPLING_HOST_TRAP,rank 1,1,` + scanQ + `,1,,,50.000000,,,,,s_nop 0x30,48,`,
	}, rows)

	b.Reset()
	require.NoError(t, summary.Write(&b, s, "json"))
	var back struct {
		ByRank []struct {
			Process string             `json:"process"`
			Hot     []summary.PCKernel `json:"hottest_instructions"`
		} `json:"by_rank"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &back))
	require.Len(t, back.ByRank, 2)
	require.Equal(t, "rank 1", back.ByRank[1].Process)
	require.Equal(t, []summary.PCKernel{
		{Kernel: "vectorAdd_float(float*, float const*, float const*, int)", Method: "host_trap", Samples: 4,
			Instructions: []summary.HotInstruction{{Offset: 0x20, HasOffset: true, Instruction: "s_nop 0x20", Comment: "k.cpp:32", Samples: 2, Percent: 50}}},
		{Kernel: "void rocprim::detail::scan_kernel<false>(int*, int*, unsigned int)", Method: "host_trap", Samples: 2,
			Instructions: []summary.HotInstruction{{Offset: 0x30, HasOffset: true, Instruction: "s_nop 0x30", Comment: "k.cpp:48", Samples: 1, Percent: 50}}},
	}, back.ByRank[1].Hot)

	// Without --by-rank the groups are not built.
	s, err = summary.Build(dbs, summary.Options{})
	require.NoError(t, err)
	require.Empty(t, s.ByRank)
}
