package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
)

// A traced app that made a cooperative launch exits cleanly on every
// runtime, its outputs complete. The runtime shares one cooperative queue
// per agent and counts its users; the intercept queue the shim made around
// it owned it outright, so destroying it (HIP does at exit) deleted the
// shared queue behind the agent's back, and hsa_shut_down, which HIP 6 and
// 7 call from their exit-time destructors, deleted it again: features died
// of SIGSEGV inside ROCR at exit on 6.4 and 7.2, whatever was traced
// (queue.cpp's create_cooperative keeps a reference of its own and releases
// the shared queue through the agent). The cooperative kernels stay traced,
// on the cooperative queue, with the HIP call that launched them. The same
// through raw HSA (hsa_queues coop): creations sharing the queue, destroys,
// a new queue after the last.
func TestTracedAppsExitCleanly(t *testing.T) {
	cli := shippedBinary(t)
	onRuntimes(t, nil, func(t *testing.T, rt rocmmatrix.Runtime, cache string) {
		app := filepath.Join(rt.Apps, "features")
		for _, domains := range [][]string{
			{"--kernel-trace"},
			{"--hip-trace", "--kernel-trace", "--memory-copy-trace"},
		} {
			out := t.TempDir()
			args := append([]string{"--virtual-gpu=gfx90a", "-f", "csv", "-d", out, "-o", "run"}, domains...)
			args = append(args, "--", app, filepath.Join(rt.Apps, "module_kernels.co"))
			stdout, stderr, code := runAppOnRuntime(t, rt, cli, cache, 3*time.Minute, []string{"ROCPROF_GO_SHIM_DEBUG=1"}, args...)
			what := "ROCm " + rt.Name + " " + strings.Join(domains, " ")
			require.Equalf(t, 0, code, "%s: the app must exit as without the profiler\nstdout: %s\nstderr: %s", what, stdout, stderr)
			require.Regexp(t, `^module launch ok\nmanaged ok value=42\ncooperative launch ok\nevent timing ok ms=`, stdout, what)
			require.Contains(t, stderr, "rocprof-go shim: cooperative queue: shared by the runtime", what)

			rows := readCSVRows(t, filepath.Join(out, "run_kernel_trace.csv"))
			byName := map[string][]map[string]string{}
			for _, r := range rows {
				byName[r["Kernel_Name"]] = append(byName[r["Kernel_Name"]], r)
			}
			require.Len(t, byName["module_fill"], 1, "%s: %v", what, rows)
			require.Len(t, byName["coop(int*)"], 2, "%s: %v", what, rows)
			require.Len(t, byName["__amd_rocclr_gwsInit"], 1, "%s: %v", what, rows)
			// HIP initialises the cooperative queue's GWS, then launches
			// on it: both on one queue, under hipLaunchCooperativeKernel.
			gws := byName["__amd_rocclr_gwsInit"][0]
			coopOnGWS := 0
			for _, r := range byName["coop(int*)"] {
				if r["Queue_Id"] == gws["Queue_Id"] {
					coopOnGWS++
					require.Equal(t, gws["Correlation_Id"], r["Correlation_Id"], what)
				}
			}
			require.Equal(t, 1, coopOnGWS, "%s: one cooperative launch on the cooperative queue: %v", what, rows)
			require.NotEqual(t, byName["module_fill"][0]["Queue_Id"], gws["Queue_Id"], what)
			if len(domains) == 1 {
				continue
			}
			calls := map[string]string{}
			var last string
			for _, r := range readCSVRows(t, filepath.Join(out, "run_hip_api_trace.csv")) {
				calls[r["Correlation_Id"]] = r["Function"]
				last = r["Function"]
			}
			require.Equal(t, "hipLaunchCooperativeKernel", calls[gws["Correlation_Id"]], what)
			// The exit-time calls are in: the app reached its end.
			require.Equal(t, "__hipUnregisterFatBinary", last, what)
		}

		// Raw HSA: two creations of the cooperative queue, a dispatch
		// after the first destroy, a new queue after the last, and
		// hsa_shut_down, as without the profiler.
		out := t.TempDir()
		stdout, stderr, code := runAppOnRuntime(t, rt, cli, cache, 3*time.Minute, []string{"ROCPROF_GO_SHIM_DEBUG=1"},
			"--virtual-gpu=gfx90a", "--kernel-trace", "-f", "csv", "-d", out, "-o", "run", "--",
			filepath.Join(rt.Apps, "hsa_queues"), "coop")
		require.Equalf(t, 0, code, "ROCm %s hsa_queues coop\nstdout: %s\nstderr: %s", rt.Name, stdout, stderr)
		require.Equal(t, "cooperative shared=1 dispatches=3\n", stdout)
		require.Equal(t, 2, strings.Count(stderr, "rocprof-go shim: cooperative queue: shared by the runtime"), stderr)
		require.Equal(t, 2, strings.Count(stderr, "rocprof-go shim: cooperative queue released (status 0x0)"), stderr)
		require.Len(t, readCSVRows(t, filepath.Join(out, "run_kernel_trace.csv")), 3)
	})
}

// readCSVFile reads a CSV file's records, its header first.
func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	return recs
}

// readCSVRows reads a CSV file's rows as maps keyed by its header.
func readCSVRows(t *testing.T, path string) []map[string]string {
	t.Helper()
	recs := readCSVFile(t, path)
	require.NotEmpty(t, recs, path)
	var rows []map[string]string
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = rec[i]
		}
		rows = append(rows, m)
	}
	return rows
}
