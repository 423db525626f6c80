package vgpu

import (
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

func metric(b *testing.B, out, name string) float64 {
	m := regexp.MustCompile(name + `=([0-9.]+)`).FindStringSubmatch(out)
	if m == nil {
		b.Fatalf("no %s in %q", name, out)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		b.Fatal(err)
	}
	return v
}

// An idle virtual GPU (HIP initialised, 4 streams) must cost at most 5% of
// one core, under every runtime of the ROCm matrix.
func BenchmarkIdleCost(b *testing.B) {
	for _, rt := range runtimes(b) {
		b.Run("rocm"+rt.Name, func(b *testing.B) {
			bin := filepath.Join(rt.Apps, "idle")
			for i := 0; i < b.N; i++ {
				r := runOn(b, rt, time.Minute, nil, bin, "3")
				if r.code != 0 {
					b.Fatalf("idle exited %d: %s", r.code, r.stderr)
				}
				pct := metric(b, r.stdout, "idle_cpu_percent")
				b.ReportMetric(pct, "idle-%core")
				if pct > 5 {
					b.Errorf("ROCm %s: idle virtual GPU uses %.2f%% of a core, target <= 5%%", rt.Name, pct)
				}
			}
		})
	}
}

// Back-to-back tiny kernels: wall time per launch, end to end.
func BenchmarkTinyKernels(b *testing.B) {
	bin := artefact(b, "testdata/tiny_kernels")
	const n = 100000
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		r := run(b, 5*time.Minute, nil, bin, strconv.Itoa(n))
		if r.code != 0 {
			b.Fatalf("tiny_kernels exited %d: %s", r.code, r.stderr)
		}
		b.ReportMetric(float64(time.Since(t0).Nanoseconds())/n, "ns/launch")
	}
}

// Cheap HIP calls on the virtual GPU (the baseline for the tracer's overhead).
func BenchmarkHIPCallRate(b *testing.B) {
	bin := artefact(b, "testdata/callrate")
	for i := 0; i < b.N; i++ {
		r := run(b, time.Minute, nil, bin, "2")
		if r.code != 0 {
			b.Fatalf("callrate exited %d: %s", r.code, r.stderr)
		}
		b.ReportMetric(metric(b, r.stdout, "ns_per_call"), "ns/call")
	}
}
