package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
)

// pcsOne is the one file of a run's output matching *_suffix.
func pcsOne(t *testing.T, dir, suffix string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*", "*_"+suffix))
	require.Len(t, m, 1, "%s in %s", suffix, dir)
	return m[0]
}

// pcsHottest is summary's HOTTEST INSTRUCTIONS section (the top 3) of
// input, a database or a directory of CSV files.
func pcsHottest(t *testing.T, cli, input string) string {
	t.Helper()
	out, err := exec.Command(cli, "summary", "-i", input, "--top-instructions", "3").CombinedOutput()
	require.NoError(t, err, "%s", out)
	i := strings.Index(string(out), "HOTTEST INSTRUCTIONS")
	require.GreaterOrEqual(t, i, 0, "%s", out)
	return string(out[i:])
}

// pcsCSVDir copies the CSV files of a run's output directory (by suffix)
// into a directory of one output set, apart from the run's database.
func pcsCSVDir(t *testing.T, dir string, suffixes ...string) string {
	t.Helper()
	csvDir := t.TempDir()
	for _, f := range suffixes {
		b, err := os.ReadFile(pcsOne(t, dir, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(csvDir, "run_"+f), b, 0o644))
	}
	return csvDir
}

// readJSONFile decodes the JSON file at path into v.
func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, v), path)
}

// Host-trap samples through the CLI into ROCpd, Parquet and Perfetto
// beside the CSV (ROCm 6.4, virtual gfx90a, tiny_kernels: 10 samples),
// each format holding the CSV's samples; then summary's hottest
// instructions from the database and from the CSV directory, and convert
// of the database back to the CSV file.
func TestPCSampleOutputsThroughCLI(t *testing.T) {
	cli := shippedBinary(t)
	onRuntimes(t, []string{"6.4"}, func(t *testing.T, r rocmmatrix.Runtime, cache string) {
		dir := t.TempDir()
		stderr, code := shippedOnRuntime(t, r, cli, cache, 3*time.Minute, nil, "--virtual-gpu=gfx90a",
			"--pc-sampling-beta-enabled", "--pc-sampling-method", "host_trap", "--pc-sampling-unit", "time",
			"--pc-sampling-interval", "1", "--kernel-trace", "-f", "csv", "rocpd", "parquet", "pftrace", "-d", dir,
			"--", filepath.Join(r.Apps, "tiny_kernels"), "5", "sync")
		require.Equal(t, 0, code, stderr)

		rows := pcsRows(t, dir, "pc_sampling_host_trap.csv")
		require.Len(t, rows, 10, "2 samples x 5 dispatches (docs/pc-sampling.md)")
		var csvKeys []string
		for _, s := range rows {
			csvKeys = append(csvKeys, s["Sample_Timestamp"]+"|"+s["Dispatch_Id"]+"|"+s["Correlation_Id"]+"|"+s["Instruction"])
		}
		// ROCpd: the same samples, in the same order.
		db := pcsOne(t, dir, "results.db")
		got := outputtest.SQLite3CLI(t, db, `SELECT timestamp || '|' || json_extract(extdata, '$.dispatch_id') || '|' ||
		stack_id || '|' || json_extract(extdata, '$.instruction') FROM samples WHERE category = 'PC_SAMPLING_HOST_TRAP' ORDER BY id`)
		require.Equal(t, csvKeys, strings.Split(got, "\n"))
		// Parquet.
		pq := pcsOne(t, dir, "pc_sampling_host_trap.parquet")
		got = outputtest.DuckDB(t, fmt.Sprintf(`SELECT string_agg(concat_ws('|', timestamp_ns, dispatch_id, correlation_id, instruction), ';')
		FROM read_parquet(%s)`, outputtest.SQLStr(pq)))[0]
		require.Equal(t, strings.Join(csvKeys, ";"), got)
		// run.json counts each file's samples (a record carries many).
		var run struct {
			Files []struct {
				Path    string `json:"path"`
				Records int64  `json:"records"`
			} `json:"files"`
		}
		readJSONFile(t, filepath.Join(dir, "run.json"), &run)
		counted := map[string]int64{}
		for _, f := range run.Files {
			counted[filepath.Base(f.Path)] = f.Records
		}
		for _, name := range []string{"pc_sampling_host_trap.csv", "pc_sampling_host_trap.parquet"} {
			require.Equal(t, int64(len(rows)), counted[filepath.Base(pcsOne(t, dir, name))], "run.json's records of %s", name)
		}
		// Perfetto: one instant per sample, named by its instruction.
		trace, err := os.ReadFile(pcsOne(t, dir, "results.pftrace"))
		require.NoError(t, err)
		var names []string
		for _, in := range outputtest.PerfettoInstants(t, trace) {
			if in.Category == "PC_SAMPLING_HOST_TRAP" {
				require.Equal(t, "PC samples (Agent 1)", in.Track)
				names = append(names, strconv.FormatUint(in.TS, 10)+"|"+in.Args["dispatch_id"]+"|"+in.Args["corr_id"]+"|"+in.Name)
			}
		}
		require.Equal(t, csvKeys, names)

		// summary: the hottest instructions of tiny(int*), from the database
		// and from the CSV directory alike.
		counts := map[string]int{}
		for _, s := range rows {
			counts[s["Instruction"]]++
		}
		// The CSV files apart from the database: a directory of one output set.
		csvDir := pcsCSVDir(t, dir, "kernel_trace.csv", "pc_sampling_host_trap.csv")
		fromDB, fromCSV := pcsHottest(t, cli, db), pcsHottest(t, cli, csvDir)
		for _, out := range []string{fromDB, fromCSV} {
			lines := strings.Split(strings.TrimSpace(out), "\n")
			require.GreaterOrEqual(t, len(lines), 5, out)
			total := 0
			for _, l := range lines[4:] {
				cells := strings.Split(l, " | ")
				require.Equal(t, "tiny(int*)", strings.TrimSpace(cells[0]), out)
				require.Equal(t, "10", strings.TrimSpace(cells[1]), out)
				n, err := strconv.Atoi(strings.TrimSpace(cells[4]))
				require.NoError(t, err, out)
				require.Equal(t, counts[strings.TrimSpace(cells[3])], n, out)
				total += n
			}
			if len(counts) <= 3 {
				require.Equal(t, 10, total, "every sample in the top 3: %s", out)
			}
			t.Logf("summary:\n%s", out)
		}
		// convert: the database's samples back to pc_sampling_host_trap.csv.
		conv := t.TempDir()
		out, err := exec.Command(cli, "convert", "-i", db, "-f", "csv", "-d", conv).CombinedOutput()
		require.NoError(t, err, "%s", out)
		want, err := os.ReadFile(pcsOne(t, dir, "pc_sampling_host_trap.csv"))
		require.NoError(t, err)
		m, _ := filepath.Glob(filepath.Join(conv, "*pc_sampling_host_trap.csv"))
		require.Len(t, m, 1, "%s", out)
		gotCSV, err := os.ReadFile(m[0])
		require.NoError(t, err)
		require.Equal(t, string(want), string(gotCSV))
	})
}

// Stochastic samples through the CLI (ROCm 7.2, virtual gfx942,
// multistream): ROCpd, Parquet and Perfetto hold the CSV's samples with
// their issue flag, instruction type and stall reason, and summary gives
// the same stall reasons from the database and from the CSV files.
func TestStochasticPCSampleOutputsThroughCLI(t *testing.T) {
	cli := shippedBinary(t)
	onRuntimes(t, []string{"7.2"}, func(t *testing.T, r rocmmatrix.Runtime, cache string) {
		dir := t.TempDir()
		stderr, code := shippedOnRuntime(t, r, cli, cache, 3*time.Minute, nil, "--virtual-gpu=gfx942",
			"--pc-sampling-beta-enabled", "--pc-sampling-method", "stochastic", "--pc-sampling-unit", "cycles",
			"--pc-sampling-interval", "4096", "--kernel-trace", "-f", "csv", "rocpd", "parquet", "pftrace", "-d", dir,
			"--", filepath.Join(r.Apps, "gfx942", "multistream"), "1", "1")
		require.Equal(t, 0, code, stderr)

		const why = "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_"
		rows := pcsRows(t, dir, "pc_sampling_stochastic.csv")
		require.NotEmpty(t, rows)
		var keys []string
		for _, s := range rows {
			keys = append(keys, s["Sample_Timestamp"]+"|"+s["Dispatch_Id"]+"|"+s["Instruction"]+"|"+s["Wave_Issued_Instruction"]+"|"+
				strings.TrimPrefix(s["Stall_Reason"], why)+"|"+s["Wave_Count"])
		}
		db := pcsOne(t, dir, "results.db")
		got := outputtest.SQLite3CLI(t, db, `SELECT timestamp || '|' || json_extract(extdata, '$.dispatch_id') || '|' ||
		json_extract(extdata, '$.instruction') || '|' || json_extract(extdata, '$.wave_issued') || '|' ||
		json_extract(extdata, '$.stall_reason') || '|' || json_extract(extdata, '$.wave_count')
		FROM samples WHERE category = 'PC_SAMPLING_STOCHASTIC' ORDER BY id`)
		require.Equal(t, keys, strings.Split(got, "\n"))
		pq := pcsOne(t, dir, "pc_sampling_stochastic.parquet")
		got = outputtest.DuckDB(t, fmt.Sprintf(`SELECT string_agg(concat_ws('|', timestamp_ns, dispatch_id, instruction, wave_issued,
		replace(stall_reason, '%s', ''), wave_count), ';') FROM read_parquet(%s)`, why, outputtest.SQLStr(pq)))[0]
		require.Equal(t, strings.Join(keys, ";"), got)
		trace, err := os.ReadFile(pcsOne(t, dir, "results.pftrace"))
		require.NoError(t, err)
		var evs []string
		for _, in := range outputtest.PerfettoInstants(t, trace) {
			if in.Category == "PC_SAMPLING_STOCHASTIC" {
				evs = append(evs, strconv.FormatUint(in.TS, 10)+"|"+in.Args["dispatch_id"]+"|"+in.Name+"|"+in.Args["wave_issued"]+"|"+
					in.Args["stall_reason"]+"|"+in.Args["wave_count"])
			}
		}
		require.Equal(t, keys, evs)

		csvDir := pcsCSVDir(t, dir, "kernel_trace.csv", "pc_sampling_stochastic.csv")
		fromDB, fromCSV := pcsHottest(t, cli, db), pcsHottest(t, cli, csvDir)
		require.Contains(t, fromDB, "STALL REASONS (OF NOT ISSUED)")
		// What the CSV rows say of each (kernel, instruction text): samples,
		// and the not-issued reasons as summary prints them.
		kernels := map[string]string{}
		for _, k := range pcsRows(t, dir, "kernel_trace.csv") {
			kernels[k["Dispatch_Id"]] = k["Kernel_Name"]
		}
		type agg struct {
			n, notIssued int
			reasons      map[string]int
		}
		want := map[string]*agg{}
		perKernel := map[string]int{}
		for _, s := range rows {
			k := kernels[s["Dispatch_Id"]] + "|" + s["Instruction"]
			a := want[k]
			if a == nil {
				a = &agg{reasons: map[string]int{}}
				want[k] = a
			}
			a.n++
			perKernel[kernels[s["Dispatch_Id"]]]++
			if s["Wave_Issued_Instruction"] == "0" {
				a.notIssued++
				a.reasons[strings.TrimPrefix(s["Stall_Reason"], why)]++
			}
		}
		stalls := func(a *agg) string {
			type rc struct {
				r string
				n int
			}
			var l []rc
			for r, n := range a.reasons {
				l = append(l, rc{r, n})
			}
			sort.Slice(l, func(i, j int) bool { return l[i].n > l[j].n || l[i].n == l[j].n && l[i].r < l[j].r })
			var parts []string
			for _, x := range l[:min(3, len(l))] {
				parts = append(parts, fmt.Sprintf("%s %.1f%%", x.r, 100*float64(x.n)/float64(a.notIssued)))
			}
			if len(parts) == 0 {
				return "(all issued)"
			}
			return strings.Join(parts, ", ")
		}
		for _, out := range []string{fromDB, fromCSV} {
			for _, l := range strings.Split(strings.TrimSpace(out), "\n")[4:] {
				c := strings.Split(l, " | ")
				require.Len(t, c, 7, l)
				kernel, text := strings.TrimSpace(c[0]), strings.TrimSpace(c[3])
				require.Equal(t, strconv.Itoa(perKernel[kernel]), strings.TrimSpace(c[1]), l)
				if out == fromDB {
					continue // keyed by offset: one text may be at several
				}
				a := want[kernel+"|"+text]
				require.NotNil(t, a, l)
				require.Equal(t, strconv.Itoa(a.n), strings.TrimSpace(c[4]), l)
				require.Equal(t, stalls(a), strings.TrimSpace(c[6]), l)
			}
		}
		t.Logf("summary:\n%s", fromDB)
	})
}
