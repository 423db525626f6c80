package reliability

import (
	"context"
	"os/exec"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// cpuWrapper runs its arguments as a child and prints the CPU time (user +
// system, microseconds) of that child and of every descendant it waited for,
// from wait4's rusage: precise, unlike bash's times builtin (clock ticks).
const cpuWrapper = `import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
_, st, ru = os.wait4(pid, 0)
print("cpu_us=%d minflt=%d" % ((ru.ru_utime + ru.ru_stime) * 1e6, ru.ru_minflt), flush=True)
sys.exit(os.waitstatus_to_exitcode(st))`

// BenchmarkFiftySubshells measures what the profiler costs a shell script
// that forks 50 subshells, bare and under rocprof-go (whose preload library
// is then in every bash and every program it execs): the CPU time of the
// script and all its children, which load from other processes barely
// changes, and the wall time of its subshell section, which it changes a lot
// on a shared machine. Runs alternate bare and profiled; each pair gives a
// ratio, and the median of those ratios is the result, so that the machine
// changing speed between pairs cancels out. The page faults the script and
// its children took (the preload library's cost shows there: each fault
// costs ~4-5 us on the test VMs) do not depend on the machine's speed at
// all. Target: slowdown-% (CPU) <= 10.
func BenchmarkFiftySubshells(b *testing.B) {
	const repeats = 8
	var bareWall, profWall, bareCPU, profCPU, cpuRatio, wallRatio, faults []float64
	for b.Loop() {
		for range repeats {
			argv := []string{"python3", "-c", cpuWrapper, "/bin/bash", "-c", subshellScript, "script", "true"}
			out, err := exec.CommandContext(context.Background(), argv[0], argv[1:]...).Output()
			require.NoError(b, err)
			res := profiled{opts: []string{"--hip-trace", "--kernel-trace", "-f", "csv"}, argv: argv}.run(b)
			require.Equal(b, 0, res.exit, "stderr:\n%s", res.stderr)
			bw, pw := float64(intField(b, string(out), "ns")), float64(intField(b, res.stdout, "ns"))
			bc, pc := float64(intField(b, string(out), "cpu_us")), float64(intField(b, res.stdout, "cpu_us"))
			bareWall, profWall = append(bareWall, bw), append(profWall, pw)
			bareCPU, profCPU = append(bareCPU, bc), append(profCPU, pc)
			cpuRatio, wallRatio = append(cpuRatio, pc/bc), append(wallRatio, pw/bw)
			faults = append(faults, float64(intField(b, res.stdout, "minflt")-intField(b, string(out), "minflt")))
		}
	}
	b.ReportMetric(median(bareWall)/1e6, "bare-wall-ms")
	b.ReportMetric(median(profWall)/1e6, "profiled-wall-ms")
	b.ReportMetric(100*(median(wallRatio)-1), "wall-slowdown-%")
	b.ReportMetric(median(bareCPU)/1e3, "bare-cpu-ms")
	b.ReportMetric(median(profCPU)/1e3, "profiled-cpu-ms")
	b.ReportMetric(100*(median(cpuRatio)-1), "slowdown-%")
	b.ReportMetric(median(faults), "page-faults-added")
	b.ReportMetric(median(wallRatio), "wall-ratio-median")
	b.ReportMetric(median(cpuRatio), "cpu-ratio-median")
	testsys.ReportHost(b)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
