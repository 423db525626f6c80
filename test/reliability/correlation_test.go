package reliability

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// launchCalls are the HIP calls a kernel dispatch of launch_threads may name,
// with the kernel each launches.
var launchCalls = map[string]string{
	"hipLaunchKernel":       "tiny(int*)",
	"hipExtLaunchKernel":    "tiny(int*)",
	"hipModuleLaunchKernel": "module_fill",
}

// attribution is what checkAttribution found wrong; every field must be zero.
type attribution struct {
	notALaunch    int // an app dispatch whose id is no launch call's
	wrongKernel   int // ... is a launch of another kernel
	otherThread   int // ... whose Thread_Id is not the launching thread's
	shared        int // dispatches on a launch id that has more than one
	unmatched     int // launch calls without a dispatch
	mixedGrids    int // a thread's dispatches with more than one grid size
	mixedStreams  int // a thread's dispatches and copies on more than one stream
	blitNotACall  int // a runtime blit kernel whose id is no HIP call's
	copyNotACopy  int // a copy whose id is no hipMemcpyAsync's
	copyShared    int // copies on a hipMemcpyAsync id that has more than one
	copyUnmatched int // hipMemcpyAsync calls without a copy
	examples      []string
}

func (a *attribution) bad(counter *int, format string, args ...any) {
	*counter++
	if len(a.examples) < 10 {
		a.examples = append(a.examples, fmt.Sprintf(format, args...))
	}
}

func (a attribution) total() int {
	return a.notALaunch + a.wrongKernel + a.otherThread + a.shared + a.unmatched + a.mixedGrids +
		a.mixedStreams + a.blitNotACall + a.copyNotACopy + a.copyShared + a.copyUnmatched
}

func (a attribution) String() string {
	return fmt.Sprintf("not a launch %d, wrong kernel %d, other thread %d, sharing an id %d, launches without dispatch %d, "+
		"threads with mixed grids %d, with mixed streams %d, blits not under a HIP call %d, copies not under a hipMemcpyAsync %d, "+
		"sharing an id %d, hipMemcpyAsync without copy %d; e.g. %s",
		a.notALaunch, a.wrongKernel, a.otherThread, a.shared, a.unmatched, a.mixedGrids, a.mixedStreams,
		a.blitNotACall, a.copyNotACopy, a.copyShared, a.copyUnmatched, strings.Join(a.examples, "; "))
}

// checkAttribution checks, for one process of launch_threads (or
// multithread), that each dispatch and copy names the HIP call that caused
// it: the app's kernels exactly one launch call each, of their kernel, on the
// submitting thread; each thread's grids (its index) and stream are its own.
func checkAttribution(t testing.TB, out outputs, pid int) attribution {
	t.Helper()
	var a attribution
	api := out[pid]["hip_api_trace"]
	require.NotNil(t, api, "hip_api_trace of %d", pid)
	fc, cc, tc := api.col(t, "Function"), api.col(t, "Correlation_Id"), api.col(t, "Thread_Id")
	type call struct{ function, tid string }
	calls := map[string]call{}
	for _, r := range api.rows {
		require.NotContains(t, calls, r[cc], "correlation id %s appears twice in the HIP API trace", r[cc])
		calls[r[cc]] = call{r[fc], r[tc]}
	}
	threadGrid := map[string]map[string]bool{}
	threadStream := map[string]map[string]bool{}
	add := func(m map[string]map[string]bool, k, v string) {
		if m[k] == nil {
			m[k] = map[string]bool{}
		}
		m[k][v] = true
	}
	dispatchesOf := map[string]int{}
	kt := out[pid]["kernel_trace"]
	require.NotNil(t, kt, "kernel_trace of %d", pid)
	kc, kn, ktid := kt.col(t, "Correlation_Id"), kt.col(t, "Kernel_Name"), kt.col(t, "Thread_Id")
	kg, ks, kd := kt.col(t, "Grid_Size_X"), kt.col(t, "Stream_Id"), kt.col(t, "Dispatch_Id")
	for _, r := range kt.rows {
		c, ok := calls[r[kc]]
		if strings.HasPrefix(r[kn], "__amd_rocclr_") {
			if !ok {
				a.bad(&a.blitNotACall, "blit dispatch %s has id %s", r[kd], r[kc])
			}
			continue
		}
		want, launch := launchCalls[c.function]
		switch {
		case !ok || !launch:
			a.bad(&a.notALaunch, "dispatch %s (%s, thread %s) has id %s of %q", r[kd], r[kn], r[ktid], r[kc], c.function)
			continue
		case want != r[kn]:
			a.bad(&a.wrongKernel, "dispatch %s of %s has id %s of %s", r[kd], r[kn], r[kc], c.function)
		}
		if c.tid != r[ktid] {
			a.bad(&a.otherThread, "dispatch %s on thread %s has id %s of thread %s", r[kd], r[ktid], r[kc], c.tid)
		}
		dispatchesOf[r[kc]]++
		add(threadGrid, c.tid, r[kg])
		add(threadStream, c.tid, r[ks])
	}
	for id, n := range dispatchesOf {
		if n > 1 {
			a.bad(&a.shared, "%d dispatches on launch id %s", n, id)
		}
	}
	for id, c := range calls {
		if _, launch := launchCalls[c.function]; launch && dispatchesOf[id] == 0 {
			a.bad(&a.unmatched, "%s %s (thread %s) has no dispatch", c.function, id, c.tid)
		}
	}
	if mt := out[pid]["memory_copy_trace"]; mt != nil {
		mc, ms := mt.col(t, "Correlation_Id"), mt.col(t, "Stream_Id")
		copiesOf := map[string]int{}
		for _, r := range mt.rows {
			c, ok := calls[r[mc]]
			if !ok || c.function != "hipMemcpyAsync" {
				a.bad(&a.copyNotACopy, "copy on stream %s has id %s of %q", r[ms], r[mc], c.function)
				continue
			}
			copiesOf[r[mc]]++
			add(threadStream, c.tid, r[ms])
		}
		for id, n := range copiesOf {
			if n > 1 {
				a.bad(&a.copyShared, "%d copies on hipMemcpyAsync id %s", n, id)
			}
		}
		for id, c := range calls {
			if c.function == "hipMemcpyAsync" && copiesOf[id] == 0 {
				a.bad(&a.copyUnmatched, "hipMemcpyAsync %s (thread %s) has no copy", id, c.tid)
			}
		}
	}
	for tid, g := range threadGrid {
		if len(g) != 1 {
			a.bad(&a.mixedGrids, "thread %s's dispatches have grids %v", tid, keys(g))
		}
	}
	for tid, s := range threadStream {
		if len(s) != 1 {
			a.bad(&a.mixedStreams, "thread %s's dispatches and copies are on streams %v", tid, keys(s))
		}
	}
	return a
}

func keys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// 64 threads launching on their own streams at once (issue #6): every
// dispatch and every launch call is recorded, correlation ids are unique, and
// each dispatch's correlation id is its own launch's — not another thread's,
// and not a later call of its thread, even when the HSA runtime hands a
// packet to the queue callback on another thread or in a later call (the
// shim keys dispatches by their queue slot; docs/hip-roctx.md).
func Test64ThreadsOfLaunches(t *testing.T) {
	t.Parallel()
	const threads, launches = 64, 50
	res := profiled{opts: traceOpts, argv: []string{app(t, "multithread"), strconv.Itoa(threads), strconv.Itoa(launches)}}.run(t)
	require.Equal(t, 0, res.exit, "stderr:\n%s", res.stderr)
	want := intField(t, res.stdout, "dispatches")
	require.Equal(t, threads*launches, want)
	out := readOutputs(t, res.dir)
	pids := out.pids("kernel_trace")
	require.Len(t, pids, 1)
	pid := pids[0]
	require.Equal(t, want, out.appKernels(t, pid))
	require.Equal(t, want, out.apiCalls(t, pid, "hipLaunchKernel"))
	a := checkAttribution(t, out, pid)
	report(t, "exit %d; dispatches: expected %d, found %d; hipLaunchKernel: expected %d, found %d; misattributed: %d; %.1fs",
		res.exit, want, out.appKernels(t, pid), want, out.apiCalls(t, pid, "hipLaunchKernel"), a.total(), res.duration.Seconds())
	require.Zero(t, a.total(), "%s", a)
}

// The same with every kind of launch (hipLaunchKernel, hipExtLaunchKernel,
// hipModuleLaunchKernel) and async copies from 64 threads: each dispatch
// names its launch, each copy its hipMemcpyAsync.
func Test64ThreadsOfLaunchesAndCopies(t *testing.T) {
	t.Parallel()
	const threads, iterations = 64, 36
	res := profiled{opts: append([]string{"--memory-copy-trace"}, traceOpts...),
		argv: []string{app(t, "launch_threads"), strconv.Itoa(threads), strconv.Itoa(iterations), app(t, "module_kernels.co")}}.run(t)
	require.Equal(t, 0, res.exit, "stderr:\n%s", res.stderr)
	want := intField(t, res.stdout, "dispatches")
	require.Equal(t, threads*iterations, want)
	out := readOutputs(t, res.dir)
	pids := out.pids("kernel_trace")
	require.Len(t, pids, 1)
	pid := pids[0]
	require.Equal(t, want, out.appKernels(t, pid))
	require.Equal(t, intField(t, res.stdout, "launches"), out.apiCalls(t, pid, "hipLaunchKernel"))
	require.Equal(t, intField(t, res.stdout, "ext_launches"), out.apiCalls(t, pid, "hipExtLaunchKernel"))
	require.Equal(t, intField(t, res.stdout, "module_launches"), out.apiCalls(t, pid, "hipModuleLaunchKernel"))
	copies := intField(t, res.stdout, "copies")
	require.Equal(t, copies, out.apiCalls(t, pid, "hipMemcpyAsync"))
	require.Len(t, out[pid]["memory_copy_trace"].rows, copies)
	a := checkAttribution(t, out, pid)
	report(t, "exit %d; dispatches: expected %d, found %d; copies: expected %d, found %d; misattributed: %d; %.1fs",
		res.exit, want, out.appKernels(t, pid), copies, len(out[pid]["memory_copy_trace"].rows), a.total(), res.duration.Seconds())
	require.Zero(t, a.total(), "%s", a)
}
