package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
)

// leakWarning is what ROCR's hsa_shut_down prints on the app's stderr for
// the signals still taken from its signal pool.
var leakWarning = regexp.MustCompile(`Resource leak detected by SharedSignalPool, (\d+) Signals leaked`)

// leakedSignals is the count in stderr's leak warning, 0 without one.
func leakedSignals(t *testing.T, stderr string) int {
	t.Helper()
	ms := leakWarning.FindAllStringSubmatch(stderr, -1)
	require.LessOrEqual(t, len(ms), 1, stderr)
	if len(ms) == 0 {
		return 0
	}
	n, err := strconv.Atoi(ms[0][1])
	require.NoError(t, err)
	return n
}

// bareOnRuntime runs app on the virtual GPU without the profiler and
// returns its stderr.
func bareOnRuntime(t *testing.T, rt rocmmatrix.Runtime, app string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := rt.Command(ctx, app, args...)
	vgpu := filepath.Join(rt.Build(), "vgpu", "librocprof-go-vgpu.so")
	require.FileExists(t, vgpu, "run make build first")
	cmd.Env = append(environWithout("ROCPROF_", "HSA", "LD_PRELOAD="), "LD_PRELOAD="+vgpu, "ROCPROF_VGPU_ARCH=gfx90a")
	var errb strings.Builder
	cmd.Stderr = &errb
	require.NoError(t, cmd.Run(), "%s %v without the profiler: %s", app, args, errb.String())
	return errb.String()
}

// A traced app leaks no more signals at exit than the same app without the
// profiler. ROCR's hsa_shut_down prints "Warning: Resource leak detected by
// SharedSignalPool, N Signals leaked." for the signals still allocated; HIP 6
// and 7 leave some of their own (77 and 90 for `multistream 1 1` on 6.4 and
// 7.2, bare), and the shim used to add its pool's idle signals and its kick
// queue's on ROCm 7.2, whose runtime refuses the calls of OnUnload (+4 for
// `multistream 1 1`, +8 to +10 with 4 streams, +7 for raw HSA's hsa_queues),
// and on every runtime the counter slots' signals (+32 per agent). The shim
// now gives them back in hsa_shut_down, before the runtime's (queue.cpp,
// hook_shut_down), and in OnUnload. What stays is documented (docs/shim.md,
// "Signals at exit"): the kept intercept queue of a cooperative queue (two
// signals each, checked below).
func TestTracedAppsLeakNoMoreSignals(t *testing.T) {
	cli := shippedBinary(t)
	onRuntimes(t, nil, func(t *testing.T, rt rocmmatrix.Runtime, cache string) {
		type run struct {
			domains []string
			app     string
			args    []string
			extra   int // signals the profiler is known to keep (docs/shim.md)
		}
		runs := []run{
			// HIP: streams, kernels, copies; HIP 6 and 7 call hsa_shut_down.
			{[]string{"--kernel-trace"}, "multistream", []string{"4", "10"}, 0},
			{[]string{"--hip-trace", "--kernel-trace", "--memory-copy-trace"}, "multistream", []string{"4", "10"}, 0},
			// Raw HSA: queues destroyed, then hsa_shut_down.
			{[]string{"--kernel-trace", "--memory-copy-trace"}, "hsa_queues", []string{"4"}, 0},
			// A cooperative launch: its intercept queue stays (two signals).
			{[]string{"--kernel-trace"}, "features", []string{filepath.Join(rt.Apps, "module_kernels.co")}, 2},
		}
		// Only HIP 6 and 7 call hsa_shut_down: elsewhere HIP apps exit
		// without the runtime's count, and the cooperative queue's two
		// signals go unreported.
		hip, err := rt.HIPMajor()
		require.NoError(t, err)
		if hip < 6 {
			runs[3].extra = 0
		}
		// Counters: their slots' signals (32 per agent).
		runs = append(runs, run{[]string{"--pmc", "SQ_WAVES"}, "multistream", []string{"1", "1"}, 0})
		for _, r := range runs {
			app := filepath.Join(rt.Apps, r.app)
			what := fmt.Sprintf("ROCm %s %s %v %s", rt.Name, r.app, r.args, strings.Join(r.domains, " "))
			bare := leakedSignals(t, bareOnRuntime(t, rt, app, r.args...))
			out := t.TempDir()
			args := append([]string{"--virtual-gpu=gfx90a", "-f", "csv", "-d", out, "-o", "run"}, r.domains...)
			args = append(append(args, "--", app), r.args...)
			_, stderr, code := runAppOnRuntime(t, rt, cli, cache, 3*time.Minute, nil, args...)
			require.Equalf(t, 0, code, "%s\nstderr: %s", what, stderr)
			traced := leakedSignals(t, stderr)
			t.Logf("%s: signals leaked bare %d, traced %d", what, bare, traced)
			require.Equalf(t, bare+r.extra, traced, "%s: the profiler must leave no signal of its own at exit\nstderr: %s", what, stderr)
		}
	})
}
