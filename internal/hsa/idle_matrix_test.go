package main

import (
	"context"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
)

// An app that sleeps after its kernels costs next to no CPU under kernel
// tracing, on every runtime. ROCR 6.4's and 7.2's async-events thread spun
// for as long as an intercept queue lived when the queue's doorbell got a
// KFD event from the runtime's pool that had fired before (queue.cpp,
// PoolHold): the idle app used 101% of a CPU under the profiler on both,
// against 2% without it (docs/performance.md).
func TestIdleTracedAppUsesNoCPU(t *testing.T) {
	rts, err := rocmmatrix.Ready(repoRoot(t), buildDir(t))
	require.NoError(t, err)
	percent := regexp.MustCompile(`idle_cpu_percent=([0-9.]+)`)
	for _, rt := range rts {
		t.Run(rt.Name, func(t *testing.T) {
			spools := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), benchTimeout)
			defer cancel()
			// idle: four streams with a kernel each, then 1 s asleep; it
			// prints the process's CPU use during the sleep.
			cmd := rt.Command(ctx, rt.Apps+"/idle", "1")
			cmd.Env = appEnv(t, spools, false, "ROCPROF_KERNEL_TRACE=1")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			m := percent.FindSubmatch(out)
			require.NotNil(t, m, "%s", out)
			used, err := strconv.ParseFloat(string(m[1]), 64)
			require.NoError(t, err)
			// 2% measured; a spinning thread takes a whole CPU, or half of
			// one on a loaded 2-vCPU machine.
			require.Less(t, used, 25.0, "ROCm %s: the traced app used %.1f%% of a CPU while asleep:\n%s", rt.Name, used, out)
		})
	}
}
