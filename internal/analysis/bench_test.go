package analysis_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocprof-go/rocprof-go/internal/analysis"
	"github.com/rocprof-go/rocprof-go/internal/analysis/compare"
	"github.com/rocprof-go/rocprof-go/internal/analysis/convert"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdtest"
	"github.com/rocprof-go/rocprof-go/internal/analysis/summary"
	"github.com/rocprof-go/rocprof-go/internal/output"
)

// benchRecords is the size of the benchmark database: ten million records
// (half kernel dispatches, half HIP calls, each with its event row) unless
// ROCPROF_BENCH_RECORDS says otherwise.
func benchRecords() int {
	if v, err := strconv.Atoi(os.Getenv("ROCPROF_BENCH_RECORDS")); err == nil && v > 0 {
		return v
	}
	return 10_000_000
}

var (
	benchOnce sync.Once
	benchDir  string
	benchDB   string
	benchErr  error
)

// bigDB generates the database once per test binary.
func bigDB(b *testing.B) string {
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "rocprof-go-analysis-bench-")
		if benchErr != nil {
			return
		}
		benchDB = filepath.Join(benchDir, "big.db")
		benchErr = rocpdtest.WriteSynthetic(benchDB, rocpdtest.RankGUID(77), benchRecords())
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDB
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// resetPeakRSS starts a new peak-RSS window (Linux: writing 5 to clear_refs
// resets VmHWM), so the figure reported is the benchmarked work's, not the
// generator's.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// procStatus returns a /proc/self/status field in bytes.
func procStatus(field string) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb * 1024
		}
	}
	return 0
}

// measure runs fn b.N times and reports records/s, peak RSS and the Go
// heap's peak, the figures the bounded-memory target is about. Peak RSS
// (VmHWM) counts file pages mapped for reading — convert maps its spools —
// so the sampled peak of anonymous memory (RssAnon) is reported too: that
// is what the process itself holds.
func measure(b *testing.B, fn func() error) {
	runtime.GC()
	resetPeakRSS()
	var heapPeak uint64
	var anonPeak float64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			heapPeak = max(heapPeak, ms.HeapInuse)
			anonPeak = max(anonPeak, procStatus("RssAnon"))
			select {
			case <-stop:
				return
			default:
				// Pace the sampler so it costs little CPU.
				time.Sleep(20 * time.Millisecond)
			}
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := fn(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	close(stop)
	<-done
	b.ReportMetric(float64(benchRecords())*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(procStatus("VmHWM")/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(anonPeak/(1<<20), "peak-anon-MiB")
	b.ReportMetric(float64(heapPeak)/(1<<20), "peak-heap-MiB")
}

func BenchmarkSummary(b *testing.B) {
	db := bigDB(b)
	measure(b, func() error {
		s, err := summary.Build([]string{db}, summary.Options{ByRank: true})
		if err == nil && s.TopKernels[0].Calls == 0 {
			err = fmt.Errorf("empty summary")
		}
		return err
	})
}

func BenchmarkCompare(b *testing.B) {
	db := bigDB(b)
	measure(b, func() error {
		base, err := compare.Load(db)
		if err != nil {
			return err
		}
		next, err := compare.Load(db)
		if err != nil {
			return err
		}
		if rep := compare.Compare([]*compare.Run{base}, []*compare.Run{next}, compare.Options{Metric: compare.P95, Threshold: 0.05}); rep.Regressions != 0 {
			return fmt.Errorf("a run regressed against itself")
		}
		return nil
	})
}

func BenchmarkMerge(b *testing.B) {
	db := bigDB(b)
	small := filepath.Join(b.TempDir(), "small.db")
	if err := rocpdtest.Write(small, rocpdtest.Sample(0)); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(b.TempDir(), "merged.db")
	measure(b, func() error {
		res, err := rocpdread.Merge(context.Background(), out, []string{db, small})
		if err == nil && res.Rows["rocpd_kernel_dispatch"] < int64(benchRecords()/2) {
			err = fmt.Errorf("merge lost rows: %v", res.Rows)
		}
		return err
	})
}

func BenchmarkConvertCSV(b *testing.B) {
	path := bigDB(b)
	db, err := rocpdread.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	measure(b, func() error {
		dir, err := os.MkdirTemp(benchDir, "convert-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		res, err := convert.Run([]*rocpdread.DB{db}, convert.Options{Formats: []output.Format{output.FormatCSV}, Dir: dir})
		if err == nil && len(res.CSV) < 2 {
			err = fmt.Errorf("converted only %v", res.CSV)
		}
		return err
	})
}

func BenchmarkScan(b *testing.B) {
	db := bigDB(b)
	measure(b, func() error {
		n := 0
		err := analysis.Scan(db, func(*analysis.Event) error { n++; return nil })
		if err == nil && n < benchRecords() {
			err = fmt.Errorf("scanned %d events", n)
		}
		return err
	})
}
