package attachtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pcsWindow is the attach window of the PC-sampling test, in ms.
const pcsWindow = 1500

// pcsArgs is the CLI's PC-sampling request (host trap every 10 µs, with
// the kernel trace the samples are matched against), outputs in dir named c.
func pcsArgs(dir string) []string {
	return []string{"--pc-sampling-beta-enabled", "--pc-sampling-method", "host_trap",
		"--pc-sampling-unit", "time", "--pc-sampling-interval", "10", "--kernel-trace", "-d", dir, "-o", "c", "-f", "csv"}
}

// TestAttachPCSampling: attach_server started plainly, attached 1.5 s
// with host-trap PC sampling (docs/attach.md, "PC sampling"). On ROCm 6.4
// and 7.2 the samples are recorded inside the window, each names a
// dispatch of the window's kernel trace (Dispatch_Id and Correlation_Id),
// their kernels are those a launched run of the server samples, and no
// sample is left unmatched; on 5.2 and 6.1 the request is refused before
// anything is attached, with launch mode's reason. Either way the process
// is as it was after the detach and its output is that of a run nobody
// attached to.
func TestAttachPCSampling(t *testing.T) {
	for _, rt := range runtimes(t) {
		t.Run("rocm"+rt.Name, func(t *testing.T) {
			h := newHarness(t, rt)
			app := filepath.Join(rt.Apps, "attach_server")
			wantOut, wantErr := h.reference(t, app)
			offers := rt.Name == "6.4" || rt.Name == "7.2"
			var launched map[string]bool
			var launchedOut string
			if offers {
				launched, launchedOut = h.launchedPCS(t, app)
			}

			s := h.start(t, app)
			before := states(t, s.pids())
			comms := taskComms(s.pid)
			out := filepath.Join(h.tmp, "out")
			r := h.attach(t, append([]string{"--attach", strconv.Itoa(s.pid), "--attach-duration-msec", strconv.Itoa(pcsWindow)}, pcsArgs(out)...)...)
			if !offers {
				require.NotZero(t, r.exit, "PC sampling on ROCm %s is refused", rt.Name)
				require.Contains(t, r.stderr, "has no PC sampling (ROCm 5.x and 6.1 do not offer it); ROCm 6.4 or later")
				require.Contains(t, r.stderr, "nothing was attached")
				require.False(t, mapsPreload(s.pid), "nothing was injected")
			} else {
				r.succeeded(t, "the sampling attach")
				k := readCSV(t, filepath.Join(out, "c_kernel_trace.csv"))
				k.inWindow(t, r, r.lost[s.pid])
				names := map[string]string{}
				corr := map[string]string{}
				span := map[string][2]uint64{}
				ids, kn, cids := k.col(t, "Dispatch_Id"), k.col(t, "Kernel_Name"), k.col(t, "Correlation_Id")
				st, en := k.col(t, "Start_Timestamp"), k.col(t, "End_Timestamp")
				for i := range ids {
					names[ids[i]], corr[ids[i]] = kn[i], cids[i]
					a, _ := strconv.ParseUint(st[i], 10, 64)
					b, _ := strconv.ParseUint(en[i], 10, 64)
					span[ids[i]] = [2]uint64{a, b}
				}
				pcs := readCSV(t, filepath.Join(out, "c_pc_sampling_host_trap.csv"))
				ts, ds, pc := pcs.col(t, "Sample_Timestamp"), pcs.col(t, "Dispatch_Id"), pcs.col(t, "Correlation_Id")
				require.NotEmpty(t, ds, "samples recorded while attached")
				sampled := map[string]int{}
				for i := range ds {
					n, ok := names[ds[i]]
					require.True(t, ok, "sample %d names dispatch %s, which is in the window's kernel trace", i+1, ds[i])
					require.Equal(t, corr[ds[i]], pc[i], "sample %d: its dispatch's correlation id", i+1)
					v, err := strconv.ParseUint(ts[i], 10, 64)
					require.NoError(t, err)
					require.True(t, r.from <= v && v <= r.to, "sample %d at %d is within the attach [%d, %d]", i+1, v, r.from, r.to)
					sp := span[ds[i]]
					require.True(t, sp[0] <= v && v <= sp[1], "sample %d at %d is within its dispatch %s [%d, %d]", i+1, v, ds[i], sp[0], sp[1])
					sampled[kernelKey(n)]++
				}
				t.Logf("ROCm %s: %d samples attached: %v; launched: %v", rt.Name, len(ds), sampled, launched)
				// The window's edge: a dispatch of each stream submitted
				// before the attach may still run when the sessions start;
				// its samples name a slot no record names and are left
				// out, said (never attributed to another dispatch).
				per := map[string]int{}
				most := 0
				for _, d := range ds {
					per[d]++
					most = max(most, per[d])
				}
				if m := regexp.MustCompile(`pid \d+: (\d+) PC samples named no dispatch`).FindStringSubmatch(r.stderr); m != nil {
					n, _ := strconv.Atoi(m[1])
					require.LessOrEqual(t, n, 2*most, "samples left out at the window's edge: at most a dispatch per stream (attach_server's two), %d samples each at most", most)
				}
				for n := range sampled {
					require.True(t, launched[n], "kernel %s sampled attached is one a launched run samples", n)
				}
				for n := range launched {
					require.NotZero(t, sampled[n], "kernel %s sampled launched is sampled attached too", n)
				}
			}
			if offers {
				detachedButTheRuntimesQueue(t, s.pid, before[s.pid], comms)
			} else {
				detached(t, before)
			}
			gotOut, gotErr := s.finish(t)
			require.Equal(t, wantOut, gotOut, "the server's output after the sampling attach is that of a run nobody attached to")
			gotErr = withoutROCRsPCSLines(t, gotErr)
			if offers {
				gotErr = sameLeakAsLaunched(t, wantErr, gotErr, launchedOut)
			}
			require.Equal(t, wantErr, gotErr, "the server's stderr after the sampling attach is that of a run nobody attached to, but for the runtime's own lines")
		})
	}
}

// launchedPCS runs app under rocprof-go with pcsArgs and returns the
// kernels its samples name (the warm-up and one iteration) and its output.
func (h *harness) launchedPCS(t *testing.T, app string) (map[string]bool, string) {
	t.Helper()
	dir := filepath.Join(h.tmp, "launched")
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := h.rt.Command(ctx, h.cli, append(append([]string{"--virtual-gpu", "gfx90a"}, pcsArgs(dir)...), "--", app)...)
	cmd.Env = h.cliEnv()
	cmd.Dir = h.tmp
	out, err := cmd.CombinedOutput() // stdin is empty: one iteration after the warm-up
	require.NoError(t, err, "launched run: %s", out)
	matches, err := filepath.Glob(filepath.Join(dir, "*c_pc_sampling_host_trap.csv"))
	require.NoError(t, err)
	require.Len(t, matches, 1, "launched run's PC samples: %s", out)
	pcs := readCSV(t, matches[0])
	k := readCSV(t, strings.TrimSuffix(matches[0], "pc_sampling_host_trap.csv")+"kernel_trace.csv")
	names := map[string]string{}
	ids, kn := k.col(t, "Dispatch_Id"), k.col(t, "Kernel_Name")
	for i := range ids {
		names[ids[i]] = kn[i]
	}
	got := map[string]bool{}
	for _, d := range pcs.col(t, "Dispatch_Id") {
		require.Contains(t, names, d, "launched sample names a dispatch")
		got[kernelKey(names[d])] = true
	}
	require.NotEmpty(t, got)
	_ = os.RemoveAll(dir)
	return got, string(out)
}

// taskComms is each thread's name by thread id.
func taskComms(pid int) map[string]string {
	m := map[string]string{}
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, e := range ents {
		c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/comm", pid, e.Name()))
		m[e.Name()] = strings.TrimSpace(string(c))
	}
	return m
}

// detachedButTheRuntimesQueue is detached for a PC-sampling attach: the
// process is as it was but for the one queue the HSA runtime made for its
// sampling buffers' clear (its blit queue, made at the runtime's first
// fill and kept until hsa_shut_down: docs/attach.md, "PC sampling"), on
// the virtual GPU a thread named vgpu-aql, with what it holds open.
func detachedButTheRuntimesQueue(t *testing.T, pid int, want procState, comms map[string]string) {
	t.Helper()
	var got procState
	var extra []string
	for deadline := time.Now().Add(settleTimeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var err error
		got, err = snapshot(pid)
		require.NoError(t, err, "pid %d is gone after the detach", pid)
		extra = extra[:0]
		for id, c := range taskComms(pid) {
			if _, ok := comms[id]; !ok {
				extra = append(extra, c)
			}
		}
		if got.Tasks == want.Tasks+1 && len(extra) == 1 && fmt.Sprint(got.Ours) == fmt.Sprint(want.Ours) {
			break
		}
	}
	require.Equal(t, want.Ours, got.Ours, "pid %d: rocprof-go's mappings %s after the detach", pid, settleTimeout)
	require.Equal(t, []string{"vgpu-aql"}, extra, "pid %d: the one new thread after the detach is the runtime's queue", pid)
	require.Equal(t, want.Tasks+1, got.Tasks, "pid %d: threads after the detach", pid)
	t.Logf("pid %d: descriptors %d before, %d after the detach", pid, want.FDs, got.FDs)
	require.Equal(t, want.SigCgt, got.SigCgt, "pid %d: handled signals after the detach", pid)
	require.Equal(t, "0", got.Tracer, "pid %d: still traced after the detach", pid)
}

// rocrPCSLines are the lines ROCR 6.4's PC sampling prints on the
// process's stderr itself (as in a launched run; docs/attach.md).
var rocrPCSLines = []string{"Created PC sampling session with thunkId:", "PcSamplingThread::Exiting", "PcSamplingThread exiting...", "PcSamplingHostTrapThread::Exiting"}

// withoutROCRsPCSLines is stderr less the runtime's PC-sampling lines.
func withoutROCRsPCSLines(t *testing.T, stderr string) string {
	var kept []string
	for _, l := range strings.SplitAfter(stderr, "\n") {
		drop := false
		for _, p := range rocrPCSLines {
			drop = drop || strings.HasPrefix(l, p)
		}
		if drop {
			t.Logf("the runtime printed on the server's stderr: %q", l)
			continue
		}
		kept = append(kept, l)
	}
	return strings.Join(kept, "")
}

// leakLine is ROCR 7's report at exit of the signals its pool still held.
var leakLine = regexp.MustCompile(`(?m)^Warning: Resource leak detected by SharedSignalPool, \d+ Signals leaked\.\n`)

// sameLeakAsLaunched: ROCR 7.2's PC sampling keeps signals of its pool
// after its session is destroyed (a launched run reports them at exit
// too); the attached server's leak line is the reference's when it is the
// launched run's.
func sameLeakAsLaunched(t *testing.T, want, got, launched string) string {
	g, l, w := leakLine.FindString(got), leakLine.FindString(launched), leakLine.FindString(want)
	if g == "" || g == w || g != l {
		return got
	}
	t.Logf("the runtime's exit report, as in a launched run with PC sampling: %q (unattached: %q)", g, w)
	return strings.Replace(got, g, w, 1)
}
