package reliability

import (
	"context"
	"os/exec"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// cpuWrapper runs its arguments as a child and prints the CPU time (user +
// system, microseconds) of that child and of every descendant it waited for,
// from wait4's rusage: precise, unlike bash's times builtin (clock ticks).
const cpuWrapper = `import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
_, st, ru = os.wait4(pid, 0)
print("cpu_us=%d" % ((ru.ru_utime + ru.ru_stime) * 1e6), flush=True)
sys.exit(os.waitstatus_to_exitcode(st))`

// BenchmarkFiftySubshells measures what the profiler costs a shell script
// that forks 50 subshells, bare and under rocprof-go (whose preload library
// is then in every bash and every program it execs): the CPU time of the
// script and all its children, which load from other processes barely
// changes, and the wall time of its subshell section, which it changes a lot
// on a shared machine. Each b.N round runs both 5 times, interleaved, and
// compares medians. Target: slowdown-% (CPU) <= 10.
func BenchmarkFiftySubshells(b *testing.B) {
	const repeats = 5
	var bare, underProfiler, bareCPU, profiledCPU []float64
	for b.Loop() {
		for range repeats {
			argv := []string{"python3", "-c", cpuWrapper, "/bin/bash", "-c", subshellScript, "script", "true"}
			out, err := exec.CommandContext(context.Background(), argv[0], argv[1:]...).Output()
			require.NoError(b, err)
			bare = append(bare, float64(intField(b, string(out), "ns")))
			bareCPU = append(bareCPU, float64(intField(b, string(out), "cpu_us")))
			res := profiled{opts: []string{"--hip-trace", "--kernel-trace", "-f", "csv"}, argv: argv}.run(b)
			require.Equal(b, 0, res.exit, "stderr:\n%s", res.stderr)
			underProfiler = append(underProfiler, float64(intField(b, res.stdout, "ns")))
			profiledCPU = append(profiledCPU, float64(intField(b, res.stdout, "cpu_us")))
		}
	}
	mb, mp := median(bare), median(underProfiler)
	cb, cp := median(bareCPU), median(profiledCPU)
	b.ReportMetric(mb/1e6, "bare-wall-ms")
	b.ReportMetric(mp/1e6, "profiled-wall-ms")
	b.ReportMetric(100*(mp-mb)/mb, "wall-slowdown-%")
	b.ReportMetric(cb/1e3, "bare-cpu-ms")
	b.ReportMetric(cp/1e3, "profiled-cpu-ms")
	b.ReportMetric(100*(cp-cb)/cb, "slowdown-%")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
