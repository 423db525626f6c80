package tracing_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	spooltest.CleanupNative()
	os.Exit(code)
}

func buildNative(tb testing.TB) (driver, preload string) { return spooltest.BuildNative(tb) }

func driverCmd(tb testing.TB, spoolDir string, args ...string) *exec.Cmd {
	return spooltest.DriverCommand(tb, spoolDir, args...)
}

// readAll reads every spool in dir, keyed by pid, checking each thread's HIP
// records form the sequence 0, 1, 2, ... (nothing published is lost).
type procRead struct {
	info    tracing.ProcessInfo
	stats   tracing.Stats
	perFunc map[uint32]uint64 // HIP record count per function (= writer thread)
	fixture []string
}

func readAll(t *testing.T, dir string) map[int32]*procRead {
	t.Helper()
	paths, err := tracing.List(dir)
	require.NoError(t, err)
	out := map[int32]*procRead{}
	for _, p := range paths {
		r, err := tracing.Open(p)
		require.NoError(t, err)
		pr := &procRead{info: r.Process(), perFunc: map[uint32]uint64{}}
		tidFunc := map[uint32]uint32{} // each writer thread writes one function id
		for r.Next() {
			switch r.Kind() {
			case tracing.KindHIPAPI:
				a := r.APICall()
				if a.Domain == tracing.DomainHIPRuntime && a.Function != 999 {
					// Each writer thread numbers its records 0, 1, 2, ...
					// and writes them in order into its own chunks.
					require.Equal(t, pr.perFunc[a.Function], a.CorrelationID,
						"thread %d: record lost or out of order", a.Function)
					require.Equal(t, a.CorrelationID, a.Start)
					require.Equal(t, a.CorrelationID+1, a.End)
					// Compact records take their thread from the chunk
					// (header, or the record naming a chunk's next writer).
					require.NotZero(t, a.TID)
					if f, ok := tidFunc[a.TID]; ok {
						require.Equal(t, f, a.Function, "thread %d's records attributed to another thread", a.TID)
					}
					tidFunc[a.TID] = a.Function
					pr.perFunc[a.Function]++
				}
			default:
				pr.fixture = append(pr.fixture, r.Kind().String())
			}
		}
		pr.stats = r.Stats()
		require.NoError(t, r.Close())
		out[pr.info.PID] = pr
	}
	return out
}

var fixtureKinds = []string{"STRING", "MARKER", "HSA_API", "KERNEL_SYMBOL", "KERNEL_DISPATCH",
	"MEMORY_COPY", "MEMORY_ALLOCATION", "SCRATCH_MEMORY", "CODE_OBJECT", "AGENT_INFO",
	"COUNTER_SAMPLE"}

func TestRecorderEndings(t *testing.T) {
	const threads, records = 4, 20000
	cases := []struct {
		name     string
		mode     string
		exitCode int
		signaled bool
		torn     uint64
	}{
		{name: "return from main", mode: "return"},
		{name: "_exit", mode: "exit", exitCode: 3},
		{name: "abort", mode: "abort", signaled: true},
		{name: "torn record", mode: "torn", torn: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := driverCmd(t, dir, tc.mode, strconv.Itoa(threads), strconv.Itoa(records))
			err := cmd.Run()
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if tc.signaled {
				require.True(t, ws.Signaled())
			} else {
				require.Equal(t, tc.exitCode, ws.ExitStatus(), "%v", err)
			}
			procs := readAll(t, dir)
			require.Len(t, procs, 1)
			pr := procs[int32(cmd.Process.Pid)]
			require.NotNil(t, pr)
			for f := uint32(0); f < threads; f++ {
				require.Equal(t, uint64(records), pr.perFunc[f])
			}
			require.Equal(t, fixtureKinds, pr.fixture)
			require.Equal(t, tc.torn, pr.stats.Torn)
			require.Zero(t, pr.stats.Invalid)
			require.Zero(t, pr.info.Dropped)
			require.Equal(t, uint64(threads*records), pr.stats.Count(tracing.KindHIPAPI))
		})
	}
}

func TestRecorderProcessInfo(t *testing.T) {
	dir := t.TempDir()
	cmd := driverCmd(t, dir, "return", "1", "10")
	cmd.Dir = dir
	require.NoError(t, cmd.Run())
	procs := readAll(t, dir)
	pr := procs[int32(cmd.Process.Pid)]
	require.NotNil(t, pr)
	p := pr.info
	host, err := os.Hostname()
	require.NoError(t, err)
	require.Equal(t, host, p.Hostname)
	require.Equal(t, int32(os.Getpid()), p.PPID)
	require.Equal(t, int32(syscall.Getpgrp()), p.PGID)
	require.Equal(t, []string{cmd.Path, "return", "1", "10"}, p.Argv)
	require.Equal(t, dir, p.Cwd)
	require.Equal(t, cmd.Path, p.Exe)
	v, ok := p.Getenv("ROCPROF_GO_SPOOL_DIR")
	require.True(t, ok)
	require.Equal(t, dir, v)
	require.Zero(t, p.ForkGeneration)
	require.NotZero(t, p.StartBoottimeNs)
	require.InDelta(t, time.Now().UnixNano(), int64(p.StartRealtimeNs), float64(time.Minute))
}

func TestRecorderFork(t *testing.T) {
	// fork: the parent records before it forks; fork-idle: after (the fork
	// handlers then have nothing to reset, and do nothing).
	for _, mode := range []string{"fork", "fork-idle"} {
		t.Run(mode, func(t *testing.T) { testRecorderFork(t, mode) })
	}
}

func testRecorderFork(t *testing.T, mode string) {
	const children, records = 3, 5000
	dir := t.TempDir()
	cmd := driverCmd(t, dir, mode, strconv.Itoa(children), strconv.Itoa(records))
	require.NoError(t, cmd.Run())
	procs := readAll(t, dir)
	require.Len(t, procs, 1+children, "each fork child writes its own spool")
	parent := procs[int32(cmd.Process.Pid)]
	require.NotNil(t, parent)
	require.Equal(t, fixtureKinds, parent.fixture)
	for f := uint32(0); f < children; f++ {
		require.Equal(t, uint64(records), parent.perFunc[f])
	}
	seen := map[uint32]bool{}
	for pid, pr := range procs {
		if pid == parent.info.PID {
			continue
		}
		require.Equal(t, parent.info.PID, pr.info.PPID)
		require.Equal(t, uint64(1), pr.info.ForkGeneration)
		require.Empty(t, pr.fixture, "a child must not see its parent's records")
		require.Len(t, pr.perFunc, 1)
		for f, n := range pr.perFunc {
			require.Equal(t, uint64(records), n)
			seen[f] = true
		}
	}
	require.Len(t, seen, children)
}

func TestRecorderSIGKILL(t *testing.T) {
	const threads, records = 3, 20000
	dir := t.TempDir()
	cmd := driverCmd(t, dir, "kill", strconv.Itoa(threads), strconv.Itoa(records))
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	// Never leave an endless writer behind, whatever fails below.
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	procs := readAll(t, dir) // checks every thread's records are gap-free
	pr := procs[int32(cmd.Process.Pid)]
	require.NotNil(t, pr)
	for f := uint32(0); f < threads; f++ {
		require.GreaterOrEqual(t, pr.perFunc[f], uint64(records), "thread %d lost records", f)
	}
	require.LessOrEqual(t, pr.stats.Torn, uint64(threads), "at most one torn record per thread")
	require.Zero(t, pr.stats.Invalid)
	t.Logf("after SIGKILL: %d records, %d torn", pr.stats.Records, pr.stats.Torn)
}

func TestRecorderSignalHandlerRecords(t *testing.T) {
	const threads, records = 2, 200000
	dir := t.TempDir()
	cmd := driverCmd(t, dir, "signal", strconv.Itoa(threads), strconv.Itoa(records))
	out, err := cmd.Output()
	require.NoError(t, err)
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(string(out), "signals ")))
	require.NoError(t, err)
	require.Positive(t, n, "no SIGALRM was delivered during the run")
	procs := readAll(t, dir)
	pr := procs[int32(cmd.Process.Pid)]
	for f := uint32(0); f < threads; f++ {
		require.Equal(t, uint64(records), pr.perFunc[f])
	}
	// One fixture marker plus one per delivered signal: a handler that records
	// while its thread is mid-record must not corrupt anything. The only
	// record it may drop (and count) is one that would need the segment lock
	// its own thread holds.
	require.Equal(t, uint64(n+1), pr.stats.Count(tracing.KindMarker)+pr.info.Dropped)
	require.LessOrEqual(t, pr.info.Dropped, uint64(2))
	require.Zero(t, pr.stats.Torn)
}

// Traced calls keep TSC ticks (version-3 records) behind per-chunk clock
// records: with several threads crossing chunks and a signal handler
// recording traced calls in the middle of theirs, every record converts,
// none is lost or invalid, and every time falls inside the run as the
// recorder's own ns clock saw it.
func TestRecorderTickRecordsConvert(t *testing.T) {
	const threads, records = 2, 300000
	dir := t.TempDir()
	cmd := driverCmd(t, dir, "ticks", strconv.Itoa(threads), strconv.Itoa(records))
	cmd.Env = append(cmd.Env, "ROCPROF_GO_TSC=1") // the tick path, whatever the CPU reports
	out, err := cmd.Output()
	require.NoError(t, err)
	var signals, tsc int
	var before, after uint64
	_, err = fmt.Sscanf(string(out), "signals %d tsc %d before %d after %d", &signals, &tsc, &before, &after)
	require.NoError(t, err, string(out))
	require.Equal(t, 1, tsc, "ROCPROF_GO_TSC=1: the recorder must use the TSC")
	require.Positive(t, signals, "no SIGALRM was delivered during the run")
	r := openOnlySpool(t, dir)
	perFunc := map[uint32]int{}
	var ticks int
	for r.Next() {
		if r.Kind() != tracing.KindHSAAPI {
			continue
		}
		if f := r.APICall().Function; f >= threads && f != 999 {
			continue // the driver's fixture record
		}
		if r.Bytes()[6] == 3 {
			ticks++
		}
		a := r.APICall()
		perFunc[a.Function]++
		require.LessOrEqual(t, a.Start, a.End)
		require.GreaterOrEqual(t, a.Start, before, "call %d starts before the run", a.CorrelationID)
		require.LessOrEqual(t, a.End, after, "call %d ends after the run", a.CorrelationID)
	}
	st := r.Stats()
	require.Zero(t, st.Invalid)
	require.Zero(t, st.Torn)
	require.Zero(t, r.Process().Dropped)
	for f := uint32(0); f < threads; f++ {
		require.Equal(t, records, perFunc[f], "thread %d", f)
	}
	require.Equal(t, signals, perFunc[999], "one call per delivered signal")
	require.Equal(t, threads*records+signals, ticks, "every call kept its ticks")
}

func TestRecorderOffWithoutSpoolDir(t *testing.T) {
	driver, _ := buildNative(t)
	dir := t.TempDir()
	cmd := exec.Command(driver, "return", "2", "100")
	cmd.Dir = dir
	cmd.Env = []string{"ROCPROF_HIP_RUNTIME_API_TRACE=1", "ROCPROF_GO_SPOOL_DIR="}
	require.NoError(t, cmd.Run())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries)
}

func TestRecorderThreadChurn(t *testing.T) {
	const threads, records = 4, 50
	dir := t.TempDir()
	cmd := driverCmd(t, dir, "churn", strconv.Itoa(threads), strconv.Itoa(records))
	require.NoError(t, cmd.Run())
	r := openOnlySpool(t, dir)
	perFunc := map[uint32]uint64{}
	for r.Next() {
		if r.Kind() == tracing.KindHIPAPI {
			perFunc[r.APICall().Function]++
		}
	}
	for f := uint32(0); f < threads; f++ {
		require.Equal(t, uint64(100*records), perFunc[f])
	}
	// 400 threads; exited threads' chunks are reused instead of one each.
	require.Less(t, r.Process().ChunksReserved, uint64(20))
	require.Zero(t, r.Stats().Torn)
}

func TestRecorderSurvivesClosedDescriptor(t *testing.T) {
	const threads, records = 4, 60000 // ~11 MiB: the spool must grow past its first segment
	dir := t.TempDir()
	decoy := filepath.Join(t.TempDir(), "app-file")
	cmd := driverCmd(t, dir, "decoy", strconv.Itoa(threads), strconv.Itoa(records))
	cmd.Env = append(cmd.Env, "DECOY="+decoy)
	out, err := cmd.Output()
	require.NoError(t, err)
	require.Contains(t, string(out), "decoy on fd")
	st, err := os.Stat(decoy)
	require.NoError(t, err)
	require.Zero(t, st.Size(), "the recorder wrote into the app's file")
	procs := readAll(t, dir)
	pr := procs[int32(cmd.Process.Pid)]
	require.NotNil(t, pr)
	for f := uint32(0); f < threads; f++ {
		require.Equal(t, uint64(records), pr.perFunc[f])
	}
	require.Zero(t, pr.info.Dropped)
}

// A process that records a lot gets the recorder's pre-faulting thread
// (started from a traced API call's entry, rpg_api_begin here). Nothing may
// change for the records: every thread's sequence complete after a normal
// end, _exit, fork children and SIGKILL, with the helper running.
func TestRecorderPrefaultHelper(t *testing.T) {
	const threads, records = 4, 70000 // ~9 MiB: three segments
	helperCmd := func(t *testing.T, dir, mode string, n int) *exec.Cmd {
		cmd := driverCmd(t, dir, mode, strconv.Itoa(n), strconv.Itoa(records))
		cmd.Env = append(cmd.Env, "DRIVER_HELPER=1")
		return cmd
	}
	check := func(t *testing.T, pr *procRead, n int, exact bool) {
		t.Helper()
		require.NotNil(t, pr)
		for f := uint32(0); f < uint32(n); f++ {
			if exact {
				require.Equal(t, uint64(records), pr.perFunc[f], "thread %d", f)
			} else {
				require.GreaterOrEqual(t, pr.perFunc[f], uint64(records), "thread %d", f)
			}
		}
		require.Zero(t, pr.stats.Invalid)
		require.Zero(t, pr.info.Dropped)
	}
	for _, mode := range []string{"return", "exit"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			cmd := helperCmd(t, dir, mode, threads)
			out, _ := cmd.Output()
			require.Contains(t, string(out), "helper running")
			procs := readAll(t, dir)
			pr := procs[int32(cmd.Process.Pid)]
			check(t, pr, threads, true)
			require.Zero(t, pr.stats.Torn)
			require.Equal(t, fixtureKinds, pr.fixture)
		})
	}
	t.Run("fork", func(t *testing.T) {
		dir := t.TempDir()
		cmd := helperCmd(t, dir, "fork", 2)
		out, err := cmd.Output()
		require.NoError(t, err)
		require.Contains(t, string(out), "helper running")
		procs := readAll(t, dir)
		require.Len(t, procs, 3)
		for pid, pr := range procs {
			if pid == int32(cmd.Process.Pid) {
				check(t, pr, 2, true)
				continue
			}
			require.Empty(t, pr.fixture, "a child must not see its parent's records")
			require.Len(t, pr.perFunc, 1)
			for _, n := range pr.perFunc {
				require.Equal(t, uint64(records), n)
			}
		}
	})
	t.Run("signal handlers", func(t *testing.T) {
		dir := t.TempDir()
		cmd := helperCmd(t, dir, "signal", 2)
		out, err := cmd.Output()
		require.NoError(t, err)
		n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(string(out), "signals ")))
		require.NoError(t, err)
		pr := readAll(t, dir)[int32(cmd.Process.Pid)]
		require.NotNil(t, pr)
		for f := uint32(0); f < 2; f++ {
			require.Equal(t, uint64(records), pr.perFunc[f])
		}
		require.Equal(t, uint64(n+1), pr.stats.Count(tracing.KindMarker)+pr.info.Dropped)
		require.LessOrEqual(t, pr.info.Dropped, uint64(2))
		require.Zero(t, pr.stats.Torn)
	})
	t.Run("closed descriptor", func(t *testing.T) {
		dir := t.TempDir()
		decoy := filepath.Join(t.TempDir(), "app-file")
		cmd := helperCmd(t, dir, "decoy", threads)
		cmd.Env = append(cmd.Env, "DECOY="+decoy)
		out, err := cmd.Output()
		require.NoError(t, err)
		require.Contains(t, string(out), "decoy on fd")
		st, err := os.Stat(decoy)
		require.NoError(t, err)
		require.Zero(t, st.Size(), "the recorder wrote into the app's file")
		check(t, readAll(t, dir)[int32(cmd.Process.Pid)], threads, true)
	})
	t.Run("SIGKILL", func(t *testing.T) {
		dir := t.TempDir()
		cmd := helperCmd(t, dir, "kill", 3)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		line, err := bufio.NewReader(stdout).ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "ready\n", line)
		time.Sleep(20 * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()
		procs := readAll(t, dir) // every thread's records gap-free
		pr := procs[int32(cmd.Process.Pid)]
		check(t, pr, 3, false)
		require.LessOrEqual(t, pr.stats.Torn, uint64(3))
	})
}

// openOnlySpool opens the one spool a single-process run left in dir; it is
// closed when the test ends.
func openOnlySpool(t *testing.T, dir string) *tracing.Reader {
	t.Helper()
	paths, err := tracing.List(dir)
	require.NoError(t, err)
	require.Len(t, paths, 1)
	r, err := tracing.Open(paths[0])
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r
}

// A message longer than the largest record is stored cut and counted in
// the spool's header, the process's first record too (issue 31: it was
// not counted, the spool did not exist yet when it was cut).
func TestRecorderCountsTruncatedFirstRecord(t *testing.T) {
	dir := t.TempDir()
	cmd := driverCmd(t, dir, "truncate", "0", "0")
	cmd.Env = append(cmd.Env, "ROCPROF_MARKER_API_TRACE=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	paths, err := tracing.List(dir)
	require.NoError(t, err)
	require.Len(t, paths, 1)
	r, err := tracing.Open(paths[0])
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, uint64(2), r.Process().TruncatedRecords)
	marks := 0
	for r.Next() {
		if r.Kind() == tracing.KindMarker {
			m := r.Marker()
			require.Less(t, len(m.Message), 100000)
			require.Greater(t, len(m.Message), 60000)
			marks++
		}
	}
	require.Equal(t, 2, marks)
}
