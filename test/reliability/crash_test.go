package reliability

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"
)

// An app that dies by a signal keeps every dispatch the GPU completed before
// the signal, synchronised or not (issue 19). hsa_crash submits 40 dispatches
// behind a barrier it then releases, never waits on any of them through HSA,
// learns from the virtual GPU's packet log (written after each completion
// signal) that all 40 completed, and dies: abort(), a null write, or
// rocprof-go's SIGTERM at --timeout. So exactly 40 must be in the trace, with
// the timestamps the virtual GPU wrote (its ticks are 10 ns of the same
// clock, so they must match within a microsecond).
//
// Every other run holds the shim's completion thread
// (ROCPROF_GO_TEST_COMPLETION_HOLD=1): then every dispatch is the fatal-signal
// handler's to record; in the others the completion thread and the handler
// share them (the hand-off must not lose or duplicate one). With the handler
// disabled (ROCPROF_GO_NO_CRASH_HANDLER=1) the held runs find 0.
func TestFatalSignalKeepsCompletedDispatches(t *testing.T) {
	const dispatches = 40
	for _, tc := range []struct {
		mode string
		exit int
		reps int
		opts []string
	}{
		{"abort", 134, 24, nil},
		{"segv", 139, 8, nil},
		{"term", 124, 2, []string{"--timeout", "3s"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			var mu sync.Mutex
			var handled, byThread []int
			sem := make(chan struct{}, 4)
			var wg sync.WaitGroup
			for i := 0; i < tc.reps; i++ {
				wg.Add(1)
				sem <- struct{}{}
				go func(i int) {
					defer wg.Done()
					defer func() { <-sem }()
					hold := i%2 == 1
					dir := t.TempDir()
					env := []string{"ROCPROF_VGPU_LOG=" + filepath.Join(dir, "vgpu-%p.log"), "ROCPROF_GO_SHIM_DEBUG=1"}
					if hold {
						env = append(env, "ROCPROF_GO_TEST_COMPLETION_HOLD=1")
					}
					opts := append(append([]string{}, tc.opts...), "--kernel-trace", "-f", "csv")
					res := profiled{opts: opts, argv: []string{app(t, "hsa_crash"), tc.mode, strconv.Itoa(dispatches)},
						env: env, dir: filepath.Join(dir, "out")}.run(t)
					if res.exit != tc.exit {
						t.Errorf("run %d: exit %d, want %d; stderr:\n%s", i, res.exit, tc.exit, res.stderr)
						return
					}
					if n := intField(t, res.stdout, "dispatches"); n != dispatches {
						t.Errorf("run %d: the app saw %d dispatches complete", i, n)
						return
					}
					rec := handlerRecorded(res.stderr)
					out := readOutputs(t, res.dir)
					pids := out.pids("kernel_trace")
					if len(pids) != 1 {
						t.Errorf("run %d (hold %v): kernel_trace for %d processes, want 1; stderr:\n%s", i, hold, len(pids), res.stderr)
						return
					}
					kt := out[pids[0]]["kernel_trace"]
					if len(kt.rows) != dispatches {
						t.Errorf("run %d (hold %v): %d dispatches in the trace, want exactly %d (handler recorded %d); stderr:\n%s",
							i, hold, len(kt.rows), dispatches, rec, res.stderr)
						return
					}
					if hold && rec != dispatches {
						t.Errorf("run %d: completion threads held, yet the handler recorded %d of %d", i, rec, dispatches)
					}
					checkAgainstPacketLog(t, i, kt, filepath.Join(dir, fmt.Sprintf("vgpu-%d.log", pids[0])))
					mu.Lock()
					if hold {
						handled = append(handled, rec)
					} else {
						byThread = append(byThread, rec)
					}
					mu.Unlock()
				}(i)
			}
			wg.Wait()
			report(t, "%s: %d runs, each exactly %d of %d dispatches, timestamps equal to the virtual GPU's; handler recorded %v with completion threads held, %v without; %.1fs",
				tc.mode, tc.reps, dispatches, dispatches, handled, byThread, time.Since(start).Seconds())
		})
	}
}

var handlerLine = regexp.MustCompile(`rocprof-go shim: signal \d+: recorded (\d+) completed dispatches`)

// handlerRecorded is what the shim's handler said it recorded (debug line).
func handlerRecorded(stderr string) int {
	m := handlerLine.FindStringSubmatch(stderr)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

var logDispatch = regexp.MustCompile(`"type":"dispatch".*"grid":\[(\d+),.*"start_ts":(\d+),"end_ts":(\d+)`)

// checkAgainstPacketLog compares each recorded dispatch's start and end with
// the ticks the virtual GPU wrote into its completion signal (10 ns each),
// matched by grid size (hsa_crash gives each dispatch its own).
func checkAgainstPacketLog(t *testing.T, run int, kt *table, log string) {
	f, err := os.Open(log)
	if err != nil {
		t.Errorf("run %d: %v", run, err)
		return
	}
	defer f.Close()
	want := map[string][2]int64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := logDispatch.FindStringSubmatch(sc.Text()); m != nil {
			s, _ := strconv.ParseInt(m[2], 10, 64)
			e, _ := strconv.ParseInt(m[3], 10, 64)
			want[m[1]] = [2]int64{s * 10, e * 10}
		}
	}
	gx, cs, ce := kt.col(t, "Grid_Size_X"), kt.col(t, "Start_Timestamp"), kt.col(t, "End_Timestamp")
	for _, r := range kt.rows {
		w, ok := want[r[gx]]
		s, _ := strconv.ParseInt(r[cs], 10, 64)
		e, _ := strconv.ParseInt(r[ce], 10, 64)
		if !ok || abs64(s-w[0]) > 1000 || abs64(e-w[1]) > 1000 {
			t.Errorf("run %d: dispatch with grid %s: start %d end %d, the virtual GPU wrote %d %d", run, r[gx], s, e, w[0], w[1])
			return
		}
	}
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
