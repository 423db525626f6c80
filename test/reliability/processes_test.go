package reliability

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A child forked without exec gets its own spool: its HIP calls and marker
// are in the output under its own pid, next to the parent's.
func TestForkWithoutExecRecordsTheChild(t *testing.T) {
	t.Parallel()
	res := profiled{opts: []string{"--hip-trace", "--marker-trace", "-f", "csv"}, argv: []string{app(t, "hip_calls_fork")}}.run(t)
	require.Equal(t, 0, res.exit, "stderr:\n%s", res.stderr)
	require.Equal(t, 7, intField(t, res.stdout, "child_exit"))
	out := readOutputs(t, res.dir)
	pids := out.pids("hip_api_trace")
	require.Len(t, pids, 2, "parent and child")
	counts := map[int]int{}
	for _, pid := range pids {
		counts[pid] = out.apiCalls(t, pid, "hipGetDevice")
	}
	var parent, child int
	for _, pid := range pids {
		if counts[pid] == 5 {
			parent = pid
		} else {
			child = pid
		}
	}
	require.NotZero(t, parent, "the parent's 5 hipGetDevice calls: %v", counts)
	require.Equal(t, 3, counts[child], "the child's hipGetDevice calls")
	mt := out[child]["marker_api_trace"]
	require.NotNil(t, mt, "the child's marker trace")
	require.Len(t, mt.rows, 1)
	report(t, "exit %d; hipGetDevice parent: expected 5, found %d; child: expected 3, found %d; child markers: expected 1, found %d",
		res.exit, counts[parent], counts[child], len(mt.rows))

	// The same with a kernel app: the parent's two dispatches around the fork.
	res = profiled{opts: traceOpts, argv: []string{app(t, "fork")}}.run(t)
	require.Equal(t, 0, res.exit, "stderr:\n%s", res.stderr)
	out = readOutputs(t, res.dir)
	kp := out.pids("kernel_trace")
	require.Len(t, kp, 1)
	require.Equal(t, intField(t, res.stdout, "dispatches"), out.appKernels(t, kp[0]))
}

// An app that runs itself again through fork + exec: both processes' kernels.
func TestExecRecordsBothImages(t *testing.T) {
	t.Parallel()
	res := profiled{opts: traceOpts, argv: []string{app(t, "exec")}}.run(t)
	require.Equal(t, 0, res.exit, "stderr:\n%s", res.stderr)
	require.Equal(t, 5, intField(t, res.stdout, "child_exit"))
	out := readOutputs(t, res.dir)
	pids := out.pids("kernel_trace")
	require.Len(t, pids, 2, "the parent and the exec'd child")
	for _, pid := range pids {
		require.Equal(t, 1, out.appKernels(t, pid), "pid %d", pid)
	}
	report(t, "exit %d; processes: expected 2, found %d; dispatches: expected 1+1, found %d+%d",
		res.exit, len(pids), out.appKernels(t, pids[0]), out.appKernels(t, pids[1]))
}

// A bash wrapper that does not exec the app: the app is a grandchild of
// rocprof-go, its records are kept, and the wrapper's exit code (the app's)
// is rocprof-go's.
func TestBashWrapper(t *testing.T) {
	t.Parallel()
	script := `echo "wrapper $$ start"; "$@"; rc=$?; echo "wrapper end rc=$rc"; exit $rc`
	res := profiled{opts: traceOpts, argv: []string{"/bin/bash", "-c", script, "wrapper", app(t, "fault_exit"), "20", "9"}}.run(t)
	require.Equal(t, 9, res.exit, "stderr:\n%s", res.stderr)
	require.Equal(t, 9, intField(t, res.stdout, "rc"))
	out := readOutputs(t, res.dir)
	pids := out.pids("kernel_trace")
	require.Len(t, pids, 1, "only the HIP app writes records")
	kernels := out.appKernels(t, pids[0])
	require.GreaterOrEqual(t, kernels, 20)
	require.Equal(t, 40, out.apiCalls(t, pids[0], "hipLaunchKernel"))
	report(t, "exit %d; dispatches: expected >= 20, found %d; hipLaunchKernel: expected 40, found %d",
		res.exit, kernels, out.apiCalls(t, pids[0], "hipLaunchKernel"))
}

// A Python launcher (fork + exec from CPython, as torchrun or mpirun do)
// starting two ranks at once: both ranks' records, and the launcher's exit
// status (which carries a rank's crash as 128+N).
func TestPythonLauncher(t *testing.T) {
	t.Parallel()
	launcher := filepath.Join(repoRoot(t), "testdata", "apps", "fault_launch.py")
	res := profiled{opts: append([]string{"--memory-copy-trace"}, traceOpts...),
		argv: []string{"python3", launcher, "-n", "2", app(t, "multistream"), "2", "2"}}.run(t)
	require.Equal(t, 0, res.exit, "stderr:\n%s", res.stderr)
	require.Equal(t, 2, intField(t, res.stdout, "children"))
	out := readOutputs(t, res.dir)
	pids := out.pids("kernel_trace")
	require.Len(t, pids, 2, "two ranks")
	// Each rank prints the same counts. Of its copies, a quarter are
	// device-to-device, which the runtime runs as __amd_rocclr_copyBuffer
	// kernels (in the kernel trace, not the memory copy trace).
	dispatches, copies := intField(t, res.stdout, "dispatches"), intField(t, res.stdout, "copies")
	var found []string
	for _, pid := range pids {
		kernels, blits := out.appKernels(t, pid), len(out[pid]["kernel_trace"].rows)-out.appKernels(t, pid)
		async := len(out[pid]["memory_copy_trace"].rows)
		require.Equal(t, dispatches, kernels, "pid %d dispatches", pid)
		require.Equal(t, copies/4, blits, "pid %d device-to-device copies", pid)
		require.Equal(t, copies-copies/4, async, "pid %d other copies", pid)
		found = append(found, fmt.Sprintf("%d dispatches, %d+%d copies", kernels, async, blits))
	}
	report(t, "exit %d; ranks: expected 2, found %d; per rank expected %d dispatches, %d copies; found %v",
		res.exit, len(pids), dispatches, copies, found)

	res = profiled{opts: traceOpts, argv: []string{"python3", launcher, app(t, "abort")}}.run(t)
	require.Equal(t, 134, res.exit, "a rank's SIGABRT through the launcher; stderr:\n%s", res.stderr)
	require.Equal(t, 134, intField(t, res.stdout, "status"))
}

// subshellScript forks 50 subshells (command substitutions and background
// jobs, which fork without exec), then runs its arguments; it prints the
// wall time the subshells took, measured inside the script, and (bash's
// times builtin) the CPU time of the shell and of its finished children.
const subshellScript = `s=$(date +%s%N)
for i in $(seq 1 25); do v=$(echo $i); ( : ) & done; wait
e=$(date +%s%N)
echo "subshells=50 ns=$((e-s))"
times
"$@"`

// cpuSeconds sums the user and system times bash's times builtin printed.
func cpuSeconds(t testing.TB, out string) float64 {
	m := regexp.MustCompile(`(\d+)m(\d+\.\d+)s`).FindAllStringSubmatch(out, -1)
	require.Len(t, m, 4, "the times builtin's output:\n%s", out)
	total := 0.0
	for _, x := range m {
		min, _ := strconv.ParseFloat(x[1], 64)
		sec, _ := strconv.ParseFloat(x[2], 64)
		total += 60*min + sec
	}
	return total
}

// A script that forks 50 subshells before running the app does not hang
// under the profiler (bash forks without exec are where injected runtimes
// deadlock) and the app's records are all there.
func TestFiftySubshellsDoNotHang(t *testing.T) {
	t.Parallel()
	res := profiled{opts: traceOpts, argv: []string{"/bin/bash", "-c", subshellScript, "script", app(t, "multistream"), "1", "2"}}.run(t)
	require.Equal(t, 0, res.exit, "stderr:\n%s", res.stderr)
	require.Equal(t, 50, intField(t, res.stdout, "subshells"))
	out := readOutputs(t, res.dir)
	pids := out.pids("kernel_trace")
	require.Len(t, pids, 1)
	require.Equal(t, intField(t, res.stdout, "dispatches"), out.appKernels(t, pids[0]))
	report(t, "exit %d; subshells: 50 in %.1f ms wall, script CPU %.0f ms; dispatches: expected %d, found %d; %.1fs",
		res.exit, float64(intField(t, res.stdout, "ns"))/1e6, 1e3*cpuSeconds(t, res.stdout), intField(t, res.stdout, "dispatches"), out.appKernels(t, pids[0]), res.duration.Seconds())
}

// The app cannot be found: 127 and a message naming it; nothing written,
// not even the output directory (it is not created: the app is looked up
// first). The same for a file that is not executable.
func TestMissingApp(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "out")
	res := profiled{opts: traceOpts, argv: []string{"no-such-app-xyz"}, dir: out}.run(t)
	require.Equal(t, 127, res.exit)
	require.Contains(t, res.stderr, `"no-such-app-xyz" not found`)
	require.NoDirExists(t, out, "the output directory is not created for an app that cannot run")
	notExec := filepath.Join(t.TempDir(), "app.sh")
	require.NoError(t, os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644))
	res2 := profiled{opts: traceOpts, argv: []string{notExec}, dir: out}.run(t)
	require.Equal(t, 127, res2.exit, "stderr:\n%s", res2.stderr)
	require.Contains(t, res2.stderr, "is not an executable file")
	require.NoDirExists(t, out)
	entries, _ := os.ReadDir(res.dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	report(t, "exit %d; stderr %q; files in the output directory: %v", res.exit, strings.TrimSpace(res.stderr), names)
}
