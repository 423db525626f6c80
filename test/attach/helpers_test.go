package attachtest

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

const (
	// window is every attach's --attach-duration-msec (issue 42's 2.5 s).
	window = 2500
	// runTimeout bounds a program's run: it catches hangs (a deadlocked
	// target, a CLI that never detaches), it is no speed check.
	runTimeout = 3 * time.Minute
	// settleTimeout bounds how long a detached target may take to be as it
	// was: the control thread ends (pthread_exit) after it reported the
	// detach, and a target whose CLI died sees the socket's end first.
	settleTimeout = 10 * time.Second
)

// runtimes is the ROCm matrix, every runtime checked as built.
func runtimes(t *testing.T) []rocmmatrix.Runtime {
	rts, err := rocmmatrix.Ready(testsys.RepoRoot(t), testsys.BuildDir(t))
	require.NoError(t, err, "build the ROCm matrix: `make rocm-roots rocm-testapps` (as root)")
	require.Len(t, rts, 4, "the matrix is ROCm 5.2, 6.1, 6.4 and 7.2")
	return rts
}

// runtime is one runtime of the matrix by name.
func runtimeNamed(t *testing.T, name string) rocmmatrix.Runtime {
	for _, rt := range runtimes(t) {
		if rt.Name == name {
			return rt
		}
	}
	t.Fatalf("no ROCm %s in the matrix", name)
	return rocmmatrix.Runtime{}
}

// harness is what the tests of one runtime share: the CLI, and a
// temporary directory the root sees at the same path (the outputs, the
// spool root, the library cache).
type harness struct {
	rt    rocmmatrix.Runtime
	cli   string
	tmp   string
	spool string
	cache string
}

func newHarness(t *testing.T, rt rocmmatrix.Runtime) *harness {
	t.Helper()
	tmp := t.TempDir()
	// The spool root holds the run directory and its attach socket, whose
	// path must fit a unix socket's 107 bytes: t.TempDir's names, made of
	// the test's, are too long for it.
	spool, err := os.MkdirTemp("", "rpg-attach-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(spool) })
	h := &harness{rt: rt.WithBinds(tmp, spool), cli: testsys.Artifact(t, "rocprof-go"), tmp: tmp,
		spool: spool, cache: filepath.Join(tmp, "cache")}
	require.NoError(t, os.Mkdir(h.cache, 0o700))
	return h
}

// plainEnv is how a plain start looks on the virtual GPU: the clean
// environment and the virtual GPU's library in LD_PRELOAD (it plays the
// kernel's part: /dev/kfd, the render node, the KFD sysfs), nothing else.
func (h *harness) plainEnv(t *testing.T) []string {
	return append(testsys.UnprofiledEnv(), "LD_PRELOAD="+testsys.Artifact(t, filepath.Join("vgpu", "librocprof-go-vgpu.so")))
}

// cliEnv is the CLI's environment: clean, with its library cache and its
// spool root in the test's directory (removed with it).
func (h *harness) cliEnv() []string {
	return append(testsys.UnprofiledEnv(), "XDG_CACHE_HOME="+h.cache, "ROCPROF_GO_SPOOL_ROOT="+h.spool)
}

// server is a target started plainly: its pid (as the CLI sees it: the
// roots share the host's pid namespace), its workers' pids when it has
// any, and its output after the ready line.
type server struct {
	cmd     *exec.Cmd
	cancel  context.CancelFunc
	stdin   io.WriteCloser
	pid     int
	workers []int
	copied  chan struct{}
	out     bytes.Buffer
	errb    syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs argv plainly on the runtime and waits for its line "ready
// <pid> [workers <pid>...]".
func (h *harness) start(t *testing.T, argv ...string) *server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*runTimeout)
	s := &server{cancel: cancel, copied: make(chan struct{})}
	s.cmd = h.rt.Command(ctx, argv[0], argv[1:]...)
	s.cmd.Env = h.plainEnv(t)
	s.cmd.Stderr = &s.errb
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s.cmd.Cancel = func() error { return syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL) }
	s.cmd.WaitDelay = 10 * time.Second
	var err error
	s.stdin, err = s.cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := s.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, s.cmd.Start())
	t.Cleanup(func() {
		select {
		case <-s.copied:
			return
		default:
		}
		// Ended by a failed assertion: the workers too (their own group).
		for _, w := range s.workers {
			_ = syscall.Kill(w, syscall.SIGKILL)
		}
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		_ = s.cmd.Wait()
		cancel()
	})
	rd := bufio.NewReader(stdout)
	line := make(chan string, 1)
	go func() {
		l, _ := rd.ReadString('\n')
		line <- l
	}()
	var ready string
	select {
	case ready = <-line:
	case <-time.After(runTimeout):
		t.Fatalf("ROCm %s: %v printed no ready line within %s; stderr:\n%s", h.rt.Name, argv, runTimeout, s.errb.String())
	}
	f := strings.Fields(ready)
	require.True(t, len(f) >= 2 && f[0] == "ready", "ROCm %s: %v: want 'ready <pid>', got %q; stderr:\n%s", h.rt.Name, argv, ready, s.errb.String())
	s.pid, err = strconv.Atoi(f[1])
	require.NoError(t, err)
	if len(f) > 2 {
		require.Equal(t, "workers", f[2], "ready line %q", ready)
		for _, w := range f[3:] {
			n, err := strconv.Atoi(w)
			require.NoError(t, err)
			s.workers = append(s.workers, n)
		}
	}
	// rocm-root.sh execs its way to the program: the pid the ready line
	// names is the one started, seen alike by the test and the CLI.
	require.Equal(t, s.cmd.Process.Pid, s.pid, "the ready line's pid is the process started (one pid namespace)")
	go func() {
		_, _ = io.Copy(&s.out, rd)
		close(s.copied)
	}()
	return s
}

// pids is the server and its workers.
func (s *server) pids() []int { return append([]int{s.pid}, s.workers...) }

// finish closes the server's stdin, which ends its loop, and returns what
// it printed after its ready line; it must exit 0.
func (s *server) finish(t *testing.T) (stdout, stderr string) {
	t.Helper()
	require.NoError(t, s.stdin.Close())
	select {
	case <-s.copied:
	case <-time.After(runTimeout):
		t.Fatalf("the server (pid %d) did not end within %s of its stdin's end (deadlocked?); stderr:\n%s", s.pid, runTimeout, s.errb.String())
	}
	err := s.cmd.Wait()
	s.cancel()
	require.NoError(t, err, "the server (pid %d) ended badly; stdout:\n%s\nstderr:\n%s", s.pid, s.out.String(), s.errb.String())
	return s.out.String(), s.errb.String()
}

// reference runs argv plainly, unattached, for about a second and returns
// its output after the ready line.
func (h *harness) reference(t *testing.T, argv ...string) (stdout, stderr string) {
	t.Helper()
	s := h.start(t, argv...)
	time.Sleep(time.Second)
	return s.finish(t)
}

// procState is what a detach must leave as it found it.
type procState struct {
	Tasks  int
	FDs    int
	Ours   []string // mapped files of rocprof-go (the virtual GPU's library)
	SigCgt string   // the signals it handles
	Tracer string   // TracerPid
}

func snapshot(pid int) (procState, error) {
	var st procState
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return st, err
	}
	st.Tasks = len(tasks)
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return st, err
	}
	st.FDs = len(fds)
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return st, err
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 {
			path := strings.Join(f[5:], " ")
			if strings.Contains(path, "rocprof-go") && !seen[path] {
				seen[path] = true
				st.Ours = append(st.Ours, path)
			}
		}
	}
	sort.Strings(st.Ours)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return st, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			st.SigCgt = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "TracerPid:"); ok {
			st.Tracer = strings.TrimSpace(v)
		}
	}
	return st, nil
}

// steady returns the process's state once two snapshots 300 ms apart
// agree (the app's runtime may start a thread of its own a little after
// the ready line).
func steady(t *testing.T, pid int) procState {
	t.Helper()
	prev, err := snapshot(pid)
	require.NoError(t, err)
	for deadline := time.Now().Add(settleTimeout); ; {
		time.Sleep(300 * time.Millisecond)
		cur, err := snapshot(pid)
		require.NoError(t, err)
		if fmt.Sprint(cur) == fmt.Sprint(prev) {
			require.NotContains(t, strings.Join(cur.Ours, " "), "preload", "pid %d already has rocprof-go's preload library", pid)
			return cur
		}
		require.True(t, time.Now().Before(deadline), "pid %d's state does not settle: %+v, then %+v", pid, prev, cur)
		prev = cur
	}
}

// detached checks that each process is as it was before the attach
// (within settleTimeout: the control thread exits after its last word).
func detached(t *testing.T, before map[int]procState) {
	t.Helper()
	for pid, want := range before {
		var got procState
		var err error
		for deadline := time.Now().Add(settleTimeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if got, err = snapshot(pid); err != nil || fmt.Sprint(got) == fmt.Sprint(want) {
				break
			}
		}
		require.NoError(t, err, "pid %d is gone after the detach", pid)
		require.Equal(t, want.Ours, got.Ours, "pid %d: rocprof-go's mappings %s after the detach", pid, settleTimeout)
		require.Equal(t, want.Tasks, got.Tasks, "pid %d: threads %s after the detach", pid, settleTimeout)
		require.Equal(t, want.FDs, got.FDs, "pid %d: open descriptors %s after the detach", pid, settleTimeout)
		require.Equal(t, want.SigCgt, sigCgtOf(t, pid, want, got), "pid %d: handled signals after the detach", pid)
		require.Equal(t, "0", got.Tracer, "pid %d: still traced after the detach", pid)
	}
}

// sigSetXID is glibc's SIGSETXID (SIGRTMIN+1, signal 33): the first
// pthread_create of a process installs its handler (nptl's late_init, by
// which setuid reaches every thread) and marks the process multi-threaded
// for good. A single-threaded target (a launcher's parent) keeps it after
// the agent's control thread: removing it would break a later setuid of
// the app's own threads, so it is the one handler a detach may leave, and
// only in a process that had no thread before.
const sigSetXID = 33

// sigCgtOf is got's SigCgt, less glibc's SIGSETXID handler when the
// process was single-threaded before the attach and had none.
func sigCgtOf(t *testing.T, pid int, want, got procState) string {
	w, err1 := strconv.ParseUint(want.SigCgt, 16, 64)
	g, err2 := strconv.ParseUint(got.SigCgt, 16, 64)
	bit := uint64(1) << (sigSetXID - 1)
	if err1 == nil && err2 == nil && want.Tasks == 1 && w&bit == 0 && g^w == bit {
		t.Logf("pid %d (single-threaded before the attach) keeps glibc's SIGSETXID handler, installed by its first pthread_create", pid)
		return want.SigCgt
	}
	return got.SigCgt
}

func states(t *testing.T, pids []int) map[int]procState {
	m := map[int]procState{}
	for _, p := range pids {
		m[p] = steady(t, p)
	}
	return m
}

// boottime is CLOCK_BOOTTIME in ns, the clock of every output timestamp.
func boottime() uint64 {
	var ts syscall.Timespec
	const clockBoottime = 7
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockBoottime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		panic(e)
	}
	return uint64(ts.Sec)*1e9 + uint64(ts.Nsec)
}

// attachRun is one run of the CLI in attach mode.
type attachRun struct {
	exit           int
	stdout, stderr string
	from, to       uint64         // CLOCK_BOOTTIME around the CLI's run
	dir            string         // its -d
	lost           map[int]uint64 // run.json's dispatches_lost by pid
}

// attachArgs is the CLI's command line for an attach of durationMS (0:
// none) with the three tracing domains, outputs in dir named name.
func attachArgs(pid, durationMS int, dir, name string, formats ...string) []string {
	args := []string{"--attach", strconv.Itoa(pid)}
	if durationMS > 0 {
		args = append(args, "--attach-duration-msec", strconv.Itoa(durationMS))
	}
	args = append(args, "--kernel-trace", "--hip-trace", "--marker-trace", "-d", dir, "-o", name, "-f")
	return append(args, formats...)
}

// attach runs the CLI with args on the runtime (in the root, as the target)
// and returns what it did.
func (h *harness) attach(t *testing.T, args ...string) attachRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := h.rt.Command(ctx, h.cli, args...)
	cmd.Env = h.cliEnv()
	cmd.Dir = h.tmp
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	r := attachRun{from: boottime()}
	err := cmd.Run()
	r.to = boottime()
	require.NoError(t, ctx.Err(), "ROCm %s: rocprof-go %v did not end within %s; stderr:\n%s", h.rt.Name, args, runTimeout, errb.String())
	r.stdout, r.stderr = out.String(), errb.String()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.exit = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	for i, a := range args {
		if a == "-d" && i+1 < len(args) {
			r.dir = args[i+1]
		}
	}
	t.Logf("ROCm %s: rocprof-go %s: exit %d in %.2f s; stderr:\n%s", h.rt.Name, strings.Join(args, " "), r.exit,
		float64(r.to-r.from)/1e9, r.stderr)
	r.lost = map[int]uint64{}
	if b, err := os.ReadFile(filepath.Join(r.dir, "run.json")); err == nil {
		var run struct {
			Attach struct {
				Processes []struct {
					PID            int     `json:"pid"`
					DispatchesLost uint64  `json:"dispatches_lost"`
					AttachMS       float64 `json:"attach_ms"`
					DetachMS       float64 `json:"detach_ms"`
				} `json:"processes"`
			} `json:"attach"`
		}
		require.NoError(t, json.Unmarshal(b, &run), "%s/run.json", r.dir)
		for _, p := range run.Attach.Processes {
			r.lost[p.PID] = p.DispatchesLost
			t.Logf("run.json: pid %d attached in %.1f ms, detached in %.1f ms, %d dispatches lost", p.PID, p.AttachMS, p.DetachMS, p.DispatchesLost)
		}
	}
	return r
}

// succeeded checks the attach exited 0 (an error with its stderr, the
// test going on to what it wrote).
func (r attachRun) succeeded(t *testing.T, what string) {
	t.Helper()
	if r.exit != 0 {
		t.Errorf("%s: rocprof-go exited %d; stderr:\n%s", what, r.exit, r.stderr)
	}
}

// table is a CSV file's rows by column name.
type table struct {
	path string
	cols map[string]int
	rows [][]string
}

func readCSV(t *testing.T, path string) table {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err, path)
	require.NotEmpty(t, recs, "%s has no header", path)
	tb := table{path: path, cols: map[string]int{}, rows: recs[1:]}
	for i, c := range recs[0] {
		tb.cols[c] = i
	}
	return tb
}

func (tb table) col(t *testing.T, name string) []string {
	t.Helper()
	i, ok := tb.cols[name]
	require.True(t, ok, "%s has no column %s", tb.path, name)
	out := make([]string, len(tb.rows))
	for r, row := range tb.rows {
		out[r] = row[i]
	}
	return out
}

// count is how many rows have value in column name.
func (tb table) count(t *testing.T, name, value string) int {
	n := 0
	for _, v := range tb.col(t, name) {
		if v == value {
			n++
		}
	}
	return n
}

// countContaining is how many rows' column name contains part.
func (tb table) countContaining(t *testing.T, name, part string) int {
	n := 0
	for _, v := range tb.col(t, name) {
		if strings.Contains(v, part) {
			n++
		}
	}
	return n
}

// inWindow checks every row's timestamps lie within the CLI's run (an
// error that names the rows outside it, the test going on). A kernel
// dispatch the agent could not time (in flight at the attach, or taken by
// the packet processor before the agent's signal was in it) has no record:
// it is counted in run.json's dispatches_lost of its process (docs/attach.md,
// "What it cannot see"), never written with made-up or zero times.
func (tb table) inWindow(t *testing.T, r attachRun, lost uint64) {
	t.Helper()
	starts, ends := tb.col(t, "Start_Timestamp"), tb.col(t, "End_Timestamp")
	var bad []string
	for i := range starts {
		s, err := strconv.ParseUint(starts[i], 10, 64)
		require.NoError(t, err, "%s row %d", tb.path, i+1)
		e, err := strconv.ParseUint(ends[i], 10, 64)
		require.NoError(t, err, "%s row %d", tb.path, i+1)
		if !(r.from <= s && s <= e && e <= r.to) {
			bad = append(bad, fmt.Sprintf("row %d [%d, %d]", i+1, s, e))
		}
	}
	if len(bad) > 0 {
		t.Errorf("%s: %d of %d rows are not within the attach's run [%d, %d] (CLOCK_BOOTTIME; run.json counts %d dispatches lost): %s",
			tb.path, len(bad), len(starts), r.from, r.to, lost, strings.Join(bad[:min(len(bad), 5)], ", "))
	}
}

// traces are one process's three CSV traces of an attach.
type traces struct {
	kernels, hip, markers table
}

// minIters is the fewest iterations an attach of one lane of
// attach_server must see: a fifth of what 2.5 s of 15 ms pauses give.
const minIters = window / 15 / 5

// serverTraces reads prefix's traces of attach_server and checks what
// every window of it holds: kernels on both streams (scale, vadd), HIP
// calls (the copies and the synchronizations), "iteration" ranges, as
// many ranges as copies (give or take the iterations the window cut, one
// per lane), all within the window; at least `least` iterations.
func serverTraces(t *testing.T, r attachRun, prefix string, pid, lanes, least int) traces {
	t.Helper()
	tr := traces{
		kernels: readCSV(t, prefix+"_kernel_trace.csv"),
		hip:     readCSV(t, prefix+"_hip_api_trace.csv"),
		markers: readCSV(t, prefix+"_marker_api_trace.csv"),
	}
	scale, vadd := tr.kernels.countContaining(t, "Kernel_Name", "scale"), tr.kernels.countContaining(t, "Kernel_Name", "vadd")
	copies, syncs := tr.hip.count(t, "Function", "hipMemcpyAsync"), tr.hip.count(t, "Function", "hipStreamSynchronize")
	ranges := tr.markers.count(t, "Function", "iteration")
	t.Logf("%s: %d kernel records (%d scale, %d vadd), %d HIP calls (%d hipMemcpyAsync, %d hipStreamSynchronize), %d marker records (%d iteration)",
		filepath.Base(prefix), len(tr.kernels.rows), scale, vadd, len(tr.hip.rows), copies, syncs, len(tr.markers.rows), ranges)
	require.GreaterOrEqual(t, scale, least, "%s: kernels on stream 1", prefix)
	require.GreaterOrEqual(t, vadd, least, "%s: kernels on stream 2", prefix)
	require.GreaterOrEqual(t, copies, least, "%s: hipMemcpyAsync calls", prefix)
	require.GreaterOrEqual(t, syncs, 2*least, "%s: hipStreamSynchronize calls", prefix)
	require.GreaterOrEqual(t, ranges, least, "%s: iteration ranges", prefix)
	require.InDelta(t, copies, ranges, float64(2*lanes), "%s: an iteration range per copy, but for the iterations the window cut", prefix)
	// A dispatch the agent could not time has no row (run.json counts it):
	// the lost ones may all fall on one stream.
	require.InDelta(t, scale, vadd, float64(2*lanes)+float64(r.lost[pid]),
		"%s: a kernel on each stream per iteration (%d dispatches lost)", prefix, r.lost[pid])
	tr.kernels.inWindow(t, r, r.lost[pid])
	tr.hip.inWindow(t, r, 0)
	tr.markers.inWindow(t, r, 0)
	return tr
}

// jsonCounts reads a JSON output's record counts of the kernel, HIP and
// marker domains (one process).
func jsonCounts(t *testing.T, path string) (kernels, hip, markers int) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var doc outputtest.JSONDoc
	require.NoError(t, outputtest.JSONUnmarshal(f, &doc), path)
	require.Len(t, doc.Tool, 1, "%s: one process", path)
	c := outputtest.JSONCounts(&doc, 0)
	return int(c[model.DomKernel]), int(c[model.DomHIP]), int(c[model.DomMarker])
}

// rocpdCounts reads a ROCpd database's kernel dispatches and regions (HIP
// calls and markers).
func rocpdCounts(t *testing.T, path string) (kernels, regions int) {
	t.Helper()
	require.FileExists(t, path)
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.QueryRow("SELECT count(*) FROM kernels").Scan(&kernels), path)
	require.NoError(t, db.QueryRow("SELECT count(*) FROM regions").Scan(&regions), path)
	return kernels, regions
}

// outputPIDs lists the pids of the files dir/<pid>_<suffix>.
func outputPIDs(t *testing.T, dir, suffix string) []int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_"+suffix))
	require.NoError(t, err)
	var pids []int
	for _, f := range files {
		p, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(f), "_"+suffix))
		require.NoError(t, err, "%s: not named <pid>_%s", f, suffix)
		pids = append(pids, p)
	}
	sort.Ints(pids)
	return pids
}

func sorted(p []int) []int {
	out := append([]int(nil), p...)
	sort.Ints(out)
	return out
}

// running reports whether pid runs (not gone, not a zombie).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

// mapsPreload reports whether pid maps rocprof-go's preload library.
func mapsPreload(pid int) bool {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	return bytes.Contains(b, []byte("librocprof-go-preload"))
}

// lines is s's lines but empty ones.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}
