package reliability

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// traceOpts are the tracing options of most fault tests: kernels and the HIP
// API, as CSV, which the tests read back.
var traceOpts = []string{"--kernel-trace", "--hip-trace", "-f", "csv"}

// A crashing app (abort, SIGSEGV) keeps every record published before the
// crash: the completed dispatch and every HIP call that returned (the 100
// launches still in flight were published as API calls); rocprof-go exits
// with 128+signal.
func TestCrashKeepsPublishedRecords(t *testing.T) {
	for _, tc := range []struct {
		app  string
		exit int
	}{{"abort", 134}, {"segfault", 139}} {
		t.Run(tc.app, func(t *testing.T) {
			t.Parallel()
			res := profiled{opts: traceOpts, argv: []string{app(t, tc.app)}}.run(t)
			require.Equal(t, tc.exit, res.exit, "stderr:\n%s", res.stderr)
			completed := intField(t, res.stdout, "dispatches")
			out := readOutputs(t, res.dir)
			pids := out.pids("hip_api_trace")
			require.Len(t, pids, 1)
			kernels, launches := out.appKernels(t, pids[0]), out.apiCalls(t, pids[0], "hipLaunchKernel")
			require.GreaterOrEqual(t, kernels, completed, "completed dispatches")
			require.LessOrEqual(t, kernels, completed+100)
			require.Equal(t, completed+100, launches, "hipLaunchKernel calls")
			m := readManifest(t, res.dir)
			require.Equal(t, tc.exit, m.ExitStatus)
			requireManifestMatches(t, res.dir, m)
			report(t, "exit %d; dispatches completed before the crash: expected >= %d, found %d; hipLaunchKernel: expected %d, found %d; %.1fs",
				res.exit, completed, kernels, completed+100, launches, res.duration.Seconds())
		})
	}
}

// _exit runs no atexit handler and no destructor: nothing may depend on a
// flush at exit.
func TestUnderscoreExitKeepsPublishedRecords(t *testing.T) {
	t.Parallel()
	res := profiled{opts: traceOpts, argv: []string{app(t, "fault_exit"), "50", "3"}}.run(t)
	require.Equal(t, 3, res.exit, "the app's own exit code; stderr:\n%s", res.stderr)
	completed, launched := intField(t, res.stdout, "dispatches"), intField(t, res.stdout, "launches")
	out := readOutputs(t, res.dir)
	pids := out.pids("hip_api_trace")
	require.Len(t, pids, 1)
	kernels, launches := out.appKernels(t, pids[0]), out.apiCalls(t, pids[0], "hipLaunchKernel")
	require.GreaterOrEqual(t, kernels, completed)
	require.LessOrEqual(t, kernels, launched)
	require.Equal(t, launched, launches)
	require.Equal(t, 3, readManifest(t, res.dir).ExitStatus)
	report(t, "exit %d; dispatches: expected >= %d (<= %d), found %d; hipLaunchKernel: expected %d, found %d; %.1fs",
		res.exit, completed, launched, kernels, launched, launches, res.duration.Seconds())
}

// A traced copy is recorded before the app sees it complete (the shim's
// copy completion thread records it, then signals the app): copies that
// returned right before _exit are all there, with no exit drain to help.
func TestUnderscoreExitKeepsCompletedCopies(t *testing.T) {
	t.Parallel()
	opts := append([]string{"--memory-copy-trace"}, traceOpts...)
	res := profiled{opts: opts, argv: []string{app(t, "fault_exit"), "5", "3", "40"}}.run(t)
	require.Equal(t, 3, res.exit, "the app's own exit code; stderr:\n%s", res.stderr)
	copies := intField(t, res.stdout, "copies")
	out := readOutputs(t, res.dir)
	pids := out.pids("memory_copy_trace")
	require.Len(t, pids, 1)
	mt := out[pids[0]]["memory_copy_trace"]
	n := len(mt.where(t, "Direction", "MEMORY_COPY_HOST_TO_DEVICE"))
	require.GreaterOrEqual(t, n, copies, "every copy that returned before _exit")
	require.Equal(t, copies, out.apiCalls(t, pids[0], "hipMemcpy"))
	report(t, "copies returned before _exit: %d; host-to-device copies traced: %d", copies, n)
}

// SIGKILL gives the app no chance at all: every dispatch the app saw
// complete before the kill (its last progress line) must be in the trace.
func TestSIGKILLMidRunKeepsPublishedRecords(t *testing.T) {
	t.Parallel()
	lines, wait := profiled{opts: traceOpts, argv: []string{app(t, "fault_progress"), "10"}}.startWithProgress(t)
	pid, done := waitProgress(t, lines, 50)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	last := drain(lines, done)
	res := wait()
	require.Equal(t, 128+9, res.exit, "stderr:\n%s", res.stderr)
	out := readOutputs(t, res.dir)
	kernels := out.appKernels(t, pid)
	require.GreaterOrEqual(t, kernels, last, "dispatches reported complete before the kill")
	require.LessOrEqual(t, kernels, last+10)
	require.GreaterOrEqual(t, out.apiCalls(t, pid, "hipLaunchKernel"), kernels)
	m := readManifest(t, res.dir)
	require.Equal(t, 137, m.ExitStatus)
	requireManifestMatches(t, res.dir, m)
	report(t, "exit %d; dispatches reported before SIGKILL: expected >= %d, found %d; %.1fs", res.exit, last, kernels, res.duration.Seconds())
}

// Ctrl-C: SIGINT to rocprof-go (not from a terminal, so not already sent to
// the app's process group) is forwarded to the app, which dies of it; the
// outputs are still written and the exit status is 130.
func TestCtrlCIsForwardedAndOutputsWritten(t *testing.T) {
	t.Parallel()
	p := profiled{opts: traceOpts, argv: []string{app(t, "fault_progress"), "10"}}
	lines, wait := p.startWithProgress(t)
	pid, done := waitProgress(t, lines, 30)
	// The CLI is the only child of this test started with startWithProgress
	// here: signal its process (not its group: the app must get the signal
	// from rocprof-go).
	cliPid := parentOf(t, pid)
	require.NoError(t, syscall.Kill(cliPid, syscall.SIGINT))
	last := drain(lines, done)
	res := wait()
	require.Equal(t, 128+2, res.exit, "stderr:\n%s", res.stderr)
	out := readOutputs(t, res.dir)
	kernels := out.appKernels(t, pid)
	require.GreaterOrEqual(t, kernels, last)
	require.LessOrEqual(t, kernels, last+10)
	require.Equal(t, 130, readManifest(t, res.dir).ExitStatus)
	report(t, "exit %d; dispatches reported before SIGINT: expected >= %d, found %d; %.1fs", res.exit, last, kernels, res.duration.Seconds())
}

// parentOf reads a process's parent pid from /proc.
func parentOf(t testing.TB, pid int) int {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	require.NoError(t, err)
	// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
	s := string(data)
	i := len(s) - 1
	for i >= 0 && s[i] != ')' {
		i--
	}
	var state string
	var ppid int
	_, err = fmt.Sscan(s[i+1:], &state, &ppid)
	require.NoError(t, err)
	return ppid
}

// A hung app (one that never ends by itself) under --timeout: SIGTERM at the
// deadline, exit status 124, and everything recorded until then written.
func TestTimeoutStopsAHungApp(t *testing.T) {
	t.Parallel()
	lines, wait := profiled{opts: append([]string{"--timeout", "5s"}, traceOpts...), argv: []string{app(t, "fault_progress"), "10"}}.startWithProgress(t)
	last := drain(lines, 0)
	res := wait()
	require.Equal(t, 124, res.exit, "stderr:\n%s", res.stderr)
	m := readManifest(t, res.dir)
	require.True(t, m.TimedOut)
	require.Equal(t, 124, m.ExitStatus)
	requireManifestMatches(t, res.dir, m)
	out := readOutputs(t, res.dir)
	pids := out.pids("hip_api_trace")
	require.Len(t, pids, 1)
	kernels := out.appKernels(t, pids[0])
	require.GreaterOrEqual(t, kernels, last)
	require.LessOrEqual(t, kernels, last+10)
	report(t, "exit %d; dispatches reported before the timeout: expected >= %d, found %d; %.1fs", res.exit, last, kernels, res.duration.Seconds())
}
