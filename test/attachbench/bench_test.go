package attachbench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// The benchmark's knobs, from the environment (defaults in brackets):
//
//	ROCPROF_GO_BENCH_ATTACH_RUNTIMES  the runtimes, comma-separated (5.2,6.1,6.4,7.2)
//	ROCPROF_GO_BENCH_ATTACHES         attaches per runtime and b.N (3)
//	ROCPROF_GO_BENCH_ATTACH_MSEC      each attach's --attach-duration-msec (1000)
//	ROCPROF_GO_BENCH_ATTACH_LANES     attach_server's --threads (3)
const (
	defaultRuntimes = "5.2,6.1,6.4,7.2"
	defaultAttaches = 3
	defaultMsec     = 1000
	defaultLanes    = 3
	// sleepMS is attach_server's pause after each iteration (its
	// --sleep-ms): part of every gap, attached or not.
	sleepMS = 5
	// baseline is how long the server runs unattached before the first
	// attach, its iteration time and longest gap unattached measured after
	// warmup (the lanes' first iterations); settle is the pause after each
	// detach.
	warmup   = time.Second
	baseline = 4 * time.Second
	settle   = time.Second
	// timeout bounds one program's run (hangs), no speed check.
	timeout = 3 * time.Minute
)

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(b, err, "%s=%q: want a whole number (unset: %d)", name, v, def)
	require.Positive(b, n, "%s=%q: want a positive number (unset: %d)", name, v, def)
	return n
}

// BenchmarkAttachCost starts testdata/apps' attach_server plainly on the
// virtual GPU (lanes threads, each two streams, a kernel, a copy, a second
// kernel and a ROCTx range per iteration, then a 5 ms pause), lets it run
// unattached, then attaches to it with `--kernel-trace --hip-trace
// --marker-trace` for a fixed duration and detaches, several times. The
// server (--gaps) writes each lane's iteration end times (CLOCK_MONOTONIC);
// run.json's attach object gives each attach's window (wall clock) and its
// attach_ms (the injection's start to the agent's ready) and detach_ms
// (detach to detached). The stall during an attach (a detach) is the
// longest gap between consecutive iteration ends of any lane that overlaps
// [window_start - attach_ms, window_start] ([window_end, window_end +
// detach_ms]); unattached, the longest gap within the seconds before the
// first attach (the first second left out).
//
// Metrics per runtime: attach-ms and detach-ms (medians), attach-max-ms,
// detach-max-ms; stall-attach-ms and stall-detach-ms (the longest over the
// attaches); gap-unattached-max-ms, gap-unattached-p99-ms and
// iter-unattached-ms (the median gap unattached, the 5 ms pause included;
// not "iteration": `make bench`'s summary takes every metric containing
// "ratio" for a ratio); stall-attach/base and stall-detach/base, the
// stalls over the longest gap unattached.
func BenchmarkAttachCost(b *testing.B) {
	root, build := testsys.RepoRoot(b), testsys.BuildDir(b)
	rts, err := rocmmatrix.Ready(root, build)
	require.NoError(b, err, "build the ROCm matrix: `make rocm-roots rocm-testapps` (as root)")
	want := os.Getenv("ROCPROF_GO_BENCH_ATTACH_RUNTIMES")
	if want == "" {
		want = defaultRuntimes
	}
	attaches := envInt(b, "ROCPROF_GO_BENCH_ATTACHES", defaultAttaches)
	msec := envInt(b, "ROCPROF_GO_BENCH_ATTACH_MSEC", defaultMsec)
	lanes := envInt(b, "ROCPROF_GO_BENCH_ATTACH_LANES", defaultLanes)
	for _, name := range strings.Split(want, ",") {
		i := slices.IndexFunc(rts, func(rt rocmmatrix.Runtime) bool { return rt.Name == name })
		require.GreaterOrEqual(b, i, 0, "ROCPROF_GO_BENCH_ATTACH_RUNTIMES names ROCm %q, not in the matrix", name)
		rt := rts[i]
		b.Run("rocm"+rt.Name, func(b *testing.B) {
			var res result
			for range b.N {
				res.add(runOnce(b, rt, attaches, msec, lanes))
			}
			res.report(b)
			testsys.ReportHost(b)
		})
	}
}

// phase is a span of CLOCK_MONOTONIC time, ns.
type phase struct{ from, to int64 }

// run is what one server's run measured.
type run struct {
	attachMS, detachMS            []float64
	stallAttach, stallDetach      []float64 // per attach, ms
	gapUnattached, p99, iteration float64   // ms
}

type result struct{ runs []run }

func (r *result) add(x run) { r.runs = append(r.runs, x) }

func (r *result) report(b *testing.B) {
	var at, dt, sa, sd, base, p99, it []float64
	for _, x := range r.runs {
		at, dt = append(at, x.attachMS...), append(dt, x.detachMS...)
		sa, sd = append(sa, x.stallAttach...), append(sd, x.stallDetach...)
		base, it = append(base, x.gapUnattached), append(it, x.iteration)
		p99 = append(p99, x.p99)
	}
	b.ReportMetric(testsys.Median(at), "attach-ms")
	b.ReportMetric(slices.Max(at), "attach-max-ms")
	b.ReportMetric(testsys.Median(dt), "detach-ms")
	b.ReportMetric(slices.Max(dt), "detach-max-ms")
	b.ReportMetric(slices.Max(sa), "stall-attach-ms")
	b.ReportMetric(slices.Max(sd), "stall-detach-ms")
	b.ReportMetric(slices.Max(base), "gap-unattached-max-ms")
	b.ReportMetric(slices.Max(p99), "gap-unattached-p99-ms")
	b.ReportMetric(testsys.Median(it), "iter-unattached-ms")
	b.ReportMetric(slices.Max(sa)/slices.Max(base), "stall-attach/base")
	b.ReportMetric(slices.Max(sd)/slices.Max(base), "stall-detach/base")
}

func clock(b *testing.B, id int32) int64 {
	var ts unix.Timespec
	require.NoError(b, unix.ClockGettime(id, &ts))
	return ts.Nano()
}

// runOnce runs one server on rt, unattached for baseline, then attached
// attaches times, and measures it.
func runOnce(b *testing.B, rt rocmmatrix.Runtime, attaches, msec, lanes int) run {
	tmp := b.TempDir()
	// The run directory's socket path must fit 107 bytes: a short root.
	spool, err := os.MkdirTemp("", "rpg-ab-")
	require.NoError(b, err)
	defer os.RemoveAll(spool)
	cache := filepath.Join(tmp, "cache")
	require.NoError(b, os.Mkdir(cache, 0o700))
	rt = rt.WithBinds(tmp, spool)
	gaps := filepath.Join(tmp, "gaps.txt")

	ctx, cancel := context.WithTimeout(context.Background(), 2*timeout+time.Duration(attaches)*(settle+time.Duration(msec)*time.Millisecond))
	defer cancel()
	srv := rt.Command(ctx, filepath.Join(rt.Apps, "attach_server"), "--threads", strconv.Itoa(lanes),
		"--sleep-ms", strconv.Itoa(sleepMS), "--gaps", gaps)
	srv.Env = append(testsys.UnprofiledEnv(), "LD_PRELOAD="+testsys.Artifact(b, filepath.Join("vgpu", "librocprof-go-vgpu.so")))
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	srv.Cancel = func() error { return syscall.Kill(-srv.Process.Pid, syscall.SIGKILL) }
	srv.WaitDelay = 10 * time.Second
	var serr strings.Builder
	srv.Stderr = &serr
	stdin, err := srv.StdinPipe()
	require.NoError(b, err)
	stdout, err := srv.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, srv.Start())
	done := false
	defer func() {
		if !done {
			_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
			_ = srv.Wait()
		}
	}()
	rd := bufio.NewReader(stdout)
	ready, err := rd.ReadString('\n')
	require.NoError(b, err, "ROCm %s: attach_server printed no ready line; stderr:\n%s", rt.Name, serr.String())
	pid, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(ready), "ready "))
	require.NoError(b, err, "ROCm %s: attach_server's ready line %q", rt.Name, ready)
	rest := make(chan string, 1)
	go func() {
		out, _ := io.ReadAll(rd)
		rest <- string(out)
	}()

	// CLOCK_REALTIME less CLOCK_MONOTONIC: run.json's wall-clock window on
	// the server's clock.
	offset := clock(b, unix.CLOCK_REALTIME) - clock(b, unix.CLOCK_MONOTONIC)
	time.Sleep(warmup)
	unattached := phase{from: clock(b, unix.CLOCK_MONOTONIC)}
	time.Sleep(baseline - warmup)
	unattached.to = clock(b, unix.CLOCK_MONOTONIC)

	cli := testsys.Artifact(b, "rocprof-go")
	var attachPh, detachPh []phase
	var x run
	for i := range attaches {
		out := filepath.Join(tmp, fmt.Sprintf("out%d", i))
		cmd := rt.Command(ctx, cli, "--attach", strconv.Itoa(pid), "--attach-duration-msec", strconv.Itoa(msec),
			"--kernel-trace", "--hip-trace", "--marker-trace", "-d", out, "-o", "bench", "-f", "csv")
		cmd.Env = append(testsys.UnprofiledEnv(), "XDG_CACHE_HOME="+cache, "ROCPROF_GO_SPOOL_ROOT="+spool)
		cmd.Dir = tmp
		o, err := cmd.CombinedOutput()
		require.NoError(b, err, "ROCm %s: rocprof-go --attach %d (attach %d): %s", rt.Name, pid, i+1, o)
		rep := readReport(b, filepath.Join(out, "run.json"), pid)
		ws, we := rep.WindowStart.UnixNano()-offset, rep.WindowEnd.UnixNano()-offset
		attachPh = append(attachPh, phase{ws - int64(rep.AttachMS*1e6), ws})
		detachPh = append(detachPh, phase{we, we + int64(rep.DetachMS*1e6)})
		x.attachMS = append(x.attachMS, rep.AttachMS)
		x.detachMS = append(x.detachMS, rep.DetachMS)
		b.Logf("ROCm %s: attach %d: attached in %.1f ms, detached in %.1f ms, %d slots restored, %d dispatches lost",
			rt.Name, i+1, rep.AttachMS, rep.DetachMS, rep.SlotsRestored, rep.DispatchesLost)
		require.NoError(b, os.RemoveAll(out))
		time.Sleep(settle)
	}

	require.NoError(b, stdin.Close())
	var sout string
	select {
	case sout = <-rest:
	case <-time.After(timeout):
		b.Fatalf("ROCm %s: attach_server (pid %d) did not end within %s of its stdin's end; stderr:\n%s", rt.Name, pid, timeout, serr.String())
	}
	err = srv.Wait()
	done = true
	require.NoError(b, err, "ROCm %s: attach_server ended badly; stdout:\n%s\nstderr:\n%s", rt.Name, sout, serr.String())

	ends := readGaps(b, gaps, lanes)
	var in []float64
	x.gapUnattached, in = longestGap(ends, unattached, true)
	require.NotEmpty(b, in, "ROCm %s: no iteration ended in the %s unattached", rt.Name, baseline)
	x.iteration = testsys.Median(in)
	sort.Float64s(in)
	x.p99 = in[len(in)*99/100]
	for i := range attachPh {
		sa, _ := longestGap(ends, attachPh[i], false)
		sd, _ := longestGap(ends, detachPh[i], false)
		x.stallAttach = append(x.stallAttach, sa)
		x.stallDetach = append(x.stallDetach, sd)
		b.Logf("ROCm %s: attach %d: longest gap %.2f ms attaching, %.2f ms detaching", rt.Name, i+1, sa, sd)
	}
	b.Logf("ROCm %s: %d lanes, unattached: iteration %.2f ms (median, the %d ms pause included), 99th percentile %.2f ms, longest gap %.2f ms (%d iterations)",
		rt.Name, lanes, x.iteration, sleepMS, x.p99, x.gapUnattached, len(in))
	return x
}

// report is run.json's attach object, the one process.
type report struct {
	WindowStart, WindowEnd time.Time
	AttachMS, DetachMS     float64
	SlotsRestored          int
	DispatchesLost         uint64
}

func readReport(b *testing.B, path string, pid int) report {
	raw, err := os.ReadFile(path)
	require.NoError(b, err)
	var run struct {
		Attach struct {
			WindowStart time.Time `json:"window_start"`
			WindowEnd   time.Time `json:"window_end"`
			Processes   []struct {
				PID            int     `json:"pid"`
				AttachMS       float64 `json:"attach_ms"`
				DetachMS       float64 `json:"detach_ms"`
				SlotsRestored  int     `json:"slots_restored"`
				DispatchesLost uint64  `json:"dispatches_lost"`
				Unloaded       bool    `json:"unloaded"`
			} `json:"processes"`
		} `json:"attach"`
	}
	require.NoError(b, json.Unmarshal(raw, &run), path)
	a := run.Attach
	require.Len(b, a.Processes, 1, "%s: one process attached", path)
	p := a.Processes[0]
	require.Equal(b, pid, p.PID, path)
	require.True(b, p.Unloaded, "%s: the library left pid %d", path, pid)
	return report{a.WindowStart, a.WindowEnd, p.AttachMS, p.DetachMS, p.SlotsRestored, p.DispatchesLost}
}

// readGaps reads attach_server's --gaps file: each lane's iteration end
// times, sorted.
func readGaps(b *testing.B, path string, lanes int) [][]int64 {
	raw, err := os.ReadFile(path)
	require.NoError(b, err)
	ends := make([][]int64, lanes)
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var lane int
		var ns int64
		_, err := fmt.Sscanf(line, "%d %d", &lane, &ns)
		require.NoError(b, err, "%s: line %q", path, line)
		require.True(b, lane >= 0 && lane < lanes, "%s: line %q", path, line)
		ends[lane] = append(ends[lane], ns)
	}
	for _, e := range ends {
		sort.Slice(e, func(i, j int) bool { return e[i] < e[j] })
	}
	return ends
}

// longestGap is the longest gap between consecutive iteration ends of any
// lane (ms) and every such gap: inside p when within, else overlapping p.
func longestGap(ends [][]int64, p phase, within bool) (float64, []float64) {
	var all []float64
	longest := 0.0
	for _, e := range ends {
		for i := 1; i < len(e); i++ {
			prev, cur := e[i-1], e[i]
			if within && (prev < p.from || cur > p.to) || !within && (cur <= p.from || prev >= p.to) {
				continue
			}
			g := float64(cur-prev) / 1e6
			all = append(all, g)
			longest = max(longest, g)
		}
	}
	return longest, all
}
