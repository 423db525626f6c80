package output

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
)

// Benchmarks write a spool of about 5M mixed records (every domain) in one
// process image, as a long single-process trace would leave it.

// benchIterations gives ~5M records (fixtureProcess emits ~7.75 per
// iteration); ROCPROF_GO_BENCH_ITERATIONS overrides it for quick runs.
var benchIterations = func() int {
	if n, err := strconv.Atoi(os.Getenv("ROCPROF_GO_BENCH_ITERATIONS")); err == nil && n > 0 {
		return n
	}
	return 5_000_000 * 4 / 31
}()

func benchRecords(n int) uint64 {
	var total uint64
	for _, c := range outputtest.Counts(n) {
		total += c
	}
	return total
}

// benchSpool returns a cached spool for n iterations (generated once per
// machine: it takes a few seconds and ~400 MB of /tmp).
func benchSpool(b testing.TB, n int) string {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("rocprof-go-bench-%d-v1.spool", n))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	tmp := path + ".tmp"
	outputtest.StreamSpool(b, tmp, 777, n)
	require.NoError(b, os.Rename(tmp, path))
	return path
}

func benchFormat(b *testing.B, format string) {
	spool := benchSpool(b, benchIterations)
	in := &model.Input{Spools: []string{spool}}
	f, err := LookupWriter(model.Format(format))
	require.NoError(b, err)
	dir := b.TempDir()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		require.NoError(b, f.Write(filepath.Join(dir, "out"), in))
	}
	el := time.Since(start)
	b.ReportMetric(float64(benchRecords(benchIterations))*float64(b.N)/el.Seconds(), "records/s")
	b.StopTimer()
	rss, anon, cpu := childPeakRSS(b, format, spool, dir)
	b.ReportMetric(rss, "peak-RSS-MiB")
	b.ReportMetric(anon, "peak-anon-RSS-MiB")
	// Wall time on a shared machine says little; CPU time of the writer
	// alone (the child) does.
	b.ReportMetric(float64(benchRecords(benchIterations))/cpu.Seconds(), "records/cpu-s")
}

func BenchmarkROCpd(b *testing.B)    { benchFormat(b, "rocpd") }
func BenchmarkParquet(b *testing.B)  { benchFormat(b, "parquet") }
func BenchmarkJSON(b *testing.B)     { benchFormat(b, "json") }
func BenchmarkPerfetto(b *testing.B) { benchFormat(b, "pftrace") }
func BenchmarkOTF2(b *testing.B)     { benchFormat(b, "otf2") }

// childPeakRSS writes the format once more in a child process (this test
// binary) and returns that process's peak RSS, which the benchmark's own
// process cannot report for one writer alone, and its peak anonymous RSS
// (the total less the spool's mapped pages, which the kernel can drop).
func childPeakRSS(b *testing.B, format, spool, dir string) (rss, anon float64, cpu time.Duration) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestOutputWriterChild$")
	cmd.Env = append(os.Environ(), "ROCPROF_GO_OUTPUT_CHILD="+format+"|"+spool+"|"+filepath.Join(dir, "child"))
	out, err := cmd.CombinedOutput()
	require.NoError(b, err, "%s", out)
	// The child's own high-water mark: rusage's maxrss would include the
	// parent's RSS at fork, which Linux carries over exec.
	m := regexp.MustCompile(`peak-anon-kB=(\d+) hwm-kB=(\d+)`).FindSubmatch(out)
	require.NotNil(b, m, "%s", out)
	akb, _ := strconv.ParseFloat(string(m[1]), 64)
	hkb, _ := strconv.ParseFloat(string(m[2]), 64)
	return hkb / 1024, akb / 1024, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// sampleAnonRSS records the highest RssAnon of this process until stop.
func sampleAnonRSS(stop <-chan struct{}, peak *uint64, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if b, err := os.ReadFile("/proc/self/status"); err == nil {
			if m := regexp.MustCompile(`RssAnon:\s+(\d+) kB`).FindSubmatch(b); m != nil {
				if v, _ := strconv.ParseUint(string(m[1]), 10, 64); v > *peak {
					*peak = v
				}
			}
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// TestOutputWriterChild is the child process of childPeakRSS; it does
// nothing in a normal test run.
func TestOutputWriterChild(t *testing.T) {
	spec := os.Getenv("ROCPROF_GO_OUTPUT_CHILD")
	if spec == "" {
		return
	}
	parts := strings.Split(spec, "|")
	require.Len(t, parts, 3)
	f, err := LookupWriter(model.Format(parts[0]))
	require.NoError(t, err)
	var peak uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go sampleAnonRSS(stop, &peak, done)
	require.NoError(t, f.Write(parts[2], &model.Input{Spools: []string{parts[1]}}))
	close(stop)
	<-done
	var hwm uint64
	if st, err := os.ReadFile("/proc/self/status"); err == nil {
		if m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(st); m != nil {
			hwm, _ = strconv.ParseUint(string(m[1]), 10, 64)
		}
	}
	fmt.Printf("peak-anon-kB=%d hwm-kB=%d\n", peak, hwm)
}
