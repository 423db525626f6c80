package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/aql"
	"github.com/rocprof-go/rocprof-go/internal/counters"
)

// BenchmarkCounterCollectionOverheadPerDispatch runs N tiny kernels on one
// stream with kernel tracing, with and without counter collection (SQ_WAVES
// on every dispatch). Target (issue 8): <= 10 us of host time per profiled
// dispatch beyond the serialisation wait. The shim times itself
// (ROCPROF_GO_PMC_TIMING=1): host-ns is the app thread's time in the
// packet expansion minus its waits for a free slot (the serialisation wait),
// complete-ns the completion thread's decoding, evaluation and recording.
// The paired runs add what the whole process pays, the virtual GPU's
// emulation of the extra packets and the serialised round trips included.
func BenchmarkCounterCollectionOverheadPerDispatch(b *testing.B) {
	n := envInt("ROCPROF_GO_BENCH_PMC_DISPATCHES", 5000)
	trace := []string{"ROCPROF_KERNEL_TRACE=1"}
	pmc := append(counterVars("pmc: SQ_WAVES", "ROCPROF_GO_PMC_TIMING=1"), trace...)
	for i := 0; i < b.N; i++ {
		var base, prof []measured
		host, complete := math.Inf(1), math.Inf(1)
		for p := 0; p < benchPairs; p++ {
			base = append(base, measure(b, true, trace, "multistream", "bench", strconv.Itoa(n)))
			r := runApp(b, pmc, "multistream", "bench", strconv.Itoa(n))
			require.Zero(b, r.exitCode, r.stderr)
			var st struct{ profiled, barriers, completed, skipped, filtered, expand, wait, comp float64 }
			line := r.stderr[strings.Index(r.stderr, "rocprof-go pmc:"):]
			_, err := fmt.Sscanf(line, "rocprof-go pmc: profiled=%g barriers=%g completed=%g skipped=%g "+
				"filtered=%g expand_ns=%g wait_ns=%g complete_ns=%g", &st.profiled, &st.barriers,
				&st.completed, &st.skipped, &st.filtered, &st.expand, &st.wait, &st.comp)
			require.NoError(b, err, r.stderr)
			require.GreaterOrEqual(b, st.profiled, float64(n)) // + the app's set-up kernels
			require.Equal(b, st.profiled, st.completed)
			host = min(host, (st.expand-st.wait)/st.profiled)
			complete = min(complete, st.comp/st.completed)
			prof = append(prof, measure(b, true, pmc, "multistream", "bench", strconv.Itoa(n)))
		}
		b.ReportMetric(host, "host-ns/profiled-dispatch")
		b.ReportMetric(complete, "complete-ns/profiled-dispatch")
		b.ReportMetric((minF(threadCPU(b, prof))-minF(threadCPU(b, base)))/float64(n),
			"app-thread-cpu-ns-added/dispatch")
		b.ReportMetric(float64(best(prof, cpuOf)-best(base, cpuOf))/float64(n), "cpu-ns-added/dispatch")
		b.ReportMetric(float64(best(prof, wallOf)-best(base, wallOf))/float64(n), "wall-ns-added/dispatch")
	}
}

// BenchmarkPMCDecodeAndEvaluate is the completion thread's Go work per
// profiled dispatch: decode the output buffer, collect, evaluate.
func BenchmarkPMCDecodeAndEvaluate(b *testing.B) {
	db, err := counters.ForAgent("gfx90a")
	require.NoError(b, err)
	plan, err := db.Validate([]string{"SQ_WAVES", "GPU_UTIL"}, 0)
	require.NoError(b, err)
	var arena aql.Arena
	arena.Next = 0x10000
	p, err := db.Device.BuildPMC(plan.Passes[0].Events, arena.Alloc)
	require.NoError(b, err)
	buf := make([]byte, p.OutputSize)
	g := &pmcGroup{inputs: planInputs(db, p)}
	in := counters.Inputs{}
	var cs []*counters.Counter
	for _, n := range []string{"SQ_WAVES", "GPU_UTIL"} {
		c, _ := db.Lookup(n)
		cs = append(cs, c)
	}
	b.ReportAllocs()
	for b.Loop() {
		g.collect(buf, in)
		for _, c := range cs {
			if _, err := db.Evaluate(c, in); err != nil {
				b.Fatal(err)
			}
		}
	}
}
