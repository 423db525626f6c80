package output

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// cpuSeconds is the process's user+system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// discardFS measures formatting without the disk.
type discardFS struct{}

type discardFile struct{}

func (discardFile) Write(p []byte) (int, error) { return len(p), nil }
func (discardFile) Commit() error               { return nil }
func (discardFile) Abort()                      {}

func (discardFS) MkdirAll(string) error                   { return nil }
func (discardFS) Create(string) (model.OutputFile, error) { return discardFile{}, nil }

// csvBenchSpool writes a spool of n mixed records (API calls, dispatches,
// copies, markers, allocations) shaped like a HIP app's trace.
func csvBenchSpool(b testing.TB, dir string, n int) {
	sp := spooltest.New(tracing.ProcessInfo{PID: 1, StartBoottimeNs: 1, Hostname: "h"})
	for i := 0; i < 8; i++ {
		sp.Add(tracing.String{Table: uint32(tracing.DomainHIPRuntime), ID: uint64(i),
			Value: []byte("hipFunction" + string(rune('A'+i)))})
	}
	sp.Add(outputtest.Agent(0, 0, 0, tracing.AgentCPU, "cpu"))
	sp.Add(outputtest.Agent(1, 1, 0, tracing.AgentGPU, "gpu"))
	for k := uint64(1); k <= 4; k++ {
		sp.Add(tracing.KernelSymbol{KernelID: k, GroupSegmentSize: 1024, VGPRCount: 16,
			SGPRCount: 24, Name: []byte("_Z15addition_kernelPfPKfS1_ii.kd")})
	}
	t := uint64(1_000_000_000)
	for i := 0; i < n; i++ {
		t += 1000
		c := uint64(i + 1)
		switch i % 20 {
		case 0, 1, 2, 3, 4, 5, 6, 7:
			sp.Add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: uint32(i % 8),
				TID: 1001, CorrelationID: c, Start: t, End: t + 500})
		case 8, 9, 10, 11:
			sp.Add(tracing.APICall{Domain: tracing.DomainHSACore, Function: uint32(i % 4),
				TID: 1001, CorrelationID: c, Start: t, End: t + 40})
		case 12, 13, 14, 15:
			sp.Add(tracing.KernelDispatch{AgentNode: 1, TID: 1001, QueueID: 1, DispatchID: c,
				KernelID: uint64(i%4) + 1, CorrelationID: c, Start: t, End: t + 20000,
				Grid: [3]uint32{1 << 20, 1, 1}, Workgroup: [3]uint32{256, 1, 1}})
		case 16, 17:
			sp.Add(tracing.MemoryCopy{Direction: tracing.CopyHostToDevice, DstAgentNode: 1,
				Bytes: 1 << 20, CorrelationID: c, Start: t, End: t + 9000})
		case 18:
			sp.Add(tracing.Marker{Domain: tracing.DomainMarkerCoreRange,
				Function: tracing.MarkerThreadRange, TID: 1001, CorrelationID: c, Start: t,
				End: t + 100000, Message: []byte("iteration")})
		case 19:
			sp.Add(tracing.MemoryAllocation{Operation: tracing.AllocAllocate, AgentNode: 1,
				Address: 0x7f0000000000 + c, Size: 4096, CorrelationID: c, Start: t, End: t + 300})
		}
	}
	_, err := sp.WriteFile(dir)
	require.NoError(b, err)
}

// BenchmarkCSVWrite reports records/s from a spool into every CSV file plus
// the stats files (target: ≥ 3M records/s).
func BenchmarkCSVWrite(b *testing.B) {
	const n = 1_000_000
	spools := b.TempDir()
	csvBenchSpool(b, spools, n)
	for _, tc := range []struct {
		name string
		fs   model.FileSystem
	}{{"formatting", discardFS{}}, {"files", nil}} {
		b.Run(tc.name, func(b *testing.B) {
			out := b.TempDir()
			b.ResetTimer()
			cpu0 := cpuSeconds()
			for i := 0; i < b.N; i++ {
				res, err := Write(model.Config{Dir: out, Formats: []model.Format{model.FormatCSV}, Stats: true,
					PrefixTemplate: "bench", FS: tc.fs}, spools)
				require.NoError(b, err)
				require.Equal(b, uint64(n+14), res.Processes[0].Records)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
			// The machine is shared: records per CPU second is the steadier figure.
			b.ReportMetric(float64(n)*float64(b.N)/(cpuSeconds()-cpu0), "records/cpu-s")
		})
	}
}

// csvChildEnv names the spool directory a re-executed test binary converts
// (see TestHelperCSVChild), so that peak RSS is the writer's alone.
const csvChildEnv = "ROCPROF_GO_CSV_CHILD_SPOOLS"

// TestHelperCSVChild is not a test: it is the child process of
// BenchmarkCSVWrite5M, converting the spools named in its environment.
func TestHelperCSVChild(t *testing.T) {
	dir := os.Getenv(csvChildEnv)
	if dir == "" {
		return
	}
	out, err := os.MkdirTemp("", "rpg-csv-child-")
	require.NoError(t, err)
	defer os.RemoveAll(out)
	_, err = Write(model.Config{Dir: out, Formats: []model.Format{model.FormatCSV}, Stats: true,
		PrefixTemplate: "bench"}, dir)
	require.NoError(t, err)
	// VmHWM is this image's own peak (getrusage's maxrss of a child would
	// include the parent's at the time of the fork).
	status, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			fmt.Println("peak_rss_kib", strings.TrimSuffix(strings.TrimSpace(line[6:]), " kB"))
		}
	}
}

// BenchmarkCSVWrite5M converts a 5M-record spool in a child process and
// reports its records/s and peak RSS (targets: ≥ 3M/s, ≤ 256 MiB).
func BenchmarkCSVWrite5M(b *testing.B) {
	const n = 5_000_000
	spools := b.TempDir()
	csvBenchSpool(b, spools, n)
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCSVChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), csvChildEnv+"="+spools)
		start := time.Now()
		out, err := cmd.Output()
		require.NoError(b, err, string(out))
		var peakKiB float64
		for _, line := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(line, "peak_rss_kib "); ok {
				peakKiB, err = strconv.ParseFloat(v, 64)
				require.NoError(b, err)
			}
		}
		require.NotZero(b, peakKiB, "child did not report its peak RSS: %s", out)
		wall := time.Since(start).Seconds()
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		b.ReportMetric(float64(n)/wall, "records/s")
		b.ReportMetric(float64(n)/cpu, "records/cpu-s")
		b.ReportMetric(peakKiB/1024, "peak-RSS-MiB")
	}
}
