package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// Each benchmark runs the same app with and without the profiler in the same
// run, alternating, and reports the difference (the best of a few pairs, as
// the machine is shared). Targets (issue 5): kernel tracing adds <= 1 us per
// dispatch over 100k tiny kernels, HSA API tracing <= 20 ns per traced call,
// and the libraries add <= 64 MiB of RSS.

// measured is one app run.
type measured struct {
	wall     time.Duration
	cpu      time.Duration // user + system
	maxRSS   int64         // bytes
	stdout   string
	stderr   string
	recorded map[tracing.Kind]uint64 // a profiled run's records per kind
}

func measure(b *testing.B, profiled bool, vars []string, app string, args ...string) measured {
	b.Helper()
	return measureBuilt(b, profiled, vars, "test/shim/"+app, args...)
}

// measureBuilt runs a program of the build directory (rel) once on the
// host's ROCm.
func measureBuilt(b *testing.B, profiled bool, vars []string, rel string, args ...string) measured {
	b.Helper()
	return measureOn(b, hostRuntime, profiled, vars, artifact(b, rel), args...)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

const benchPairs = 3

// BenchmarkKernelTraceOverheadPerDispatch: n empty kernels back to back
// (multistream bench n), bare and with kernel tracing, on every runtime of
// the ROCm matrix (a sub-benchmark per runtime, with that runtime's own
// build of the app); each profiled run must record every dispatch.
// ROCPROF_GO_BENCH_PAIRS pairs (3 by default), the bare run first in every
// other pair. On the shared 2-vCPU guests single runs scatter by +-2.5 us
// per dispatch, more than the 1-us target (issue 41), so besides the
// difference of the best runs the benchmark reports the median of the
// pairs' own differences (wall-ns-added-median/dispatch).
func BenchmarkKernelTraceOverheadPerDispatch(b *testing.B) {
	n := envInt("ROCPROF_GO_BENCH_DISPATCHES", 100000)
	pairs := envInt("ROCPROF_GO_BENCH_PAIRS", benchPairs)
	vars := []string{"ROCPROF_KERNEL_TRACE=1"}
	for _, rt := range benchRuntimes(b) {
		app := shimApp(b, rt, "multistream")
		b.Run(rt.Name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var base, prof []measured
				for p := 0; p < pairs; p++ {
					if p%2 == 1 {
						prof = append(prof, measureOn(b, rt, true, vars, app, "bench", strconv.Itoa(n)))
					}
					base = append(base, measureOn(b, rt, false, nil, app, "bench", strconv.Itoa(n)))
					if p%2 == 0 {
						prof = append(prof, measureOn(b, rt, true, vars, app, "bench", strconv.Itoa(n)))
					}
				}
				requireRecorded(b, rt, prof, tracing.KindKernelDispatch, uint64(n))
				bw, pw := best(base, wallOf), best(prof, wallOf)
				bc, pc := best(base, cpuOf), best(prof, cpuOf)
				b.ReportMetric(float64(pw-bw)/float64(n), "wall-ns-added/dispatch")
				b.ReportMetric(float64(pc-bc)/float64(n), "cpu-ns-added/dispatch")
				b.ReportMetric(float64(pw)/float64(bw), "wall-ratio")
				// Each pair's own ratio (runs a second apart), median over the
				// pairs: steadier than the ratio of bests on a shared machine.
				var ratios, added []float64
				for p := range base {
					ratios = append(ratios, float64(prof[p].wall)/float64(base[p].wall))
					added = append(added, float64(prof[p].wall-base[p].wall)/float64(n))
				}
				b.ReportMetric(testsys.Median(ratios), "wall-ratio-median")
				b.ReportMetric(testsys.Median(added), "wall-ns-added-median/dispatch")
				b.ReportMetric(float64(bestRSS(prof)-bestRSS(base))/(1<<20), "MiB-RSS-added")
				b.ReportMetric((minF(threadCPU(b, prof))-minF(threadCPU(b, base)))/float64(n),
					"app-thread-cpu-ns-added/dispatch")
				b.ReportMetric(float64(pc)/float64(bc), "cpu-ratio")
			}
			testsys.ReportHost(b)
		})
	}
}

// threadCPU is the launching thread's CPU time the bench mode prints.
func threadCPU(b *testing.B, ms []measured) []float64 {
	var r []float64
	for _, m := range ms {
		var ns float64
		_, err := fmt.Sscanf(strings.TrimSpace(m.stdout), "%f thread-cpu-ns", &ns)
		require.NoError(b, err, "multistream printed %q", m.stdout)
		r = append(r, ns)
	}
	return r
}

// BenchmarkKernelTraceSubmitOverheadPerDispatch: the app's thread alone:
// raw HSA submission of 100k dispatches (25 rounds of 4000 wait in
// between), timed by the app around its submission loops, on every runtime
// of the ROCm matrix. This is the intercept path's cost (ROCR's intercept
// queue plus the shim's callback) without the virtual GPU's or HIP's
// waiting in the figure; each profiled run must record every dispatch.
func BenchmarkKernelTraceSubmitOverheadPerDispatch(b *testing.B) {
	const rounds, batch = 25, 4000
	vars := []string{"ROCPROF_KERNEL_TRACE=1"}
	args := []string{strconv.Itoa(rounds), strconv.Itoa(batch)}
	for _, rt := range benchRuntimes(b) {
		app := shimApp(b, rt, "dispatch")
		b.Run(rt.Name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var base, prof []float64
				var runs []measured
				for p := 0; p < benchPairs; p++ {
					base = append(base, submitNs(b, measureOn(b, rt, false, nil, app, args...)))
					runs = append(runs, measureOn(b, rt, true, vars, app, args...))
					prof = append(prof, submitNs(b, runs[len(runs)-1]))
				}
				requireRecorded(b, rt, runs, tracing.KindKernelDispatch, rounds*batch)
				b.ReportMetric(minF(prof)-minF(base), "app-thread-ns-added/dispatch")
				b.ReportMetric(minF(prof)/minF(base), "submit-ratio")
			}
			testsys.ReportHost(b)
		})
	}
}

func submitNs(b *testing.B, m measured) float64 {
	var ns float64
	_, err := fmt.Sscanf(strings.TrimSpace(m.stdout), "%f submit-ns/dispatch", &ns)
	require.NoError(b, err, "dispatch printed %q", m.stdout)
	return ns
}

// BenchmarkHSAAPITraceOverheadPerCall: agentinfo's hsa_agent_get_info loop
// bare, profiled with HSA tracing off (kernel tracing on: the branch only),
// and with HSA tracing on. The target (issue 5, <= 20 ns per traced call) is
// thread-cpu-ns-added/traced-call: the loop thread's own CPU time (what the
// app's thread pays, untouched by waiting for a core), from the fastest
// twentieth of each run's loop, as a difference against the bare run of the
// same round, median over the rounds. The test VMs switch between a fast and
// a slow state within seconds (the bare call then takes 9 or 14 ns); pairs
// taken within a second of each other see the same state, so the median of
// pair differences is steady where a difference of minima is not. The
// spool's pre-faulting thread works beside the loop: its CPU time is in
// cpu-ns-added/traced-call (whole process), not in the thread's.
func BenchmarkHSAAPITraceOverheadPerCall(b *testing.B) {
	n := envInt("ROCPROF_GO_BENCH_CALLS", 1000000)
	rounds := envInt("ROCPROF_GO_BENCH_ROUNDS", 10)
	for i := 0; i < b.N; i++ {
		var addWall, addCPU, addOff, ratio, baseCPU []float64
		var rssBase, rssOn []measured // also the CPU time of whole runs
		for r := 0; r < rounds; r++ {
			run := func(vars ...string) (measured, agentInfoTimes) {
				m := measure(b, len(vars) > 0, vars, "agentinfo", strconv.Itoa(n))
				return m, parseAgentInfo(b, m.stdout)
			}
			// Alternate the order, so that neither side always runs first.
			var base, off, on agentInfoTimes
			var mb, mon measured
			if r%2 == 0 {
				mb, base = run()
				_, off = run("ROCPROF_KERNEL_TRACE=1")
				mon, on = run("ROCPROF_HSA_CORE_API_TRACE=1")
			} else {
				mon, on = run("ROCPROF_HSA_CORE_API_TRACE=1")
				_, off = run("ROCPROF_KERNEL_TRACE=1")
				mb, base = run()
			}
			rssBase, rssOn = append(rssBase, mb), append(rssOn, mon)
			addWall = append(addWall, on.bestWall-base.bestWall)
			addCPU = append(addCPU, on.bestCPU-base.bestCPU)
			addOff = append(addOff, off.bestCPU-base.bestCPU)
			ratio = append(ratio, on.bestCPU/base.bestCPU)
			baseCPU = append(baseCPU, base.bestCPU)
		}
		b.ReportMetric(testsys.Median(addCPU), "thread-cpu-ns-added/traced-call")
		b.ReportMetric(testsys.Median(addWall), "ns-added/traced-call")
		b.ReportMetric(testsys.Median(addOff), "thread-cpu-ns-added/untraced-call")
		b.ReportMetric(testsys.Median(ratio), "call-ratio")
		b.ReportMetric(testsys.Median(baseCPU), "bare-thread-cpu-ns/call")
		// CPU time is steadier than the loop's wall time on a shared machine;
		// it includes the shim's one-off set-up (Go runtime, agent records).
		b.ReportMetric(float64(best(rssOn, cpuOf)-best(rssBase, cpuOf))/float64(n), "cpu-ns-added/traced-call")
		b.ReportMetric(float64(bestRSS(rssOn)-bestRSS(rssBase))/(1<<20), "MiB-RSS-added")
	}
	testsys.ReportHost(b)
}

// agentInfoTimes is agentinfo's fastest block: wall and thread CPU ns per call.
type agentInfoTimes struct{ bestWall, bestCPU float64 }

func parseAgentInfo(b *testing.B, out string) agentInfoTimes {
	var t agentInfoTimes
	_, after, ok := strings.Cut(out, "best-block ")
	require.True(b, ok, "agentinfo printed %q", out)
	_, err := fmt.Sscanf(after, "%f ns/call %f thread-cpu-ns/call", &t.bestWall, &t.bestCPU)
	require.NoError(b, err, "agentinfo printed %q", out)
	return t
}

func wallOf(m measured) time.Duration { return m.wall }
func cpuOf(m measured) time.Duration  { return m.cpu }

func best(ms []measured, f func(measured) time.Duration) time.Duration {
	r := f(ms[0])
	for _, m := range ms[1:] {
		r = min(r, f(m))
	}
	return r
}

func bestRSS(ms []measured) int64 {
	r := ms[0].maxRSS
	for _, m := range ms[1:] {
		r = min(r, m.maxRSS)
	}
	return r
}

func minF(v []float64) float64 {
	r := v[0]
	for _, x := range v[1:] {
		r = min(r, x)
	}
	return r
}

// BenchmarkCopyTraceCPUPerCopy: 64 threads launching kernels and making
// pinned async copies (launch_threads 64 30: 448 copies), with kernel
// tracing alone and with copy tracing too, alternating; reports the CPU time
// (user + system, whole process) copy tracing adds per traced copy. With the
// runtime's async-handler thread this was ~0.5 ms per copy (docs/shim.md);
// the shim's own completion thread polls and naps instead.
func BenchmarkCopyTraceCPUPerCopy(b *testing.B) {
	args := []string{"64", "30", artifact(b, "testdata/module_kernels.co")}
	kern := []string{"ROCPROF_KERNEL_TRACE=1"}
	copies := []string{"ROCPROF_KERNEL_TRACE=1", "ROCPROF_MEMORY_COPY_TRACE=1"}
	for i := 0; i < b.N; i++ {
		var bare, k, c []measured
		for p := 0; p < 5; p++ {
			bare = append(bare, measureBuilt(b, false, nil, "testdata/launch_threads", args...))
			k = append(k, measureBuilt(b, true, kern, "testdata/launch_threads", args...))
			c = append(c, measureBuilt(b, true, copies, "testdata/launch_threads", args...))
		}
		var n int
		_, err := fmt.Sscanf(c[0].stdout[strings.Index(c[0].stdout, "copies="):], "copies=%d", &n)
		require.NoError(b, err, c[0].stdout)
		require.Positive(b, n)
		med := func(ms []measured) time.Duration {
			v := make([]time.Duration, len(ms))
			for j, m := range ms {
				v[j] = m.cpu
			}
			slices.Sort(v)
			return v[len(v)/2]
		}
		b.ReportMetric(float64(med(c)-med(k))/float64(n)/1e3, "cpu-us-added/copy")
		b.ReportMetric(float64(med(k)-med(bare))/1e6, "kernel-trace-cpu-ms-added")
		b.ReportMetric(float64(med(bare))/1e6, "bare-cpu-ms")
		b.ReportMetric(float64(n), "copies")
		b.ReportMetric(float64(med(c))/float64(med(bare)), "cpu-ratio")
	}
	testsys.ReportHost(b)
}

// BenchmarkKernelTraceSyncPerLaunch: one tiny kernel then
// hipDeviceSynchronize, 2,000 times (tiny_kernels 2000 sync), bare and with
// kernel tracing, alternating; the loop's wall time per launch, median of
// the rounds' own ratios. Each synchronisation waits for a packet whose
// completion the shim passes on; before the waiting app thread finished
// that packet itself (shim_queue_assist) the loop ran 7-10x slower here.
func BenchmarkKernelTraceSyncPerLaunch(b *testing.B) {
	rounds := envInt("ROCPROF_GO_BENCH_ROUNDS", 6)
	perLaunch := func(m measured) float64 {
		_, after, ok := strings.Cut(m.stdout, "us_per_launch=")
		require.True(b, ok, "tiny_kernels printed %q", m.stdout)
		v, err := strconv.ParseFloat(strings.TrimSpace(after), 64)
		require.NoError(b, err, "tiny_kernels printed %q", m.stdout)
		return v
	}
	for i := 0; i < b.N; i++ {
		var bare, traced, ratio []float64
		for r := 0; r < rounds; r++ {
			mb := measureBuilt(b, false, nil, "testdata/tiny_kernels", "2000", "sync")
			mt := measureBuilt(b, true, []string{"ROCPROF_KERNEL_TRACE=1"}, "testdata/tiny_kernels", "2000", "sync")
			bare, traced = append(bare, perLaunch(mb)), append(traced, perLaunch(mt))
			ratio = append(ratio, perLaunch(mt)/perLaunch(mb))
		}
		b.ReportMetric(testsys.Median(bare), "bare-us/launch")
		b.ReportMetric(testsys.Median(traced), "traced-us/launch")
		b.ReportMetric(testsys.Median(ratio), "ratio")
	}
	testsys.ReportHost(b)
}

// BenchmarkSmallAppRSS: what the profiler adds to a small HIP app's memory:
// docapp (the documentation's ./app: two streams, eight kernels, copies both
// ways) bare and with kernel, HIP and copy tracing, in paired rounds of
// alternating order; the median over the rounds of each round's difference
// of maximum RSS, and of its ratio. Target (issue 23): <= 4 MiB. What it is
// made of (docs/shim.md, "Memory"): the Go runtime of the shim (its heap and
// relocated data; its code pages are given back after set-up,
// footprint.c), the preload library's code, ROCR's copy of each
// intercepted queue's ring (256 KiB per HIP stream queue) and the spool's
// first pages.
func BenchmarkSmallAppRSS(b *testing.B) {
	rounds := envInt("ROCPROF_GO_BENCH_ROUNDS", 9)
	vars := []string{"ROCPROF_KERNEL_TRACE=1", "ROCPROF_HIP_RUNTIME_API_TRACE=1", "ROCPROF_MEMORY_COPY_TRACE=1"}
	for i := 0; i < b.N; i++ {
		var added, ratio []float64
		for r := 0; r < rounds; r++ {
			var base, prof measured
			if r%2 == 0 {
				base = measureBuilt(b, false, nil, "testdata/docapp")
				prof = measureBuilt(b, true, vars, "testdata/docapp")
			} else {
				prof = measureBuilt(b, true, vars, "testdata/docapp")
				base = measureBuilt(b, false, nil, "testdata/docapp")
			}
			require.Positive(b, prof.recorded[tracing.KindKernelDispatch], "the profiled run recorded no dispatch")
			added = append(added, float64(prof.maxRSS-base.maxRSS)/(1<<20))
			ratio = append(ratio, float64(prof.maxRSS)/float64(base.maxRSS))
		}
		b.ReportMetric(testsys.Median(added), "MiB-RSS-added")
		b.ReportMetric(testsys.Median(ratio), "rss-ratio")
	}
	testsys.ReportHost(b)
}
