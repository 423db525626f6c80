package attachtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// counterWindow is each counting attach's --attach-duration-msec.
const counterWindow = 1500

// TestAttachCountsDispatches (docs/attach.md, "Counters while attached"):
// attach_server started plainly; attach with --pmc SQ_WAVES GRBM_COUNT
// (one pass), then with a set of two passes (one attach window each, in
// pmc_1 and pmc_2). Each window has counter records for most of its
// dispatches, of both streams, every one naming a dispatch of the window's
// kernel trace, with the values a launched run of the same app gets from
// the virtual GPU; the dispatches not counted are in run.json's
// dispatches_lost; every detach leaves the process as it was, and the
// server ends with the output of a run nobody attached to.
func TestAttachCountsDispatches(t *testing.T) {
	for _, rt := range runtimes(t) {
		t.Run("rocm"+rt.Name, func(t *testing.T) {
			h := newHarness(t, rt)
			app := filepath.Join(rt.Apps, "attach_server")
			wantOut, wantErr := h.reference(t, app)
			twoPasses := []string{"SQ_WAVES", "GRBM_COUNT", "GRBM_GUI_ACTIVE", "GRBM_CP_BUSY"}
			launched := h.launchedCounters(t, app, twoPasses)

			s := h.start(t, app)
			before := states(t, s.pids())
			out := filepath.Join(h.tmp, "out")

			args := []string{"--attach", strconv.Itoa(s.pid), "--attach-duration-msec", strconv.Itoa(counterWindow),
				"--virtual-gpu", "gfx90a", "--kernel-trace", "-d", filepath.Join(out, "one"), "-o", "c", "-f", "csv", "--pmc", "SQ_WAVES", "GRBM_COUNT"}
			r := h.attach(t, args...)
			r.succeeded(t, "the counting attach")
			counted(t, r, filepath.Join(out, "one", "c"), s.pid, []string{"SQ_WAVES", "GRBM_COUNT"}, launched,
				notCountedOf(t, filepath.Join(out, "one", "run.json"), "", s.pid))
			detached(t, before)

			args = []string{"--attach", strconv.Itoa(s.pid), "--attach-duration-msec", strconv.Itoa(counterWindow),
				"--virtual-gpu", "gfx90a", "--kernel-trace", "-d", filepath.Join(out, "two"), "-o", "c", "-f", "csv", "--pmc"}
			r = h.attach(t, append(args, twoPasses...)...)
			r.succeeded(t, "the attach of two counter passes")
			require.Contains(t, r.stderr, fmt.Sprintf("rocprof-go: counters: 2 passes, one per attach window of %d ms each", counterWindow))
			var got []string
			runJSON := filepath.Join(out, "two", "run.json")
			var run struct {
				AttachWindows string `json:"attach_windows"`
			}
			b, err := os.ReadFile(runJSON)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &run))
			require.Equal(t, fmt.Sprintf("counters: 2 passes, one per attach window of %d ms each, consecutive: pass k's counters come from the dispatches of window k", counterWindow),
				run.AttachWindows, "run.json says how the passes were collected")
			for _, pass := range []string{"pmc_1", "pmc_2"} {
				names := passCounters(t, runJSON, pass)
				got = append(got, names...)
				counted(t, r, filepath.Join(out, "two", pass, "c"), s.pid, names, launched, notCountedOf(t, runJSON, pass, s.pid))
			}
			require.ElementsMatch(t, twoPasses, got, "the two windows' counters are the set")
			detached(t, before)

			gotOut, gotErr := s.finish(t)
			require.Equal(t, wantOut, gotOut, "the server's output after the counting attaches is that of a run nobody attached to")
			require.Equal(t, wantErr, gotErr, "the server's stderr after the counting attaches is that of a run nobody attached to")
		})
	}
}

// launchedCounters runs app under rocprof-go (launched, on the virtual
// GPU) with names, one pmc: line per pass, and returns the values per
// kernel and counter: "kernel counter" -> the values seen.
func (h *harness) launchedCounters(t *testing.T, app string, names []string) map[string]map[string]bool {
	t.Helper()
	in := filepath.Join(h.tmp, "launched.txt")
	require.NoError(t, os.WriteFile(in, []byte("pmc: "+strings.Join(names[:3], " ")+"\npmc: "+names[3]+"\n"), 0o600))
	dir := filepath.Join(h.tmp, "launched")
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := h.rt.Command(ctx, h.cli, "--virtual-gpu", "gfx90a", "-i", in, "-d", dir, "-o", "c", "-f", "csv", "--", app)
	cmd.Env = h.cliEnv()
	cmd.Dir = h.tmp
	out, err := cmd.CombinedOutput() // stdin is empty: one iteration after the warm-up
	require.NoError(t, err, "launched run: %s", out)
	vals := map[string]map[string]bool{}
	for _, pass := range []string{"pmc_1", "pmc_2"} {
		tb := readCSV(t, filepath.Join(dir, pass, "c_counter_collection.csv"))
		k, c, v := tb.col(t, "Kernel_Name"), tb.col(t, "Counter_Name"), tb.col(t, "Counter_Value")
		for i := range k {
			key := kernelKey(k[i]) + " " + c[i]
			if vals[key] == nil {
				vals[key] = map[string]bool{}
			}
			vals[key][v[i]] = true
		}
	}
	return vals
}

func kernelKey(name string) string {
	if i := strings.IndexByte(name, '('); i > 0 {
		return name[:i]
	}
	return name
}

// notCountedOf is what a window's dispatches may lack counters for: its
// process's dispatches_lost and in_flight_at_attach in run.json (the
// window's first dispatch of each queue: the packets before it may still
// run), from the run's attach object (pass "") or the pass's.
func notCountedOf(t *testing.T, runJSON, pass string, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile(runJSON)
	require.NoError(t, err)
	type report struct {
		Processes []struct {
			PID      int    `json:"pid"`
			Lost     uint64 `json:"dispatches_lost"`
			InFlight uint64 `json:"in_flight_at_attach"`
		} `json:"processes"`
	}
	var run struct {
		Attach *report `json:"attach"`
		Passes []struct {
			Dir    string  `json:"dir"`
			Attach *report `json:"attach"`
		} `json:"passes"`
	}
	require.NoError(t, json.Unmarshal(b, &run))
	rep := run.Attach
	for _, p := range run.Passes {
		if pass != "" && p.Dir == pass {
			rep = p.Attach
		}
	}
	require.NotNil(t, rep, "%s: no attach report for pass %q: %s", runJSON, pass, b)
	for _, p := range rep.Processes {
		if p.PID == pid {
			return p.Lost + p.InFlight
		}
	}
	t.Fatalf("%s: pid %d not attached in pass %q", runJSON, pid, pass)
	return 0
}

// passCounters is the counters run.json lists for the pass in dir.
func passCounters(t *testing.T, runJSON, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(runJSON)
	require.NoError(t, err)
	var run struct {
		Passes []struct {
			Dir      string   `json:"dir"`
			Counters []string `json:"counters"`
		} `json:"passes"`
	}
	require.NoError(t, json.Unmarshal(b, &run))
	for _, p := range run.Passes {
		if p.Dir == dir {
			return p.Counters
		}
	}
	t.Fatalf("%s lists no pass %s: %s", runJSON, dir, b)
	return nil
}

// counted checks one window's counter records: every counter of names for
// each counted dispatch, with a value a launched run gave that kernel;
// every counted dispatch in the window's kernel trace; both streams'
// kernels counted; the dispatches not counted no more than run.json's
// dispatches_lost.
func counted(t *testing.T, r attachRun, prefix string, pid int, names []string, launched map[string]map[string]bool, notCounted uint64) {
	t.Helper()
	kt := readCSV(t, prefix+"_kernel_trace.csv")
	kt.inWindow(t, r, r.lost[pid])
	cc := readCSV(t, prefix+"_counter_collection.csv")
	traced := map[string]string{}
	ids, kn := kt.col(t, "Dispatch_Id"), kt.col(t, "Kernel_Name")
	for i := range ids {
		traced[ids[i]] = kernelKey(kn[i])
	}
	perDispatch := map[string][]string{}
	d, k, c, v := cc.col(t, "Dispatch_Id"), cc.col(t, "Kernel_Name"), cc.col(t, "Counter_Name"), cc.col(t, "Counter_Value")
	counted := map[string]bool{}
	for _, id := range d {
		counted[id] = true
	}
	// A counted dispatch that ran beside one the agent could not count (a
	// queue's work before its first moved packet, at the window's start:
	// docs/attach.md) shares the GPU with it, and the virtual GPU's
	// GPU-wide counters (GRBM_COUNT) then hold both kernels' cycles: its
	// values are not compared with a launched run's, where dispatches are
	// counted one at a time.
	ns := func(col string) []uint64 {
		var out []uint64
		for _, s := range kt.col(t, col) {
			n, err := strconv.ParseUint(s, 10, 64)
			require.NoError(t, err, "%s: %s %q", prefix, col, s)
			out = append(out, n)
		}
		return out
	}
	starts, ends := ns("Start_Timestamp"), ns("End_Timestamp")
	besideUncounted := map[string]bool{}
	for i := range ids {
		if counted[ids[i]] {
			continue
		}
		for j := range ids {
			if counted[ids[j]] && starts[j] < ends[i] && starts[i] < ends[j] {
				besideUncounted[ids[j]] = true
			}
		}
	}
	kernels := map[string]int{}
	for i := range d {
		require.Equal(t, traced[d[i]], kernelKey(k[i]), "%s: dispatch %s is in the kernel trace with its kernel", prefix, d[i])
		key := kernelKey(k[i]) + " " + c[i]
		if !besideUncounted[d[i]] {
			require.True(t, launched[key][v[i]], "%s: dispatch %s: %s = %s; a launched run gave %v", prefix, d[i], key, v[i], launched[key])
		}
		perDispatch[d[i]] = append(perDispatch[d[i]], c[i])
	}
	require.LessOrEqual(t, len(besideUncounted), 4, "%s: only the window's first dispatches run beside uncounted ones: %v", prefix, besideUncounted)
	for id, got := range perDispatch {
		sort.Strings(got)
		want := append([]string(nil), names...)
		sort.Strings(want)
		require.Equal(t, want, got, "%s: dispatch %s has each counter once", prefix, id)
		kernels[traced[id]]++
	}
	t.Logf("%s: %d dispatches traced, %d counted (%v), %d lost or at the edge", prefix, len(ids), len(perDispatch), kernels, notCounted)
	require.GreaterOrEqual(t, kernels["scale"], counterWindow/15/5, "%s: scale kernels counted", prefix)
	require.GreaterOrEqual(t, kernels["vadd"], counterWindow/15/5, "%s: vadd kernels counted", prefix)
	require.LessOrEqual(t, uint64(len(ids)-len(perDispatch)), notCounted,
		"%s: every traced dispatch not counted is in run.json's dispatches_lost or in_flight_at_attach", prefix)
}
