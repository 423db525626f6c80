package attachtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// TestAttachDetachReattach is issue 42's "Done when", on every runtime:
// attach_server started plainly; attach 2.5 s with --kernel-trace
// --hip-trace --marker-trace (CSV), detach, attach again (CSV, JSON and
// ROCpd), detach. Each attach exits 0 with kernel, HIP and marker records
// of its window (the same counts in every format); each detach leaves the
// process as it was; the server then ends with the output of a run
// nobody attached to, byte for byte.
func TestAttachDetachReattach(t *testing.T) {
	for _, rt := range runtimes(t) {
		t.Run("rocm"+rt.Name, func(t *testing.T) {
			h := newHarness(t, rt)
			app := filepath.Join(rt.Apps, "attach_server")
			wantOut, wantErr := h.reference(t, app)

			s := h.start(t, app)
			before := states(t, s.pids())
			out := filepath.Join(h.tmp, "out")

			r := h.attach(t, attachArgs(s.pid, window, out, "first", "csv")...)
			r.succeeded(t, "the first attach")
			serverTraces(t, r, filepath.Join(out, "first"), s.pid, 1, minIters)
			require.FileExists(t, filepath.Join(out, "run.json"))
			detached(t, before)

			r = h.attach(t, attachArgs(s.pid, window, out, "second", "csv", "json", "rocpd")...)
			r.succeeded(t, "the re-attach")
			tr := serverTraces(t, r, filepath.Join(out, "second"), s.pid, 1, minIters)
			k, hip, m := jsonCounts(t, filepath.Join(out, "second_results.json"))
			require.Equal(t, []int{len(tr.kernels.rows), len(tr.hip.rows), len(tr.markers.rows)}, []int{k, hip, m},
				"the JSON's kernel, HIP and marker records are the CSV files'")
			dk, regions := rocpdCounts(t, filepath.Join(out, "second_results.db"))
			require.Equal(t, []int{len(tr.kernels.rows), len(tr.hip.rows) + len(tr.markers.rows)}, []int{dk, regions},
				"the ROCpd database's kernels and regions are the CSV files' kernel records and HIP and marker records")
			detached(t, before)

			gotOut, gotErr := s.finish(t)
			require.Equal(t, wantOut, gotOut, "the server's output after two attaches is that of a run nobody attached to")
			require.Equal(t, wantErr, gotErr, "the server's stderr after two attaches is that of a run nobody attached to "+
				"(HIP's 'Resource leak detected by SharedSignalPool, N Signals leaked' at exit counts the runtime's signals still allocated)")
		})
	}
}

// TestAttachToEveryWorkerOfAProcessTree: attach_server --workers 4 (the
// parent fork+execs 4 copies of itself and makes no HIP call): one attach
// to the parent gives 4 outputs, one per worker's pid (%pid% in -o), each
// with its worker's records of the window; every process is as it was
// after the detach, and the tree's output is unchanged.
func TestAttachToEveryWorkerOfAProcessTree(t *testing.T) {
	for _, name := range []string{rocmmatrix.HostName, "7.2"} {
		rt := runtimeNamed(t, name)
		t.Run("rocm"+rt.Name, func(t *testing.T) {
			h := newHarness(t, rt)
			argv := []string{filepath.Join(rt.Apps, "attach_server"), "--workers", "4"}
			wantOut, wantErr := h.reference(t, argv...)

			s := h.start(t, argv...)
			require.Len(t, s.workers, 4)
			before := states(t, s.pids())
			out := filepath.Join(h.tmp, "out")
			r := h.attach(t, attachArgs(s.pid, window, out, "%pid%_tree", "csv")...)
			r.succeeded(t, "the attach")
			require.Equal(t, sorted(s.workers), outputPIDs(t, out, "tree_kernel_trace.csv"),
				"one kernel trace per worker (the parent launches no kernel)")
			for _, w := range s.workers {
				serverTraces(t, r, filepath.Join(out, strconv.Itoa(w)+"_tree"), w, 1, minIters)
			}
			detached(t, before)
			gotOut, gotErr := s.finish(t)
			require.Equal(t, wantOut, gotOut)
			require.Equal(t, wantErr, gotErr)
		})
	}
}

// TestAttachToPythonSpawnWorkers: 4 workers of Python's multiprocessing
// "spawn" (fork + exec of a fresh interpreter; the parent has loaded HIP
// and calls nothing, a resource tracker process has no HIP at all), each
// loading libamdhip64 through ctypes and launching module_fill from a code
// object (hipModuleLoad, hipModuleLaunchKernel), as an inference server's
// workers would: one attach to the parent gives each worker its own
// kernel trace. (ctypes calls HIP through pointers dlsym returned, not
// through a GOT slot, so their HIP calls are not seen; HIP's own calls of
// HSA are, and with them the dispatches.)
func TestAttachToPythonSpawnWorkers(t *testing.T) {
	for _, name := range []string{rocmmatrix.HostName, "7.2"} {
		rt := runtimeNamed(t, name)
		t.Run("rocm"+rt.Name, func(t *testing.T) {
			h := newHarness(t, rt)
			argv := []string{"/usr/bin/python3", filepath.Join(testsys.RepoRoot(t), "testdata", "apps", "attach_spawn.py"),
				"--co", filepath.Join(rt.Apps, "module_kernels.co"), "--workers", "4"}
			wantOut, wantErr := h.reference(t, argv...)

			s := h.start(t, argv...)
			require.Len(t, s.workers, 4)
			before := states(t, s.pids())
			out := filepath.Join(h.tmp, "out")
			r := h.attach(t, attachArgs(s.pid, window, out, "%pid%_spawn", "csv")...)
			r.succeeded(t, "the attach")
			require.Equal(t, sorted(s.workers), outputPIDs(t, out, "spawn_kernel_trace.csv"), "one kernel trace per worker")
			for _, w := range s.workers {
				k := readCSV(t, filepath.Join(out, strconv.Itoa(w)+"_spawn_kernel_trace.csv"))
				n := k.countContaining(t, "Kernel_Name", "module_fill")
				t.Logf("worker %d: %d kernel records, %d of module_fill", w, len(k.rows), n)
				require.GreaterOrEqual(t, n, minIters, "worker %d's module_fill dispatches", w)
				k.inWindow(t, r, r.lost[w])
			}
			detached(t, before)
			gotOut, gotErr := s.finish(t)
			require.Equal(t, wantOut, gotOut)
			require.Equal(t, wantErr, gotErr)
		})
	}
}

// TestAttachWhile64ThreadsAreInHIP: 64 threads, each with its own two
// streams, in HIP calls without pause (copies, launches,
// synchronizations) while the CLI attaches and detaches: the attach
// succeeds with the lanes' records, the app neither deadlocks nor
// crashes, and its result is unchanged.
func TestAttachWhile64ThreadsAreInHIP(t *testing.T) {
	for _, name := range []string{rocmmatrix.HostName, "7.2"} {
		rt := runtimeNamed(t, name)
		t.Run("rocm"+rt.Name, func(t *testing.T) {
			h := newHarness(t, rt)
			argv := []string{filepath.Join(rt.Apps, "attach_server"), "--threads", "64", "--sleep-ms", "0", "--elements", "4096"}
			wantOut, wantErr := h.reference(t, argv...)

			s := h.start(t, argv...)
			before := states(t, s.pids())
			out := filepath.Join(h.tmp, "out")
			r := h.attach(t, attachArgs(s.pid, window, out, "threads", "csv")...)
			r.succeeded(t, "the attach")
			tr := serverTraces(t, r, filepath.Join(out, "threads"), s.pid, 64, 64)
			threads := map[string]bool{}
			for _, tid := range tr.markers.col(t, "Thread_Id") {
				threads[tid] = true
			}
			// 64 threads without pause on 2 cores are not scheduled evenly:
			// in 2.5 s some lanes may make no iteration at all.
			t.Logf("%d of 64 lanes' threads have iteration ranges in the window", len(threads))
			require.GreaterOrEqual(t, len(threads), 8, "iteration ranges from many of the lanes' threads")
			detached(t, before)
			gotOut, gotErr := s.finish(t)
			require.Equal(t, wantOut, gotOut)
			require.Equal(t, wantErr, gotErr)
		})
	}
}

// TestKilledCLILeavesTheTargetDetached: the CLI SIGKILLed while attached
// (no duration: it would detach on Enter). The target keeps running,
// sees the socket's end, detaches by itself (the library unmapped, every
// thread and descriptor of ours gone, within settleTimeout), and `rocprof-go
// convert` of the run directory the CLI left writes what was recorded.
func TestKilledCLILeavesTheTargetDetached(t *testing.T) {
	rt := runtimeNamed(t, rocmmatrix.HostName)
	h := newHarness(t, rt)
	app := filepath.Join(rt.Apps, "attach_server")
	wantOut, wantErr := h.reference(t, app)

	s := h.start(t, app)
	before := states(t, s.pids())
	out := filepath.Join(h.tmp, "out")
	cmd := h.rt.Command(t.Context(), h.cli, attachArgs(s.pid, 0, out, "killed", "csv")...)
	cmd.Env = h.cliEnv()
	cmd.Dir = h.tmp
	var errb syncBuffer
	cmd.Stderr = &errb
	stdin, err := cmd.StdinPipe() // held open: no Enter, no end of file
	require.NoError(t, err)
	defer stdin.Close()
	require.NoError(t, cmd.Start())
	attached := false
	for deadline := time.Now().Add(runTimeout); !attached && time.Now().Before(deadline) && running(cmd.Process.Pid); {
		attached = mapsPreload(s.pid)
		time.Sleep(20 * time.Millisecond)
	}
	require.True(t, attached, "the target never mapped the preload library; rocprof-go's stderr:\n%s", errb.String())
	time.Sleep(time.Second) // iterations recorded
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	killedAt := time.Now()

	detached(t, before)
	t.Logf("the target detached by itself %.2f s after the CLI's SIGKILL", time.Since(killedAt).Seconds())
	require.True(t, running(s.pid), "the target keeps running")

	runs, err := filepath.Glob(filepath.Join(h.spool, "rocprof-go-run-*"))
	require.NoError(t, err)
	require.Len(t, runs, 1, "the killed CLI's run directory in the spool root; rocprof-go's stderr:\n%s", errb.String())
	conv := filepath.Join(h.tmp, "conv")
	c := exec.Command(h.cli, "convert", "-i", runs[0], "-f", "csv", "-d", conv, "-o", "conv")
	c.Env = h.cliEnv()
	o, err := c.CombinedOutput()
	require.NoError(t, err, "convert -i %s:\n%s", runs[0], o)
	for _, f := range []string{"kernel_trace", "hip_api_trace", "marker_api_trace"} {
		tb := readCSV(t, filepath.Join(conv, "conv_"+f+".csv"))
		require.NotEmpty(t, tb.rows, "%s: the records of the second before the SIGKILL", f)
	}

	gotOut, gotErr := s.finish(t)
	require.Equal(t, wantOut, gotOut)
	require.Equal(t, wantErr, gotErr)
}

// TestAttachRefusesAStaticProgram: a statically linked target (no dynamic
// loader: nothing could be loaded into it) is refused with one line that
// names it, exit non-zero, and is left untouched (running, not traced, as
// many threads and descriptors, no mapping of ours).
func TestAttachRefusesAStaticProgram(t *testing.T) {
	rt := runtimeNamed(t, rocmmatrix.HostName)
	h := newHarness(t, rt)
	s := h.start(t, testsys.Artifact(t, filepath.Join("testdata", "attach_static")))
	before := states(t, s.pids())
	out := filepath.Join(h.tmp, "out")
	r := h.attach(t, attachArgs(s.pid, window, out, "static", "csv")...)
	require.NotEqual(t, 0, r.exit, "attaching to a static program must fail")
	ls := lines(r.stderr)
	require.Len(t, ls, 1, "one line of error: %q", r.stderr)
	require.Contains(t, strings.ToLower(ls[0]), "static", "the error names the cause")
	require.Contains(t, ls[0], strconv.Itoa(s.pid), "the error names the target")
	detached(t, before)
	require.True(t, running(s.pid))
	_, err := os.Stat(filepath.Join(out, "run.json"))
	t.Logf("run.json after the refusal: %v", err)
	gotOut, _ := s.finish(t)
	require.Equal(t, "attach_static: stdin ended\n", gotOut)
}
