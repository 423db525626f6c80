package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
)

// PC sampling beside HIP, kernel and copy tracing and a counter, in one run
// of one pass: each domain is as exact as without the others. tiny_kernels
// launches `tiny` (one workgroup of 64 work-items: one wave) 5 times, each
// followed by hipDeviceSynchronize; the virtual GPU models each dispatch at
// 2,010 ns, so at 1 us each takes 2 host-trap samples
// (docs/pc-sampling.md), and SQ_WAVES is 1 per dispatch (one wave). The
// figures are derived from the app's launch and the documented models, not
// from rocprof-go's code.
func TestPCSamplingWithTracingAndCounters(t *testing.T) {
	cli := shippedBinary(t)
	onRuntimes(t, []string{"6.4", "7.2"}, func(t *testing.T, rt rocmmatrix.Runtime, cache string) {
		dir := t.TempDir()
		stderr, code := shippedOnRuntime(t, rt, cli, cache, 3*time.Minute, nil, "--virtual-gpu=gfx90a",
			"--pc-sampling-beta-enabled", "--pc-sampling-method", "host_trap", "--pc-sampling-unit", "time",
			"--pc-sampling-interval", "1", "--hip-runtime-trace", "--kernel-trace", "--memory-copy-trace",
			"--pmc", "SQ_WAVES", "-f", "csv", "-d", dir, "--", filepath.Join(rt.Apps, "tiny_kernels"), "5", "sync")
		require.Equal(t, 0, code, stderr)

		// Kernel trace: the 5 launches, in order, each with its HIP call.
		launches := map[string]bool{}
		for _, r := range pcsRows(t, dir, "hip_api_trace.csv") {
			if strings.HasPrefix(r["Function"], "hipLaunchKernel") {
				launches[r["Correlation_Id"]] = true
			}
		}
		require.Len(t, launches, 5, "hip_api_trace.csv: one hipLaunchKernel per launch")
		tiny := map[string]string{} // dispatch id -> correlation id
		for _, r := range pcsRows(t, dir, "kernel_trace.csv") {
			if r["Kernel_Name"] == "tiny(int*)" {
				require.True(t, launches[r["Correlation_Id"]], "dispatch %s's correlation id %s names a hipLaunchKernel",
					r["Dispatch_Id"], r["Correlation_Id"])
				tiny[r["Dispatch_Id"]] = r["Correlation_Id"]
			}
		}
		require.Len(t, tiny, 5, "kernel_trace.csv: 5 dispatches of tiny")

		// Counters: SQ_WAVES of each tiny dispatch is its one wave.
		waves := map[string]string{}
		for _, r := range pcsRows(t, dir, "counter_collection.csv") {
			if r["Kernel_Name"] == "tiny(int*)" && r["Counter_Name"] == "SQ_WAVES" {
				waves[r["Dispatch_Id"]] = r["Counter_Value"]
			}
		}
		require.Len(t, waves, 5, "counter_collection.csv: SQ_WAVES of every tiny dispatch")
		for id, v := range waves {
			require.Contains(t, tiny, id)
			require.Equal(t, "1", strings.TrimSuffix(strings.TrimSuffix(v, ".000000"), ".0"), "SQ_WAVES of dispatch %s", id)
		}

		// PC samples: 2 per dispatch, each naming its dispatch and that
		// dispatch's correlation id.
		per := map[string]int{}
		for _, s := range pcsRows(t, dir, "pc_sampling_host_trap.csv") {
			corr, ok := tiny[s["Dispatch_Id"]]
			if !ok {
				continue // ROCclr's own kernels (a blit) are sampled too
			}
			require.Equal(t, corr, s["Correlation_Id"])
			require.NotEmpty(t, s["Instruction"])
			per[s["Dispatch_Id"]]++
		}
		require.Len(t, per, 5)
		for id, n := range per {
			require.Equal(t, 2, n, "dispatch %s: 2,010 ns at 1 us", id)
		}
	})
}

// ROCm 6.4's runtime faults when a stochastic session it cannot feed
// stops (docs/pc-sampling.md, Limits). The CLI refuses the request before
// the app starts; an app that sets the shim's variables itself, around the
// CLI, gets no session either (the shim checks the runtime the same way),
// and runs to its end with its kernels traced.
func TestStochasticAroundTheCLIOnROCm64(t *testing.T) {
	cli := shippedBinary(t)
	onRuntimes(t, []string{"6.4"}, func(t *testing.T, rt rocmmatrix.Runtime, cache string) {
		dir := t.TempDir()
		stderr, code := shippedOnRuntime(t, rt, cli, cache, 3*time.Minute, nil, "--virtual-gpu=gfx942",
			"--kernel-trace", "-f", "csv", "-d", dir, "--", "/usr/bin/env",
			"ROCPROFILER_PC_SAMPLING_BETA_ENABLED=1", "ROCPROF_PC_SAMPLING_METHOD=stochastic",
			"ROCPROF_PC_SAMPLING_UNIT=cycles", "ROCPROF_PC_SAMPLING_INTERVAL=4096",
			filepath.Join(rt.Apps, "gfx942", "multistream"), "1", "1")
		require.Equal(t, 0, code, stderr)
		require.NotEmpty(t, pcsRows(t, dir, "kernel_trace.csv"))
		m, _ := filepath.Glob(filepath.Join(dir, "*", "*_pc_sampling_stochastic.csv"))
		require.Empty(t, m, "no stochastic session on ROCm 6.4")
	})
}
