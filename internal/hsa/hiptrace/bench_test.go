package hiptrace

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

var callRateLine = regexp.MustCompile(` ns_per_call=([0-9.]+) .*thread_cpu_ns_per_call=([0-9.]+) thread_faults=([0-9]+)`)

// rate is what one run of the call-rate loop printed: the median 10k-call
// slice (ns per call), the calling thread's own CPU time per call and the
// page faults that thread took during the loop.
type rate struct {
	ns, cpuNs, faults float64
}

// callRate runs the call-rate loop once on a runtime and returns what it
// printed and the records per kind the run's spools hold.
func callRate(b *testing.B, rt rocmmatrix.Runtime, r run, spools string) (rate, map[tracing.Kind]uint64) {
	out, recorded := r.execOn(b, rt, spools)
	m := callRateLine.FindStringSubmatch(out)
	require.NotNil(b, m, "ROCm %s: %s printed %q", rt.Name, r.app, out)
	var v [3]float64
	for i := range v {
		var err error
		v[i], err = strconv.ParseFloat(m[i+1], 64)
		require.NoError(b, err)
	}
	return rate{ns: v[0], cpuNs: v[1], faults: v[2]}, recorded
}

// BenchmarkHIPCallRate times 2M cheap HIP calls (hipGetDevice,
// hipPeekAtLastError) five ways: without the profiler, with the preload
// library and HIP tracing off, with HIP runtime tracing as `-f csv` records
// it, with the arguments captured as the default ROCpd output (and JSON,
// Perfetto) asks (ROCPROF_GO_HIP_ARGS=1), and with only kernel tracing on
// (correlation ids, no HIP records). It runs on every runtime of the ROCm
// matrix (a sub-benchmark per runtime, with that runtime's own build of
// hip_calls_rate); a traced run must record every call. The app reports
// the median of its 10k-call slices (preempted slices are outliers on a
// shared machine).
//
// The machines this runs on switch between a fast and a slow state for
// minutes at a time (the untraced loop at 13 or 21 ns per call), so the
// variants run in rounds of one run each, in rotating order, and every
// figure is the median over the rounds of the round's own ratio or
// difference against its bare run (runs a second apart). Targets (issue
// 23): on/base-median <= 2.0, args-on/base-median <= 2.3; off adds <= 2 ns;
// (issue 41) on-added-ns <= two rdtsc-ns + 10 ns.
//
// Besides the wall time of the median slice, each round gives the calling
// thread's own CPU time per call (on-added-thread-cpu-ns: what other
// processes take from the thread does not count, so it holds on a loaded
// machine) and the page faults that thread took while tracing
// (on-thread-faults, the median over the rounds): spool pages the
// pre-faulting helper had not made ready in time, which the app's thread
// then faulted in itself (2-4 us each on the KVM guests here, more on
// memory the host has not backed yet).
func BenchmarkHIPCallRate(b *testing.B) {
	spools := b.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		d, err := os.MkdirTemp("/dev/shm", "hiptrace-bench-")
		require.NoError(b, err)
		b.Cleanup(func() { os.RemoveAll(d) })
		spools = d
	}
	const calls = 2000000
	rounds := 10
	if v, err := strconv.Atoi(os.Getenv("ROCPROF_GO_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	app, args := "hip_calls_rate", []string{strconv.Itoa(calls)}
	trace := "ROCPROF_HIP_RUNTIME_API_TRACE=1"
	variants := []run{
		{app: app, args: args},                // 0: no profiler
		{app: app, args: args, preload: true}, // 1: tracing off
		{app: app, args: args, preload: true, env: []string{trace, "ROCPROF_GO_HIP_ARGS=0"}}, // 2: -f csv
		{app: app, args: args, preload: true, env: []string{trace, "ROCPROF_GO_HIP_ARGS=1"}}, // 3: ROCpd
		// Kernel tracing alone: HIP calls only get correlation ids (no shim
		// here, so nothing else happens).
		{app: app, args: args, preload: true, env: []string{"ROCPROF_KERNEL_TRACE=1"}}, // 4
	}
	for _, rt := range benchRuntimes(b) {
		b.Run(rt.Name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				ns := make([][]rate, len(variants)) // per variant, per round
				for r := 0; r < rounds; r++ {
					for j := range variants {
						k := (j + r) % len(variants) // rotate who runs first
						dir, err := os.MkdirTemp(spools, "run-")
						require.NoError(b, err)
						v, recorded := callRate(b, rt, variants[k], dir)
						if k == 2 || k == 3 { // traced: every call is recorded
							n := recorded[tracing.KindHIPAPI]
							require.GreaterOrEqual(b, n, uint64(calls),
								"ROCm %s: HIP tracing recorded %d calls, want at least %d", rt.Name, n, calls)
						}
						require.NoError(b, os.RemoveAll(dir))
						ns[k] = append(ns[k], v)
					}
				}
				ratio := func(k int) float64 {
					var v []float64
					for r := range ns[k] {
						v = append(v, ns[k][r].ns/ns[0][r].ns)
					}
					return testsys.Median(v)
				}
				added := func(k int) float64 {
					var v []float64
					for r := range ns[k] {
						v = append(v, ns[k][r].ns-ns[0][r].ns)
					}
					return testsys.Median(v)
				}
				addedCPU := func(k int) float64 {
					var v []float64
					for r := range ns[k] {
						v = append(v, ns[k][r].cpuNs-ns[0][r].cpuNs)
					}
					return testsys.Median(v)
				}
				faults := func(k int) float64 {
					var v []float64
					for r := range ns[k] {
						v = append(v, ns[k][r].faults)
					}
					return testsys.Median(v)
				}
				b.ReportMetric(ratio(2), "on/base-median")
				b.ReportMetric(ratio(3), "args-on/base-median")
				b.ReportMetric(ratio(1), "off/base-median")
				b.ReportMetric(ratio(4), "ids/base-median")
				var base []float64
				for r := range ns[0] {
					base = append(base, ns[0][r].ns)
				}
				b.ReportMetric(testsys.Median(base), "base-ns/call")
				b.ReportMetric(added(1), "off-added-ns")
				b.ReportMetric(added(2), "on-added-ns")
				b.ReportMetric(added(3), "args-on-added-ns")
				b.ReportMetric(added(4), "ids-only-added-ns")
				b.ReportMetric(addedCPU(2), "on-added-thread-cpu-ns")
				b.ReportMetric(addedCPU(3), "args-on-added-thread-cpu-ns")
				b.ReportMetric(faults(2), "on-thread-faults")
			}
			testsys.ReportHost(b)
		})
	}
}
