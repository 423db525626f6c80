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

// The writers' memory must not grow with the trace (issue 43): the CLI's
// anonymous memory (RssAnon, sampled in a child process that only writes)
// stays under scaleBound whatever the record count, in every format. The
// spools are outputtest.ScaleSpool's (a multi-threaded app's HIP calls and
// kernels, both out of spool order, correlation ids in per-thread blocks).

const scaleBound = 512 << 20

var scaleFormats = []model.Format{model.FormatCSV, FormatJSON, FormatROCpd, FormatParquet, FormatPerfetto, FormatOTF2}

// scaleSpoolDir writes a scale spool of about n records into a new
// directory under parent and returns the directory and its records.
func scaleSpoolDir(t testing.TB, parent string, n int) (string, uint64) {
	dir, err := os.MkdirTemp(parent, "scale-")
	require.NoError(t, err)
	hip, kernels := outputtest.ScaleSpool(t, filepath.Join(dir, "rpg-4242-4242000000-0.spool"), n)
	return dir, hip + kernels
}

// scaleChild writes format from the spools of dir in a child process (this
// test binary, TestScaleWriterChild) with the order's spill threshold at
// spillAt (0: the default) and returns its peak RssAnon and CPU time.
func scaleChild(t testing.TB, format model.Format, dir string, spillAt int) (uint64, time.Duration) {
	out := filepath.Join(dir, "out-"+string(format))
	cmd := exec.Command(os.Args[0], "-test.run=^TestScaleWriterChild$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("ROCPROF_GO_SCALE_CHILD=%s|%s|%s|%d", format, dir, out, spillAt))
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	m := regexp.MustCompile(`scale-peak-anon-kB=(\d+)`).FindSubmatch(b)
	require.NotNil(t, m, "%s", b)
	kb, _ := strconv.ParseUint(string(m[1]), 10, 64)
	require.NoError(t, os.RemoveAll(out))
	return kb << 10, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// TestScaleWriterChild is the child process of scaleChild; it does nothing
// in a normal test run.
func TestScaleWriterChild(t *testing.T) {
	spec := os.Getenv("ROCPROF_GO_SCALE_CHILD")
	if spec == "" {
		return
	}
	parts := strings.Split(spec, "|")
	require.Len(t, parts, 4)
	if n, _ := strconv.Atoi(parts[3]); n > 0 {
		defer model.SetSpillThreshold(n)()
	}
	require.NoError(t, os.Mkdir(parts[2], 0o700))
	var peak uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go sampleAnonRSS(stop, &peak, done)
	_, err := Write(model.Config{Dir: parts[2], PrefixTemplate: "out", Formats: []model.Format{model.Format(parts[0])},
		SpillDir: parts[2]}, parts[1])
	close(stop)
	<-done
	require.NoError(t, err)
	fmt.Printf("scale-peak-anon-kB=%d\n", peak)
}

// TestWritingMemoryDoesNotGrowWithTheTrace: writing four times the records
// (500k and 2M) takes about the same anonymous memory in every format —
// before issue 43 this spool cost 64-75 bytes per record, ~100 MiB over
// these 1.5M records — and stays under the bound. The spill threshold is
// lowered to 32k values so that both sizes take the spilled paths, as
// every trace past 1M records does.
func TestWritingMemoryDoesNotGrowWithTheTrace(t *testing.T) {
	parent := t.TempDir()
	small, ns := scaleSpoolDir(t, parent, 500_000)
	large, nl := scaleSpoolDir(t, parent, 2_000_000)
	for _, f := range scaleFormats {
		a, _ := scaleChild(t, f, small, 32<<10)
		b, _ := scaleChild(t, f, large, 32<<10)
		t.Logf("%s: peak RssAnon %.1f MiB for %d records, %.1f MiB for %d", f, mib(a), ns, mib(b), nl)
		require.Less(t, b, uint64(scaleBound), "%s", f)
		// 24 MiB over 1.5M records: 17 bytes per record at most, a
		// quarter of before (sampling at 20 ms sees a peak late or early, and Go's
		// collector lets the heap reach twice what is live). Parquet's
		// row groups of 1M rows keep arrow-go's footer metadata (per row
		// group) to ~0.01 byte per record (docs/performance.md).
		require.Less(t, int64(b)-int64(a), int64(24<<20), "%s: %.1f MiB at %d records, %.1f MiB at %d", f, mib(a), ns, mib(b), nl)
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// BenchmarkWritingAtScale writes a scale spool of ROCPROF_GO_SCALE_RECORDS
// records (default 10M; `make scale-outputs` runs 100M) to every format,
// each in its own child process, and reports each one's peak RssAnon and
// records per second (wall) and per CPU-second; it fails when a format passes the bound. The
// spool is written under $TMPDIR (77 bytes per record) and removed.
func BenchmarkWritingAtScale(b *testing.B) {
	n := 10_000_000
	if v, err := strconv.Atoi(os.Getenv("ROCPROF_GO_SCALE_RECORDS")); err == nil && v > 0 {
		n = v
	}
	formats := scaleFormats
	if v := os.Getenv("ROCPROF_GO_SCALE_FORMATS"); v != "" {
		formats = nil
		for _, f := range strings.Split(v, ",") {
			formats = append(formats, model.Format(f))
		}
	}
	start := time.Now()
	dir, records := scaleSpoolDir(b, b.TempDir(), n)
	b.Logf("scale spool: %d records in %.0f s", records, time.Since(start).Seconds())
	b.ResetTimer()
	for range b.N {
		for _, f := range formats {
			start := time.Now()
			anon, cpu := scaleChild(b, f, dir, 0)
			wall := time.Since(start)
			b.Logf("%s: %d records, peak RssAnon %.1f MiB, %.0f s wall, %.2fM records/s, %.2fM records/CPU-s", f, records, mib(anon),
				wall.Seconds(), float64(records)/wall.Seconds()/1e6, float64(records)/cpu.Seconds()/1e6)
			b.ReportMetric(mib(anon), string(f)+"-peak-anon-MiB")
			// The writer's speed on this machine (make bench prints the
			// host beside it): records per second of wall time, of the
			// whole process (reading the spool, the order, the writing),
			// and per CPU-second.
			b.ReportMetric(float64(records)/wall.Seconds(), string(f)+"-records/s")
			b.ReportMetric(float64(records)/cpu.Seconds(), string(f)+"-records/cpu-s")
			require.Less(b, anon, uint64(scaleBound), "%s", f)
		}
	}
}

// BenchmarkOutputBytesPerRecord writes scale spools of one record kind
// each (ROCPROF_GO_SCALE_RECORDS, default 1M: HIP calls alone, then kernel
// dispatches alone; times jittered, as real clocks are) to every format and reports the outputs' bytes per
// record of each kind (<format>-<kind>-B/record): the figures of
// docs/performance.md's disk estimate and of the run's start line
// (pipeline's bytesPerRecord).
func BenchmarkOutputBytesPerRecord(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("ROCPROF_GO_SCALE_RECORDS")); err == nil && v > 0 {
		n = v
	}
	for range b.N {
		for _, kind := range []string{"hip", "kernel"} {
			dir, err := os.MkdirTemp(b.TempDir(), "kind-")
			require.NoError(b, err)
			hip, kernels := outputtest.ScaleSpoolOf(b, filepath.Join(dir, "rpg-4242-4242000000-0.spool"), n,
				outputtest.ScaleKinds{Calls: kind == "hip", Kernels: kind == "kernel", Jitter: true})
			records := hip + kernels
			for _, f := range scaleFormats {
				out := filepath.Join(dir, "out-"+string(f))
				require.NoError(b, os.Mkdir(out, 0o700))
				_, err := Write(model.Config{Dir: out, PrefixTemplate: "out", Formats: []model.Format{f}, SpillDir: out}, dir)
				require.NoError(b, err)
				size := treeBytes(b, out)
				b.Logf("%s, %d %s records: %d bytes, %.1f B/record", f, records, kind, size, float64(size)/float64(records))
				b.ReportMetric(float64(size)/float64(records), string(f)+"-"+kind+"-B/record")
				require.NoError(b, os.RemoveAll(out))
			}
			require.NoError(b, os.RemoveAll(dir))
		}
	}
}

// treeBytes is the bytes of the regular files under dir.
func treeBytes(t testing.TB, dir string) int64 {
	var n int64
	require.NoError(t, filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		st, err := d.Info()
		if err == nil {
			n += st.Size()
		}
		return err
	}))
	return n
}
