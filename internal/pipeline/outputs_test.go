package pipeline

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
)

// builtLibDir gathers the libraries `make build` produced (the preload
// library, the shim and the virtual GPU) into one directory for
// launch.LibDirEnv, so tests run the real profiler on the virtual GPU.
func builtLibDir(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	build := filepath.Join(filepath.Dir(file), "..", "..", "build")
	dir := t.TempDir()
	for _, p := range []string{"lib/" + launch.PreloadLib, "lib/" + launch.ShimLib,
		"vgpu/" + launch.VGPULib, "lib/" + launch.ROCTxLib} {
		src, err := filepath.Abs(filepath.Join(build, p))
		require.NoError(t, err)
		_, err = os.Stat(src)
		require.NoError(t, err, "%s is missing: run `make build testapps`", src)
		require.NoError(t, os.Symlink(src, filepath.Join(dir, filepath.Base(p))))
	}
	return dir
}

func sampleApp(t *testing.T, name string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	p, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", "..", "build", "testdata", name))
	require.NoError(t, err)
	_, err = os.Stat(p)
	require.NoError(t, err, "%s is missing: run `make testapps`", p)
	return p
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r := csv.NewReader(f)
	r.LazyQuotes = true
	rows, err := r.ReadAll()
	require.NoError(t, err)
	return rows
}

func column(rows [][]string, name string) []string {
	col := -1
	for i, h := range rows[0] {
		if h == name {
			col = i
		}
	}
	var out []string
	for _, r := range rows[1:] {
		if col >= 0 {
			out = append(out, r[col])
		}
	}
	return out
}

// TestKernelRenameOnTheVirtualGPU: hip_calls_counts launches its six kernels
// inside push "outer" { push "inner" { ... } }: with --kernel-rename every
// dispatch is named "inner", in kernel_trace.csv and kernel_stats.csv.
func TestKernelRenameOnTheVirtualGPU(t *testing.T) {
	t.Setenv(launch.LibDirEnv, builtLibDir(t))
	app := sampleApp(t, "hip_calls_counts")
	for _, rename := range []bool{false, true} {
		out := t.TempDir()
		args := []string{"--virtual-gpu", "--marker-trace", "--kernel-trace", "--stats", "-f", "csv",
			"-d", out, "-o", "run"}
		if rename {
			args = append(args, "--kernel-rename")
		}
		res, err := Run(context.Background(), Options{Args: args}, []string{app})
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitStatus)
		names := column(readCSV(t, filepath.Join(out, "run_kernel_trace.csv")), "Kernel_Name")
		require.Len(t, names, 6)
		stats := column(readCSV(t, filepath.Join(out, "run_kernel_stats.csv")), "Name")
		require.Len(t, stats, 1)
		for _, n := range names {
			if rename {
				require.Equal(t, "inner", n)
			} else {
				require.Contains(t, n, "hip_calls_add")
			}
		}
		require.Equal(t, names[0], stats[0])
	}
}

// listFiles returns every file under dir but the manifest (run.json and the
// lock file that serialises its writers), relative.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel != "run.json" && rel != ".run.json.lock" {
			out = append(out, rel)
		}
		return nil
	}))
	return out
}

// TestMinimumOutputData is rocprofv3's test: a 1 GB --minimum-output-data
// writes no csv, json or pftrace file (nor stats, agent_info or summary).
func TestMinimumOutputData(t *testing.T) {
	t.Setenv(launch.LibDirEnv, builtLibDir(t))
	app := sampleApp(t, "hip_calls_counts")
	for _, kb := range []string{"1048576", "1"} {
		out := t.TempDir()
		var stdout strings.Builder
		res, err := Run(context.Background(), Options{Stdout: &stdout, Args: []string{"--virtual-gpu",
			"--kernel-trace", "--hip-trace", "--stats", "--summary", "-f", "csv", "json", "pftrace",
			"-d", out, "-o", "run", "--minimum-output-data", kb}}, []string{app})
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitStatus)
		files := listFiles(t, out)
		if kb == "1048576" {
			require.Empty(t, files)
			require.NotContains(t, stdout.String(), "ROCPROFV3 SUMMARY")
			continue
		}
		// The check is per domain for the CSV files: the six dispatches
		// (under 1 KB of records) write no kernel_trace.csv, the HIP calls
		// do; the per-run files only look at the total.
		for _, want := range []string{"run_hip_api_trace.csv", "run_hip_api_stats.csv",
			"run_agent_info.csv", "run_domain_stats.csv", "run_results.json", "run_results.pftrace"} {
			require.Contains(t, files, want)
		}
		require.NotContains(t, files, "run_kernel_trace.csv")
		require.NotContains(t, files, "run_kernel_stats.csv")
		require.Contains(t, stdout.String(), "SUMMARY")
	}
}

// TestOutputToStdout: -o stdout and -o stderr put the CSV files and the
// JSON document on standard output, and create no data file.
func TestOutputToStdout(t *testing.T) {
	t.Setenv(launch.LibDirEnv, builtLibDir(t))
	app := sampleApp(t, "hip_calls_counts")
	for _, name := range []string{"stdout", "stderr"} {
		out := t.TempDir()
		var stdout, stderr strings.Builder
		res, err := Run(context.Background(), Options{Stdout: &stdout, Stderr: &stderr,
			Args: []string{"--virtual-gpu", "--kernel-trace", "-f", "csv", "json", "-d", out, "-o", name}},
			[]string{app})
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitStatus)
		require.Empty(t, listFiles(t, out))
		s := stdout.String()
		require.Contains(t, s, `"Kind","Agent_Id","Queue_Id","Stream_Id"`)
		require.Equal(t, 6, strings.Count(s, "\n\"KERNEL_DISPATCH\","))
		require.Contains(t, s, `"Node_Id","Logical_Node_Id"`)
		require.Contains(t, s, `{"rocprofiler-sdk-tool"`)
		require.NotContains(t, stderr.String(), "KERNEL_DISPATCH")
	}
}

// TestV1ResultsOnTheVirtualGPU: -o results.csv writes rocprof v1's
// results.csv, one row per dispatch, and its stats files; v1's --hip-trace
// traced kernels and copies too, so --hip-trace alone gives all of them.
func TestV1ResultsOnTheVirtualGPU(t *testing.T) {
	t.Setenv(launch.LibDirEnv, builtLibDir(t))
	app := sampleApp(t, "hip_calls_counts")
	out := t.TempDir()
	res, err := Run(context.Background(), Options{Args: []string{"--virtual-gpu",
		"--hip-trace", "-d", out, "-o", "results.csv"}}, []string{app})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus)
	rows := readCSV(t, filepath.Join(out, "results.csv"))
	// --hip-trace sets v1's GEN_STATS: the database-backed layout.
	require.Equal(t, []string{"Index", "KernelName", "gpu-id", "queue-id", "queue-index", "pid", "tid",
		"grd", "wgr", "lds", "scr", "vgpr", "sgpr", "fbar", "sig", "obj",
		"DispatchNs", "BeginNs", "EndNs", "CompleteNs", "DurationNs"}, rows[0])
	require.Len(t, rows, 7)
	for _, n := range column(rows, "KernelName") {
		require.Contains(t, n, "hip_calls_add")
	}
	require.Equal(t, []string{"1024"}, uniq(column(rows, "grd")))
	require.Equal(t, []string{"256"}, uniq(column(rows, "wgr")))
	stats := readCSV(t, filepath.Join(out, "results.stats.csv"))
	require.Equal(t, []string{"Name", "Calls", "TotalDurationNs", "AverageNs", "Percentage"}, stats[0])
	require.Equal(t, "6", stats[1][1])
	hip := readCSV(t, filepath.Join(out, "results.hip_stats.csv"))
	calls := map[string]string{}
	for _, r := range hip[1:] {
		calls[r[0]] = r[1]
	}
	require.Equal(t, "6", calls["hipLaunchKernel"])
	require.Equal(t, "3", calls["hipMalloc"])
	copies := readCSV(t, filepath.Join(out, "results.copy_stats.csv"))
	require.Greater(t, len(copies), 1)
	require.Equal(t, []string{"results.copy_stats.csv", "results.csv", "results.hip_stats.csv",
		"results.stats.csv"}, listFiles(t, out), "v1's files, nothing of rocprofv3's")
}

// TestV1PipelineMergesPasses is a rocprof v1 pipeline: `--hip-trace --stats
// -i input.txt -o results.csv` with two pmc: lines runs the app twice and
// must leave, at the -o path, one results.csv (one row per dispatch, in
// Index order, a column for every counter of both lines holding the virtual
// GPU's modelled values) with v1's stats files beside it — copies from
// --hip-trace alone — and no other results.* file anywhere: no per-pass
// results.csv, no rocprofv3 results.csv_* file.
func TestV1PipelineMergesPasses(t *testing.T) {
	t.Setenv(launch.LibDirEnv, builtLibDir(t))
	app := sampleApp(t, "multistream")
	out := t.TempDir()
	input := filepath.Join(t.TempDir(), "input.txt")
	require.NoError(t, os.WriteFile(input, []byte("pmc: SQ_WAVES GRBM_COUNT\npmc: GRBM_GUI_ACTIVE\n"), 0o644))
	res, err := Run(context.Background(), Options{Stdout: &strings.Builder{}, Args: []string{"--virtual-gpu",
		"--hip-trace", "--stats", "-i", input, "-d", out, "-o", "results.csv"}}, []string{app})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus)
	require.Len(t, res.Manifest.Passes, 2)

	var named []string
	require.NoError(t, filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasPrefix(fi.Name(), "results.") {
			rel, _ := filepath.Rel(out, p)
			named = append(named, rel)
		}
		return err
	}))
	require.Equal(t, []string{"results.copy_stats.csv", "results.csv", "results.hip_stats.csv",
		"results.stats.csv"}, named)

	rows := readCSV(t, filepath.Join(out, "results.csv"))
	header := rows[0]
	// rocprof 5.2.3's columns (tool.cpp's dispatch line, then the counters
	// in the pmc: lines' order, then the times), issue 24.
	require.Equal(t, []string{"Index", "KernelName", "gpu-id", "queue-id", "queue-index", "pid", "tid",
		"grd", "wgr", "lds", "scr", "vgpr", "sgpr", "fbar", "sig", "obj", "SQ_WAVES", "GRBM_COUNT",
		"GRBM_GUI_ACTIVE", "DispatchNs", "BeginNs", "EndNs", "CompleteNs", "DurationNs"}, header)
	raw, err := os.ReadFile(filepath.Join(out, "results.csv"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(raw), `"Index","KernelName","gpu-id",`), "v1's SQLite header, quoted")
	// multistream: 4 streams x 8 rounds of vadd, scale and a device-to-device
	// copy HIP runs as a blit kernel.
	require.Len(t, rows, 1+96)
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	pid := rows[1][col["pid"]]
	for i, r := range rows[1:] {
		require.Equal(t, strconv.Itoa(i), r[col["Index"]], "rows in Index order")
		require.Equal(t, pid, r[col["pid"]], "one process, the first pass's")
		grd, _ := strconv.Atoi(r[col["grd"]])
		wgr, _ := strconv.Atoi(r[col["wgr"]])
		// The counter model (docs/virtual-gpu.md), gfx90a at 1700 MHz:
		// waves = workgroups x waves per workgroup, duration 2000 + 8 ns a
		// wave, GRBM_GUI_ACTIVE its cycles, GRBM_COUNT 1000 more.
		waves := (grd + wgr - 1) / wgr * ((wgr + 63) / 64)
		cycles := (2000 + 8*waves) * 1700 / 1000
		require.Equal(t, strconv.Itoa(waves), r[col["SQ_WAVES"]], "row %d", i)
		require.Equal(t, strconv.Itoa(cycles+1000), r[col["GRBM_COUNT"]], "row %d", i)
		require.Equal(t, strconv.Itoa(cycles), r[col["GRBM_GUI_ACTIVE"]], "row %d (second pass)", i)
		// v1 numbered queues from 0; multistream's four streams get four
		// queues of HIP's (GPU_MAX_HW_QUEUES) plus the null stream's.
		q, _ := strconv.Atoi(r[col["queue-id"]])
		require.Less(t, q, 5, "row %d", i)
		require.Regexp(t, `^0x[0-9a-f]{6,}$`, r[col["obj"]], "the kernel object, row %d", i)
		require.Equal(t, "0", r[col["fbar"]])
		dur, _ := strconv.Atoi(r[col["DurationNs"]])
		b, _ := strconv.Atoi(r[col["BeginNs"]])
		e, _ := strconv.Atoi(r[col["EndNs"]])
		require.Equal(t, e-b, dur)
	}
	require.Contains(t, column(rows, "queue-id"), "0", "queues counted from 0, as v1 did")
	kernels := map[string]string{}
	for _, r := range readCSV(t, filepath.Join(out, "results.stats.csv"))[1:] {
		kernels[r[0]] = r[1]
	}
	require.Equal(t, map[string]string{"vadd(float const*, float const*, float*, int)": "32",
		"scale(float*, float, int)": "32", "__amd_rocclr_copyBuffer": "32"}, kernels, "each dispatch once")
	hip := map[string]string{}
	for _, r := range readCSV(t, filepath.Join(out, "results.hip_stats.csv"))[1:] {
		hip[r[0]] = r[1]
	}
	require.Equal(t, "128", hip["hipMemcpyAsync"], "the first pass's calls, not both passes'")
	copies := map[string]string{}
	for _, r := range readCSV(t, filepath.Join(out, "results.copy_stats.csv"))[1:] {
		copies[r[0]] = r[1]
	}
	require.Equal(t, map[string]string{"CopyHostToDevice": "64", "CopyDeviceToHost": "32"}, copies)
}

func uniq(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
