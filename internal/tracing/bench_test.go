package tracing_test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// BenchmarkRecorder runs the C driver's timing loop: ns per traced call
// (correlation id, two rpg_now() and one HSA API record) and per rpg_now(),
// measured in C on a spool in /dev/shm.
func BenchmarkRecorder(b *testing.B) {
	dir, err := os.MkdirTemp("/dev/shm", "rpg-bench-")
	require.NoError(b, err)
	defer os.RemoveAll(dir)
	var recordNs, recordCPUNs, recordUserNs, nowNs float64
	for i := 0; i < b.N; i++ {
		out, err := driverCmd(b, dir, "bench", "0", "2000000").Output()
		require.NoError(b, err)
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) != 2 {
				continue
			}
			v, _ := strconv.ParseFloat(f[1], 64)
			switch f[0] {
			case "record_ns":
				recordNs += v
			case "record_cpu_ns":
				recordCPUNs += v
			case "record_user_ns":
				recordUserNs += v
			case "now_ns":
				nowNs += v
			}
		}
		require.NoError(b, os.RemoveAll(dir))
		require.NoError(b, os.Mkdir(dir, 0o700))
	}
	b.ReportMetric(recordNs/float64(b.N), "ns/traced-call")
	b.ReportMetric(recordCPUNs/float64(b.N), "cpu-ns/traced-call")
	// User time alone: the recorder's own work, without the kernel's cost of
	// handing out fresh spool pages.
	b.ReportMetric(recordUserNs/float64(b.N), "user-ns/traced-call")
	b.ReportMetric(nowNs/float64(b.N), "ns/rpg_now")
}

// BenchmarkPreloadStartup measures what LD_PRELOAD of the library adds to
// the start of a process that records nothing (target ≤ 0.5 ms).
func BenchmarkPreloadStartup(b *testing.B) {
	_, lib := buildNative(b)
	run := func(preload bool, n int) time.Duration {
		start := time.Now()
		for i := 0; i < n; i++ {
			cmd := exec.Command("/bin/true")
			cmd.Env = []string{"ROCPROF_KERNEL_TRACE=1"}
			if preload {
				cmd.Env = append(cmd.Env, "LD_PRELOAD="+lib)
			}
			require.NoError(b, cmd.Run())
		}
		return time.Since(start)
	}
	const n = 200
	var with, without time.Duration
	for i := 0; i < b.N; i++ {
		// Interleaved halves so that load changes hit both sides alike.
		without += run(false, n/2)
		with += run(true, n/2)
		without += run(false, n/2)
		with += run(true, n/2)
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n*b.N) }
	b.ReportMetric(per(with)-per(without), "µs-added/process")
	b.ReportMetric(per(without), "µs/process-baseline")
	b.ReportMetric(per(with)/per(without), "startup-ratio")
	testsys.ReportHost(b)
}

// BenchmarkReader streams 1M published records through Next and the typed
// decoders.
func BenchmarkReader(b *testing.B) {
	sp := spooltest.New(tracing.ProcessInfo{PID: 1})
	const n = 1_000_000
	for i := 0; i < n; i++ {
		if i%4 == 0 {
			sp.Add(tracing.KernelDispatch{DispatchID: uint64(i), Start: uint64(i), End: uint64(i) + 5})
		} else {
			sp.Add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 3,
				CorrelationID: uint64(i), Start: uint64(i), End: uint64(i) + 1})
		}
	}
	data := sp.Bytes()
	b.ResetTimer()
	var sum uint64
	for i := 0; i < b.N; i++ {
		r, err := tracing.NewReader(data)
		require.NoError(b, err)
		for r.Next() {
			switch r.Kind() {
			case tracing.KindKernelDispatch:
				sum += r.KernelDispatch().End
			default:
				sum += r.APICall().End
			}
		}
		require.Equal(b, uint64(n), r.Stats().Records)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	_ = sum
}
