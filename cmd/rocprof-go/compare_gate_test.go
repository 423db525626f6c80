package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// The performance gate, measured as CI jobs use it: runs of the perfgate
// sample app on the virtual GPU, recorded with the CI recipe's options in
// the default (ROCpd) format and compared side against side with the
// recommended runs per side, base and new runs interleaved (as the recipe
// in docs/analysis.md does).
//
// perfgate launches saxpy in two shapes: 4 dispatches on a grid of 2^20
// work-items and 4 on 2^14 (slowdown is applied to the latter only), a
// scale kernel, and copies of 4 MiB and 64 KiB both ways.

// gateTrial is one comparison: its report and exit status.
type gateTrial struct {
	rep  rocprof.CompareReport
	exit int
}

// smallSaxpy is the launch shape the slowdowns hit.
const smallSaxpy = "*saxpy*@16384"

// recordRun profiles perfgate once into dir.
func recordRun(tb testing.TB, libs, dir string, env ...string) {
	tb.Helper()
	app, err := filepath.Abs(filepath.Join("..", "..", "build", "testdata", "perfgate"))
	require.NoError(tb, err)
	cmd := exec.Command(cliBinary, "--virtual-gpu", "--kernel-trace", "--hip-trace", "--memory-copy-trace", "-d", dir, "--", app)
	cmd.Env = append(append(os.Environ(), libs), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(tb, err, "%s", out)
}

// trial records runs runs per side, interleaved, and compares them (gate
// given as --gate, "" for the default).
func trial(tb testing.TB, libs string, runs int, gate string, baseEnv, newEnv []string) gateTrial {
	tb.Helper()
	dir := tb.TempDir()
	var base, next []string
	for i := range runs {
		b, n := filepath.Join(dir, fmt.Sprintf("base-%d", i)), filepath.Join(dir, fmt.Sprintf("new-%d", i))
		recordRun(tb, libs, b, baseEnv...)
		recordRun(tb, libs, n, newEnv...)
		base, next = append(base, b), append(next, n)
	}
	args := []string{"compare", "--format", "json"}
	if gate != "" {
		args = append(args, "--gate", gate)
	}
	args = append(append(append(args, base...), "--"), next...)
	cmd := exec.Command(cliBinary, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	t := gateTrial{}
	if ee, ok := err.(*exec.ExitError); ok {
		t.exit = ee.ExitCode()
	} else {
		require.NoError(tb, err)
	}
	require.Contains(tb, []int{0, 3}, t.exit, "compare: %s", e.String())
	require.NoError(tb, json.Unmarshal(o.Bytes(), &t.rep), o.String())
	return t
}

// flagged lists the entries a trial flagged (gated or not), as
// "name [config]".
func (g gateTrial) flagged() []string {
	var out []string
	for _, r := range g.rep.Rows {
		if r.Status == rocprof.Regression || r.Status == rocprof.Improvement {
			out = append(out, fmt.Sprintf("%s %s [%s]", r.Status, r.Name, r.Config))
		}
	}
	return out
}

// onlySmallSaxpy reports whether the trial flagged exactly the slowed
// launch shape, as a gated regression, and failed.
func (g gateTrial) onlySmallSaxpy() bool {
	f := g.flagged()
	return g.exit == 3 && len(f) == 1 &&
		f[0] == "regression saxpy(float, float const*, float*, int) [grid 16384x1x1 block 64x1x1 lds 0 scratch 0]"
}

var (
	virtualClock = []string{"ROCPROF_VGPU_CLOCK=virtual"}
	slower10     = []string{"ROCPROF_VGPU_CLOCK=virtual", "ROCPROF_VGPU_KERNEL_SCALE=" + smallSaxpy + "=1.1"}
	slower25Real = []string{"ROCPROF_VGPU_KERNEL_SCALE=" + smallSaxpy + "=1.25"}
)

// One trial of each figure, in CI: identical runs with the real clock pass
// with every domain gated (kernels, copies and the HIP API), and a 10%
// slowdown of one launch shape with the virtual clock is flagged, alone.
func TestCompareGateOnTheVirtualGPU(t *testing.T) {
	libs := builtLibs(t)
	same := trial(t, libs, rocprof.RecommendedRuns, "kernel,copy,hip", nil, nil)
	require.Equal(t, 0, same.exit, "identical runs flagged: %v", same.flagged())
	require.Zero(t, same.rep.Regressions)
	slow := trial(t, libs, rocprof.RecommendedRuns, "", virtualClock, slower10)
	require.True(t, slow.onlySmallSaxpy(), "flagged %v, exit %d", slow.flagged(), slow.exit)
}

// BenchmarkCompareGate runs the figures (make bench): 20 pairs of
// identical sides with the real clock (kernels, copies and HIP gated): no
// pair may be flagged; 20 trials of +10% on one launch shape with the
// virtual clock: all flagged, nothing else; 20 of +25% with the real
// clock: at least 19 flagged.
func BenchmarkCompareGate(b *testing.B) {
	libs := builtLibs(b)
	const trials = 20
	for range b.N {
		falseAlarms, exact10, caught25 := 0, 0, 0
		var alarms []string
		for range trials {
			if g := trial(b, libs, rocprof.RecommendedRuns, "kernel,copy,hip", nil, nil); g.exit != 0 || len(g.flagged()) > 0 {
				falseAlarms++
				alarms = append(alarms, g.flagged()...)
			}
			if trial(b, libs, rocprof.RecommendedRuns, "", virtualClock, slower10).onlySmallSaxpy() {
				exact10++
			}
			if g := trial(b, libs, rocprof.RecommendedRuns, "", nil, slower25Real); g.exit == 3 {
				caught25++
			}
		}
		b.ReportMetric(float64(falseAlarms), "false-alarms/20")
		b.ReportMetric(float64(exact10), "caught-10%-virtual/20")
		b.ReportMetric(float64(caught25), "caught-25%-real/20")
		b.Logf("RESULT compare gate, %d runs per side interleaved: identical sides flagged %d of %d (%v); +10%% one shape (virtual clock) flagged alone %d of %d; +25%% (real clock) flagged %d of %d",
			rocprof.RecommendedRuns, falseAlarms, trials, alarms, exact10, trials, caught25, trials)
		require.Zero(b, falseAlarms, "false alarms: %v", alarms)
		require.Equal(b, trials, exact10)
		require.GreaterOrEqual(b, caught25, 19)
	}
}
