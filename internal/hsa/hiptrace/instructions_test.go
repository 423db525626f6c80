package hiptrace

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The cost of a traced HIP call in instructions, on any CPU.
//
// Timed benchmarks (BenchmarkHIPCallRate) say what a call costs on the
// machine they run on; they cannot say what it costs on the other vendor's
// CPUs, and they drift with the load. valgrind's callgrind counts the
// instructions a program executes on its simulated CPU: the same count for
// the same binary and input whatever the host is (Intel or AMD, KVM guest
// or bare metal, loaded or quiet). The difference between two runs of
// hip_calls_rate that differ only in their number of calls is what one call
// costs, start-up and exit cancelling out. The two clock reads a traced call
// makes (rdtsc, whose latency is the one vendor-dependent term: 20-40
// cycles) count as two instructions here; docs/performance.md gives the
// timed figures per host kind beside these counts.
//
// Measured on the host's ROCm 5.2 (2026-11-29): 155 instructions per call
// untraced, +110 traced (-f csv), +119 with the arguments (ROCpd), +49 for
// the correlation ids of kernel tracing alone, +7 to +10 with the preload library
// loaded and tracing off. The budgets below leave about a quarter of
// headroom; a change that adds work on the app's thread fails here, on
// every machine, instead of in a benchmark nobody runs.

// instructionBudgets are the most instructions a variant may add to one
// call, over the run without the profiler.
var instructionBudgets = []struct {
	name   string
	env    []string
	budget float64
}{
	{"tracing off", nil, 16},
	{"-f csv", []string{"ROCPROF_HIP_RUNTIME_API_TRACE=1", "ROCPROF_GO_HIP_ARGS=0"}, 140},
	{"arguments (ROCpd)", []string{"ROCPROF_HIP_RUNTIME_API_TRACE=1", "ROCPROF_GO_HIP_ARGS=1"}, 150},
	{"kernel trace's ids", []string{"ROCPROF_KERNEL_TRACE=1"}, 65},
}

var callgrindTotal = regexp.MustCompile(`I\s+refs:\s+([0-9,]+)`)

// instructions runs hip_calls_rate with calls calls under callgrind and
// returns the instructions it executed.
func instructions(t *testing.T, valgrind string, calls int, preload bool, env []string) float64 {
	t.Helper()
	spools := t.TempDir()
	cmd := exec.Command(valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null",
		artifact(t, "testdata/hip_calls_rate"), strconv.Itoa(calls))
	libs := artifact(t, "vgpu/librocprof-go-vgpu.so")
	if preload {
		libs += ":" + artifact(t, "lib/librocprof-go-preload.so")
	}
	cmd.Env = append(append(os.Environ(), "LD_PRELOAD="+libs, "ROCPROF_GO_SPOOL_DIR="+spools), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "valgrind hip_calls_rate %d: %s", calls, out)
	m := callgrindTotal.FindSubmatch(out)
	require.NotNil(t, m, "callgrind printed no total: %s", out)
	n, err := strconv.ParseFloat(strings.ReplaceAll(string(m[1]), ",", ""), 64)
	require.NoError(t, err)
	return n
}

// TestTracedHIPCallInstructions checks the instructions a HIP call gains
// when it is traced against budgets that hold on every CPU (above).
func TestTracedHIPCallInstructions(t *testing.T) {
	valgrind, err := exec.LookPath("valgrind")
	require.NoError(t, err, "valgrind is missing: install Debian's valgrind (make deps)")
	const few, many = 20000, 120000
	perCall := func(preload bool, env []string) float64 {
		return (instructions(t, valgrind, many, preload, env) - instructions(t, valgrind, few, preload, env)) / (many - few)
	}
	base := perCall(false, nil)
	require.Greater(t, base, 20.0, "an untraced call cannot cost %.1f instructions: the app did not run its loop", base)
	report := []string{fmt.Sprintf("untraced: %.1f instructions per call", base)}
	for _, v := range instructionBudgets {
		added := perCall(true, v.env) - base
		report = append(report, fmt.Sprintf("%s: +%.1f (budget %.0f, ratio %.2f)", v.name, added, v.budget, (base+added)/base))
		require.LessOrEqual(t, added, v.budget, "%s adds %.1f instructions to a HIP call (budget %.0f)", v.name, added, v.budget)
	}
	t.Log(strings.Join(report, "; "))
}
