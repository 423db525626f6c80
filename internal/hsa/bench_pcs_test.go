package main

import (
	"strconv"
	"testing"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// BenchmarkPCSamplingHostTrapOverhead: the cost of host-trap PC sampling
// (docs/pc-sampling.md) on the app, as a ratio against the same app without
// the profiler in the same run, on the runtimes that offer it (ROCm 6.4
// and 7.2; gfx90a, the virtual GPU's default). The app is the dispatch
// benchmark's (multistream bench N: N empty kernels back to back, one
// sync), with what the CLI sets for --pc-sampling-method host_trap
// --pc-sampling-unit time --pc-sampling-interval I and nothing else: the
// shim's intercept marker before each dispatch, ROCR's sampling thread and
// the copy of its buffers into the spool, and the virtual GPU's trap
// writes (a GPU's own work on hardware). At 1 us every dispatch (one wave,
// about 2 us) is sampled; at 1000 us almost none is, which leaves the
// per-dispatch cost. Each profiled run must record every dispatch's
// marker and, at 1 us, samples.
func BenchmarkPCSamplingHostTrapOverhead(b *testing.B) {
	n := envInt("ROCPROF_GO_BENCH_PCS_DISPATCHES", 20000)
	for _, rt := range benchRuntimes(b) {
		if rt.Name != "6.4" && rt.Name != "7.2" {
			continue // ROCR offers hsa_ven_amd_pcs from 6.4 on
		}
		app := shimApp(b, rt, "multistream")
		for _, interval := range []int{1, 1000} {
			vars := []string{"ROCPROF_PC_SAMPLING_METHOD=host_trap", "ROCPROF_PC_SAMPLING_UNIT=time",
				"ROCPROF_PC_SAMPLING_INTERVAL=" + strconv.Itoa(interval)}
			b.Run(rt.Name+"/interval="+strconv.Itoa(interval)+"us", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					var base, prof []measured
					for p := 0; p < benchPairs; p++ {
						base = append(base, measureOn(b, rt, false, nil, app, "bench", strconv.Itoa(n)))
						prof = append(prof, measureOn(b, rt, true, vars, app, "bench", strconv.Itoa(n)))
					}
					requireRecorded(b, rt, prof, tracing.KindPCSampleDispatch, uint64(n))
					if interval == 1 {
						requireRecorded(b, rt, prof, tracing.KindPCSample, 1)
					}
					bw, pw := best(base, wallOf), best(prof, wallOf)
					bc, pc := best(base, cpuOf), best(prof, cpuOf)
					b.ReportMetric(float64(pw)/float64(bw), "wall-ratio")
					var ratios []float64
					for p := range base {
						ratios = append(ratios, float64(prof[p].wall)/float64(base[p].wall))
					}
					b.ReportMetric(testsys.Median(ratios), "wall-ratio-median")
					b.ReportMetric(float64(pc)/float64(bc), "cpu-ratio")
					b.ReportMetric(float64(pw-bw)/float64(n), "wall-ns-added/dispatch")
					b.ReportMetric(float64(bestRSS(prof)-bestRSS(base))/(1<<20), "MiB-RSS-added")
				}
				testsys.ReportHost(b)
			})
		}
	}
}
