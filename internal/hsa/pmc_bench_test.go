package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// BenchmarkCounterCollectionOverheadPerDispatch: multistream bench N (N
// tiny kernels back to back on one stream, one sync), without the profiler
// and with counter collection of one pmc line of two counters (SQ_WAVES
// GRBM_COUNT) on every dispatch, in paired rounds of alternating order; each
// figure is the median over the rounds of the round's own difference (or
// ratio) against the bare run. Targets (issue 23): the virtual GPU's
// command processor adds <= 30 us of CPU per counted dispatch (its vgpu-aql
// threads' CPU time, ROCPROF_VGPU_STATS=1), and the host-side work is <= 10
// us per counted dispatch. The shim times itself (ROCPROF_GO_PMC_TIMING=1):
// app-thread-host-us is the app thread's time in the packet expansion minus
// its waits for a free counter slot (the serialisation wait, reported on its
// own), completion-us the completion thread's decoding, evaluation and
// recording; host-us is their sum. The whole process's CPU and wall time add
// everything else (start-up of the shim included).
func BenchmarkCounterCollectionOverheadPerDispatch(b *testing.B) {
	n := envInt("ROCPROF_GO_BENCH_PMC_DISPATCHES", 2000)
	rounds := envInt("ROCPROF_GO_BENCH_ROUNDS", 5)
	stats := "ROCPROF_VGPU_STATS=1"
	pmc := counterVars("pmc: SQ_WAVES GRBM_COUNT", "ROCPROF_GO_PMC_TIMING=1", stats)
	args := []string{"bench", strconv.Itoa(n)}
	for i := 0; i < b.N; i++ {
		var vgpuAdd, vgpuRatio, appHost, complete, host, wait, wallAdd, wallRatio, cpuAdd, cpuRatio []float64
		for r := 0; r < rounds; r++ {
			var base, prof measured
			if r%2 == 0 {
				base = measure(b, false, []string{stats}, "multistream", args...)
				prof = measure(b, true, pmc, "multistream", args...)
			} else {
				prof = measure(b, true, pmc, "multistream", args...)
				base = measure(b, false, []string{stats}, "multistream", args...)
			}
			st := pmcTiming(b, prof.stderr)
			require.GreaterOrEqual(b, st.profiled, float64(n)) // + the app's set-up kernels
			require.Equal(b, st.profiled, st.completed)
			require.GreaterOrEqual(b, prof.recorded[tracing.KindCounterSample], uint64(n), "counter samples")
			va, vb := vgpuAQLNs(b, prof.stderr), vgpuAQLNs(b, base.stderr)
			vgpuAdd = append(vgpuAdd, (va-vb)/float64(n)/1e3)
			vgpuRatio = append(vgpuRatio, va/vb)
			appHost = append(appHost, (st.expand-st.wait)/st.profiled/1e3)
			complete = append(complete, st.comp/st.completed/1e3)
			host = append(host, appHost[r]+complete[r])
			wait = append(wait, st.wait/st.profiled/1e3)
			wallAdd = append(wallAdd, float64(prof.wall-base.wall)/float64(n)/1e3)
			wallRatio = append(wallRatio, float64(prof.wall)/float64(base.wall))
			cpuAdd = append(cpuAdd, float64(prof.cpu-base.cpu)/float64(n)/1e3)
			cpuRatio = append(cpuRatio, float64(prof.cpu)/float64(base.cpu))
		}
		b.ReportMetric(testsys.Median(vgpuAdd), "vgpu-cpu-us-added/dispatch")
		b.ReportMetric(testsys.Median(vgpuRatio), "vgpu-cpu-ratio")
		b.ReportMetric(testsys.Median(host), "host-us/dispatch")
		b.ReportMetric(testsys.Median(appHost), "app-thread-host-us/dispatch")
		b.ReportMetric(testsys.Median(complete), "completion-us/dispatch")
		b.ReportMetric(testsys.Median(wait), "serialisation-wait-us/dispatch")
		b.ReportMetric(testsys.Median(wallAdd), "wall-us-added/dispatch")
		b.ReportMetric(testsys.Median(wallRatio), "wall-ratio")
		b.ReportMetric(testsys.Median(cpuAdd), "cpu-us-added/dispatch")
		b.ReportMetric(testsys.Median(cpuRatio), "cpu-ratio")
	}
	testsys.ReportHost(b)
}

// pmcTimes is the shim's ROCPROF_GO_PMC_TIMING line (pmc.cpp print_timing).
type pmcTimes struct{ profiled, barriers, completed, skipped, filtered, expand, wait, comp float64 }

func pmcTiming(b *testing.B, stderr string) pmcTimes {
	var st pmcTimes
	i := strings.Index(stderr, "rocprof-go pmc:")
	require.GreaterOrEqual(b, i, 0, stderr)
	_, err := fmt.Sscanf(stderr[i:], "rocprof-go pmc: profiled=%g barriers=%g completed=%g skipped=%g "+
		"filtered=%g expand_ns=%g wait_ns=%g complete_ns=%g", &st.profiled, &st.barriers,
		&st.completed, &st.skipped, &st.filtered, &st.expand, &st.wait, &st.comp)
	require.NoError(b, err, stderr)
	return st
}

// vgpuAQLNs is the CPU time of the virtual GPU's AQL queue threads (its
// command processors) in a run with ROCPROF_VGPU_STATS=1.
func vgpuAQLNs(b *testing.B, stderr string) float64 {
	var ns float64
	i := strings.Index(stderr, "vgpu stats: aql_cpu_ns=")
	require.GreaterOrEqual(b, i, 0, stderr)
	_, err := fmt.Sscanf(stderr[i:], "vgpu stats: aql_cpu_ns=%g", &ns)
	require.NoError(b, err, stderr)
	require.Positive(b, ns)
	return ns
}
