package inject

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
	"github.com/stretchr/testify/require"
)

// BenchmarkInject measures 20 injections of a small library into a
// process: "blocked", its only thread waiting in read() on a pipe;
// "followed", its main thread computing with a 1 ms nanosleep every few
// ms and its other thread's stack too small, so that the injector follows
// the main thread to its sleep. Metrics: inject-ms, the median time of
// Inject and inject-max-ms its longest; held-max-ms, the longest a thread
// was held running the calls (what the app's thread loses).
func BenchmarkInject(b *testing.B) {
	dir := b.TempDir()
	build := func(out, src string, flags ...string) string {
		abs, err := filepath.Abs(filepath.Join("testdata", src))
		require.NoError(b, err)
		p := filepath.Join(dir, out)
		o, err := exec.Command("cc", append([]string{"-O2", "-o", p, abs}, flags...)...).CombinedOutput()
		require.NoError(b, err, "%s", o)
		return p
	}
	target := build("target", "target.c", "-pthread")
	lib := build("inj.so", "inj.c", "-shared", "-fPIC")
	for _, c := range []struct{ name, mode string }{{"blocked", "signals"}, {"followed", "smallstack"}} {
		b.Run(c.name, func(b *testing.B) {
			cmd := exec.Command(target, c.mode, "-")
			out, err := cmd.StdoutPipe()
			require.NoError(b, err)
			stdin, err := cmd.StdinPipe()
			require.NoError(b, err)
			require.NoError(b, cmd.Start())
			defer func() { stdin.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			buf := make([]byte, 64)
			_, err = out.Read(buf) // ready
			require.NoError(b, err)
			var took []float64
			var held time.Duration
			for range b.N {
				for i := range 20 {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					t0 := time.Now()
					ret, rep, err := InjectReport(ctx, cmd.Process.Pid, lib, "rpg_test_mark", filepath.Join(dir, c.name+strconv.Itoa(i)))
					d := time.Since(t0)
					cancel()
					require.NoError(b, err)
					require.Equal(b, 42, ret)
					took = append(took, float64(d.Microseconds())/1000)
					held = max(held, rep.Held)
				}
			}
			b.ReportMetric(testsys.Median(took), "inject-ms")
			b.ReportMetric(slices.Max(took), "inject-max-ms")
			b.ReportMetric(float64(held.Microseconds())/1000, "held-max-ms")
			for i := range 20 {
				_ = os.Remove(filepath.Join(dir, c.name+strconv.Itoa(i)))
			}
		})
	}
}
