package attach

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The fake agent: this test binary run as a process that plays the
// preload library's side of the protocol (no HIP, no ptrace). It is the
// "target": the fake injector hands it the configuration's path on its
// stdin, as rpg_attach_start would get it, and it behaves as its mode
// says.
const agentModeEnv = "ROCPROF_GO_TEST_FAKE_AGENT"

// agentOutEnv names a directory where the fake agent leaves what it saw
// (the configuration it read, "eof" when the CLI went away).
const agentOutEnv = "ROCPROF_GO_TEST_FAKE_AGENT_OUT"

func TestMain(m *testing.M) {
	if mode := os.Getenv(agentModeEnv); mode != "" {
		fakeAgent(mode, os.Getenv(agentOutEnv))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func fakeAgent(mode, out string) {
	note := func(name, text string) {
		if out != "" {
			_ = os.WriteFile(filepath.Join(out, fmt.Sprintf("%s.%d", name, os.Getpid())), []byte(text), 0o600)
		}
	}
	if mode == "loadlater" {
		// Maps a file named like the HSA runtime after a while, as a
		// server that loads HIP late would.
		go func() {
			time.Sleep(300 * time.Millisecond)
			p := filepath.Join(out, "libhsa-runtime64.so.1")
			_ = os.WriteFile(p, make([]byte, 4096), 0o600)
			f, err := os.Open(p)
			if err != nil {
				return
			}
			_, _ = unix.Mmap(int(f.Fd()), 0, 4096, unix.PROT_READ, unix.MAP_PRIVATE)
		}()
		mode = "ok"
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		conf := in.Text()
		data, err := os.ReadFile(conf)
		if err != nil {
			note("conferr", err.Error())
			continue
		}
		note("conf", string(data))
		sock := ""
		for _, l := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(l, SocketEnv+"="); ok {
				sock = v
			}
		}
		if mode == "silent" {
			continue
		}
		c, err := net.Dial("unix", sock)
		if err != nil {
			note("dialerr", err.Error())
			continue
		}
		pid := os.Getpid()
		if mode == "error" {
			fmt.Fprintf(c, "error the GOT of libamdhip64.so.6 could not be read\n")
			c.Close()
			continue
		}
		if mode == "liar" {
			fmt.Fprintf(c, "ready %d\n", pid+1) // not its own pid
			time.Sleep(100 * time.Millisecond)
			c.Close()
			continue
		}
		fmt.Fprintf(c, "ready %d\n", pid)
		if mode == "exit" {
			time.Sleep(200 * time.Millisecond)
			os.Exit(0)
		}
		r := bufio.NewReader(c)
		line, err := r.ReadString('\n')
		if err != nil {
			note("eof", "eof")
			continue
		}
		note("got", line)
		switch mode {
		case "noreply":
			_, err := r.ReadString('\n')
			if err != nil {
				note("eof", "eof")
			}
		case "lost":
			fmt.Fprintf(c, "dispatches %d lost=3 in_flight_at_attach=4 running_at_detach=1 missed=2 past=1\ndetached %d 12 3\n", pid, pid)
			c.Close()
		default:
			fmt.Fprintf(c, "detached %d 12 0\n", pid)
			c.Close()
		}
	}
}

// fakeTarget is one fake agent process.
type fakeTarget struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	pid   int
}

func startAgent(t *testing.T, mode, out string) *fakeTarget {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), agentModeEnv+"="+mode, agentOutEnv+"="+out)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	ft := &fakeTarget{cmd: cmd, stdin: stdin, pid: cmd.Process.Pid}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return ft
}

// fakeInjector plays internal/inject for fake agents: Inject hands the
// agent the configuration's path.
type fakeInjector struct {
	mu       sync.Mutex
	targets  map[int]*fakeTarget
	refuse   map[int]error
	ret      int
	kids     func() []int
	injected []int
	args     []string
	delay    time.Duration // how long an injection takes
}

func (f *fakeInjector) Preflight(pid int, lib string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.refuse[pid]; err != nil {
		return err
	}
	if f.targets[pid] == nil {
		return fmt.Errorf("no fake process %d", pid)
	}
	return nil
}

func (f *fakeInjector) Inject(ctx context.Context, pid int, lib, sym, arg string) (int, error) {
	time.Sleep(f.delay)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.injected = append(f.injected, pid)
	f.args = append(f.args, sym+"("+arg+")")
	if f.ret != 0 {
		return f.ret, nil
	}
	_, err := fmt.Fprintln(f.targets[pid].stdin, arg)
	return 0, err
}

func (f *fakeInjector) Descendants(pid int) ([]int, error) {
	if f.kids == nil {
		return nil, nil
	}
	return f.kids(), nil
}

type fixture struct {
	dir, out string
	inj      *fakeInjector
	progress *bytes.Buffer
	mu       sync.Mutex
}

func newFixture(t *testing.T) *fixture {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o700))
	return &fixture{dir: dir, out: t.TempDir(), inj: &fakeInjector{targets: map[int]*fakeTarget{}, refuse: map[int]error{}},
		progress: &bytes.Buffer{}}
}

func (f *fixture) agent(t *testing.T, mode string) *fakeTarget {
	ft := startAgent(t, mode, f.out)
	f.inj.mu.Lock()
	f.inj.targets[ft.pid] = ft
	f.inj.mu.Unlock()
	return ft
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (f *fixture) options(pid int) Options {
	return Options{PID: pid, Lib: "/nonexistent/librocprof-go-preload.so", Dir: f.dir,
		Env:      map[string]string{"ROCPROF_GO_SPOOL_DIR": "/spools", "ROCPROF_KERNEL_TRACE": "1"},
		Progress: lockedWriter{&f.mu, f.progress}, Injector: f.inj, Signals: []os.Signal{syscall.SIGUSR2},
		ReadyTimeout: 3 * time.Second, DetachTimeout: 2 * time.Second, Poll: 20 * time.Millisecond,
		RuntimeLoaded: func(int) bool { return true }}
}

func (f *fixture) said() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.progress.String()
}

func (f *fixture) agentFile(t *testing.T, name string, pid int) string {
	b, err := os.ReadFile(filepath.Join(f.out, fmt.Sprintf("%s.%d", name, pid)))
	if err != nil {
		return ""
	}
	return string(b)
}

// An attach for a duration: the agent reads the configuration (the
// contract's variables and the socket), reports ready, gets "detach" when
// the duration ends and reports its restored slots; the configuration and
// the socket are gone afterwards.
func TestAttachForADuration(t *testing.T) {
	f := newFixture(t)
	a := f.agent(t, "ok")
	o := f.options(a.pid)
	o.Duration = 300 * time.Millisecond
	begin := time.Now()
	rep, err := Run(context.Background(), o)
	require.NoError(t, err, f.said())
	require.GreaterOrEqual(t, time.Since(begin), 300*time.Millisecond)
	require.GreaterOrEqual(t, rep.WindowEnd.Sub(rep.WindowStart), 300*time.Millisecond, "the window is the whole duration")
	require.Equal(t, a.pid, rep.Target)
	require.Equal(t, []int{a.pid}, rep.PIDs)
	require.Equal(t, "duration", rep.DetachedOn)
	require.Len(t, rep.Processes, 1)
	p := rep.Processes[0]
	require.Equal(t, 12, p.SlotsRestored)
	require.Zero(t, p.DispatchesLost)
	require.True(t, p.Unloaded)
	require.False(t, p.Exited)
	require.Positive(t, p.AttachMs)
	require.Positive(t, p.DetachMs)
	require.False(t, rep.WindowStart.IsZero())
	require.True(t, rep.WindowEnd.After(rep.WindowStart))
	require.Equal(t, "detach\n", f.agentFile(t, "got", a.pid))
	conf := f.agentFile(t, "conf", a.pid)
	require.Contains(t, conf, "ROCPROF_GO_SPOOL_DIR=/spools\n")
	require.Contains(t, conf, "ROCPROF_KERNEL_TRACE=1\n")
	require.Contains(t, conf, SocketEnv+"="+filepath.Join(f.dir, socketName)+"\n")
	require.Equal(t, []string{StartSymbol + "(" + filepath.Join(f.dir, confName) + ")"}, f.inj.args)
	names, _ := os.ReadDir(f.dir)
	require.Empty(t, names, "the configuration and the socket are removed")
	require.Contains(t, f.said(), fmt.Sprintf("attached to PID %d", a.pid))
	require.True(t, alive(a.pid), "the target keeps running")
}

// An injection that takes longer than the duration (a busy process's
// threads reach a safe point late) still gets the whole window.
func TestAttachWindowIsTheDurationAfterASlowAttach(t *testing.T) {
	f := newFixture(t)
	a := f.agent(t, "ok")
	f.inj.delay = 500 * time.Millisecond
	o := f.options(a.pid)
	o.Duration = 300 * time.Millisecond
	rep, err := Run(context.Background(), o)
	require.NoError(t, err)
	require.GreaterOrEqual(t, rep.WindowEnd.Sub(rep.WindowStart), 300*time.Millisecond)
	require.GreaterOrEqual(t, rep.Processes[0].AttachMs, 500.0)
}

// The configuration file and the socket are this user's alone while the
// attach runs.
func TestAttachFilesArePrivate(t *testing.T) {
	f := newFixture(t)
	a := f.agent(t, "ok")
	o := f.options(a.pid)
	stop := make(chan struct{})
	o.Stop = stop
	done := make(chan error, 1)
	go func() { _, err := Run(context.Background(), o); done <- err }()
	require.Eventually(t, func() bool { return f.agentFile(t, "conf", a.pid) != "" }, 5*time.Second, 10*time.Millisecond)
	for _, n := range []string{confName, socketName} {
		st, err := os.Lstat(filepath.Join(f.dir, n))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), n)
	}
	close(stop)
	require.NoError(t, <-done)
}

// SIGINT/SIGTERM (here the fixture's SIGUSR2) detach instead of ending the
// CLI; Enter on the terminal too.
func TestAttachDetachesOnASignalAndOnEnter(t *testing.T) {
	f := newFixture(t)
	a := f.agent(t, "ok")
	o := f.options(a.pid)
	go func() {
		require.Eventually(t, func() bool { return strings.Contains(f.said(), "attached to PID") }, 5*time.Second, 5*time.Millisecond)
		_ = unix.Kill(os.Getpid(), syscall.SIGUSR2)
	}()
	rep, err := Run(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, "signal SIGUSR2", rep.DetachedOn)
	require.Equal(t, 12, rep.Processes[0].SlotsRestored)

	f = newFixture(t)
	a = f.agent(t, "ok")
	o = f.options(a.pid)
	pr, pw := io.Pipe()
	o.Enter = pr
	go func() {
		require.Eventually(t, func() bool { return strings.Contains(f.said(), "press Enter") }, 5*time.Second, 5*time.Millisecond)
		_, _ = pw.Write([]byte("\n"))
	}()
	rep, err = Run(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, "enter", rep.DetachedOn)
	require.True(t, rep.Processes[0].Unloaded)

	// The end of the terminal's input (Ctrl-D, a hang-up) detaches too.
	f = newFixture(t)
	a = f.agent(t, "ok")
	o = f.options(a.pid)
	pr, pw = io.Pipe()
	o.Enter = pr
	go func() {
		require.Eventually(t, func() bool { return strings.Contains(f.said(), "press Enter") }, 5*time.Second, 5*time.Millisecond)
		pw.Close()
	}()
	rep, err = Run(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, "end of input", rep.DetachedOn)
}

// The agent's "error <text>" is the attach's one-line error; no process is
// left attached.
func TestAttachAgentError(t *testing.T) {
	f := newFixture(t)
	a := f.agent(t, "error")
	_, err := Run(context.Background(), f.options(a.pid))
	require.EqualError(t, err, fmt.Sprintf("cannot attach to PID %d: the GOT of libamdhip64.so.6 could not be read", a.pid))
}

// rpg_attach_start's -EALREADY: already profiled.
func TestAttachAlreadyProfiled(t *testing.T) {
	f := newFixture(t)
	a := f.agent(t, "ok")
	f.inj.ret = -int(syscall.EALREADY)
	_, err := Run(context.Background(), f.options(a.pid))
	var ae *AlreadyProfiledError
	require.ErrorAs(t, err, &ae)
	require.Contains(t, err.Error(), "already profiled (started under rocprof-go, or attached by another rocprof-go)")
}

// rpg_attach_start's -EBUSY: the library of an earlier attach is still
// there, inert.
func TestAttachLibraryStillInert(t *testing.T) {
	f := newFixture(t)
	a := f.agent(t, "ok")
	f.inj.ret = -int(syscall.EBUSY)
	_, err := Run(context.Background(), f.options(a.pid))
	require.ErrorContains(t, err, "still holds rocprof-go's library from an earlier attach")
}

// An agent that never reports: bounded by ReadyTimeout, with the cause.
func TestAttachReadyTimeout(t *testing.T) {
	f := newFixture(t)
	a := f.agent(t, "silent")
	o := f.options(a.pid)
	o.ReadyTimeout = 300 * time.Millisecond
	begin := time.Now()
	_, err := Run(context.Background(), o)
	require.ErrorContains(t, err, "did not report ready within 300ms")
	require.Less(t, time.Since(begin), 3*time.Second)
}

// A "ready" from a process that is not the one it names is not taken.
func TestAttachRefusesAReadyForAnotherPID(t *testing.T) {
	f := newFixture(t)
	a := f.agent(t, "liar")
	o := f.options(a.pid)
	o.ReadyTimeout = 400 * time.Millisecond
	_, err := Run(context.Background(), o)
	require.ErrorContains(t, err, "did not report ready")
}

// The preflight's refusal is the error, and nothing was injected.
func TestAttachPreflightRefusal(t *testing.T) {
	f := newFixture(t)
	a := f.agent(t, "ok")
	f.inj.refuse[a.pid] = errors.New("cannot attach to PID 1: ptrace is not permitted by Yama (kernel.yama.ptrace_scope=3); a reboot is needed")
	_, err := Run(context.Background(), f.options(a.pid))
	require.ErrorContains(t, err, "Yama")
	require.Empty(t, f.inj.injected)
	// Said before waiting for a runtime the process has not loaded: a
	// static program is refused at once, in one line.
	o := f.options(a.pid)
	o.RuntimeLoaded = nil
	o.Duration = 5 * time.Second
	begin := time.Now()
	_, err = Run(context.Background(), o)
	require.ErrorContains(t, err, "Yama")
	require.Less(t, time.Since(begin), 2*time.Second)
	require.Empty(t, f.said())
}

// A target that exits while attached ends the attach ("exited"), fine.
func TestAttachTargetExits(t *testing.T) {
	f := newFixture(t)
	a := f.agent(t, "exit") // a zombie until the cleanup reaps it: gone all the same
	o := f.options(a.pid)
	o.Duration = 10 * time.Second
	begin := time.Now()
	rep, err := Run(context.Background(), o)
	require.NoError(t, err)
	require.Less(t, time.Since(begin), 5*time.Second)
	require.Equal(t, "exited", rep.DetachedOn)
	require.True(t, rep.Processes[0].Exited)
	require.True(t, rep.Processes[0].Unloaded)
}

// An agent that never answers "detach": bounded, said, and the connection
// closed, which it sees as EOF (the CLI gone: it detaches by itself).
func TestAttachDetachTimeoutClosesTheConnection(t *testing.T) {
	f := newFixture(t)
	a := f.agent(t, "noreply")
	o := f.options(a.pid)
	o.Duration = 100 * time.Millisecond
	o.DetachTimeout = 300 * time.Millisecond
	rep, err := Run(context.Background(), o)
	require.NoError(t, err)
	require.Contains(t, rep.Processes[0].Problem, `no "detached" within 300ms`)
	require.Contains(t, f.said(), `no "detached" within 300ms`)
	require.Eventually(t, func() bool { return f.agentFile(t, "eof", a.pid) != "" }, 5*time.Second, 10*time.Millisecond)
}

// The agent's account of the kernel dispatches ("dispatches <pid> ..."
// before "detached"): those of the window it could not time are counted by
// class in the report, and LostError names them (the pipeline fails the
// run with it); those at the window's edges (in flight at the attach,
// still running at the detach) are reported and said in a note, not lost.
func TestAttachLostDispatchesAreSaid(t *testing.T) {
	f := newFixture(t)
	a := f.agent(t, "lost")
	o := f.options(a.pid)
	o.Duration = 100 * time.Millisecond
	rep, err := Run(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, uint64(3), rep.DispatchesLost())
	p := rep.Processes[0]
	require.Equal(t, map[string]uint64{"missed": 2, "past": 1}, p.DispatchesLostWhy)
	require.Equal(t, uint64(4), p.InFlightAtAttach)
	require.Equal(t, uint64(1), p.RunningAtDetach)
	require.Contains(t, f.said(), "note: at the window's edges 4 kernel dispatches were in flight when the attach began (submitted before the profiler saw their queue) and 1 still running when the detach ended its wait: outside the window, not recorded")
	require.NotContains(t, f.said(), "warning")
	require.EqualError(t, rep.LostError(), fmt.Sprintf("3 kernel dispatches submitted while attached could not be timed (PID %d: "+
		"2 run by the device without the profiler's completion signal, 1 past the device before their doorbell was rung (another producer rang past them)): "+
		"no record was made up for them; run.json counts them in attach.processes[].dispatches_lost and dispatches_lost_why", a.pid))
	require.NoError(t, (&Report{Processes: []Process{{PID: 1, InFlightAtAttach: 2}}}).LostError(), "the edges are no loss")
	require.NoError(t, (*Report)(nil).LostError())
}

// Descendants: those running at the attach and one started while
// attached are attached, each reported; one the preflight refuses is
// skipped with a note, not an error.
func TestAttachChildren(t *testing.T) {
	f := newFixture(t)
	target := f.agent(t, "ok")
	k1 := f.agent(t, "ok")
	k2 := f.agent(t, "ok")
	static := f.agent(t, "ok")
	f.inj.refuse[static.pid] = fmt.Errorf("cannot attach to PID %d: it is statically linked", static.pid)
	var mu sync.Mutex
	kids := []int{k1.pid, static.pid}
	f.inj.kids = func() []int { mu.Lock(); defer mu.Unlock(); return append([]int(nil), kids...) }
	o := f.options(target.pid)
	o.Children = true
	stop := make(chan struct{})
	o.Stop = stop
	go func() {
		require.Eventually(t, func() bool { return strings.Contains(f.said(), "and 1 descendants") }, 5*time.Second, 5*time.Millisecond)
		mu.Lock()
		kids = append(kids, k2.pid) // started while attached
		mu.Unlock()
		require.Eventually(t, func() bool { return f.agentFile(t, "conf", k2.pid) != "" }, 5*time.Second, 5*time.Millisecond)
		time.Sleep(50 * time.Millisecond)
		close(stop)
	}()
	rep, err := Run(context.Background(), o)
	require.NoError(t, err, f.said())
	require.Equal(t, []int{target.pid, k1.pid, k2.pid}, rep.PIDs)
	require.Len(t, rep.Processes, 3)
	for _, p := range rep.Processes {
		require.Equal(t, 12, p.SlotsRestored, p.PID)
		require.Equal(t, "detach\n", f.agentFile(t, "got", p.PID))
	}
	require.Equal(t, []Skipped{{PID: static.pid, Reason: fmt.Sprintf("cannot attach to PID %d: it is statically linked", static.pid)}}, rep.Skipped)
	require.Contains(t, f.said(), fmt.Sprintf("note: descendant PID %d is not profiled", static.pid))
	// Without --attach-children only the target.
	f2 := newFixture(t)
	t2 := f2.agent(t, "ok")
	k3 := f2.agent(t, "ok")
	f2.inj.kids = func() []int { return []int{k3.pid} }
	o = f2.options(t2.pid)
	o.Duration = 100 * time.Millisecond
	rep, err = Run(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, []int{t2.pid}, rep.PIDs)
}

// A target with no HIP or HSA library yet is waited for (said once) and
// attached once it maps one; one that never does fails when the duration
// ends.
func TestAttachWaitsForTheRuntime(t *testing.T) {
	f := newFixture(t)
	a := f.agent(t, "loadlater")
	o := f.options(a.pid)
	o.RuntimeLoaded = nil // /proc/PID/maps
	o.Duration = 3 * time.Second
	stop := make(chan struct{})
	o.Stop = stop
	go func() {
		require.Eventually(t, func() bool { return strings.Contains(f.said(), "attached to PID") }, 5*time.Second, 5*time.Millisecond)
		close(stop)
	}()
	rep, err := Run(context.Background(), o)
	require.NoError(t, err, f.said())
	require.Equal(t, 1, strings.Count(f.said(), "has loaded no HIP or HSA library yet"))
	require.Equal(t, []int{a.pid}, rep.PIDs)

	f = newFixture(t)
	a = f.agent(t, "ok")
	o = f.options(a.pid)
	o.RuntimeLoaded = nil
	o.Duration = 300 * time.Millisecond
	_, err = Run(context.Background(), o)
	var ne *NoRuntimeError
	require.ErrorAs(t, err, &ne)
	require.Contains(t, err.Error(), "the process loaded no HIP or HSA library during the attach")
	require.Empty(t, f.inj.injected)
}

func TestAttachNoSuchProcess(t *testing.T) {
	f := newFixture(t)
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	o := f.options(cmd.Process.Pid)
	o.RuntimeLoaded = nil
	_, err := Run(context.Background(), o)
	require.ErrorContains(t, err, "no such process")
}

func TestEncodeConfRefusesALineBreak(t *testing.T) {
	_, err := EncodeConf(map[string]string{"ROCPROF_X": "a\nb"})
	require.ErrorContains(t, err, "ROCPROF_X")
	b, err := EncodeConf(map[string]string{"B": "2", "A": "1=x"})
	require.NoError(t, err)
	require.Equal(t, "A=1=x\nB=2\n", string(b))
}

func TestParseDetached(t *testing.T) {
	pid, restored, lost, copies, ok := parseDetached("detached 42 118 0")
	require.True(t, ok)
	require.Equal(t, []any{42, 118, uint64(0), uint64(0)}, []any{pid, restored, lost, copies})
	pid, restored, lost, copies, ok = parseDetached("detached 42 118 3 2")
	require.True(t, ok)
	require.Equal(t, []any{42, 118, uint64(3), uint64(2)}, []any{pid, restored, lost, copies})
	for _, l := range []string{"detached 42 118", "detached x 1 2", "ready 42", "detached 42 1 -1", "detached 42 1 0 -1", "detached 42 1 0 0 0"} {
		_, _, _, _, ok := parseDetached(l)
		require.False(t, ok, l)
	}
}
