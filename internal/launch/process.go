package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"
)

// Exit statuses rocprof-go uses besides the app's own.
const (
	ExitTimeout  = 124 // the app ran past --timeout, as timeout(1)
	ExitNotFound = 127 // the application could not be found, as a shell
)

// forwardedSignals reach the app when rocprof-go receives them.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// killGrace is how long an app gets between SIGTERM and SIGKILL on timeout.
const killGrace = 5 * time.Second

// Stdio is the app's standard streams; nil ones are inherited from rocprof-go.
type Stdio struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Dir is the app's working directory ("" = rocprof-go's).
	Dir string
}

// ProcessResult is how one run of the application ended.
type ProcessResult struct {
	Pid        int // the app's process id
	Start      time.Time
	ExitStatus int // the app's exit code, 128+N if signal N killed it, 124 on timeout
	Signal     syscall.Signal
	// Forwarded is the last signal rocprof-go received and passed on to
	// the app (0: none): a launcher tearing the job down, when SIGTERM.
	Forwarded syscall.Signal
	TimedOut  bool
	Duration  time.Duration
}

// becomeSubreaper makes orphaned descendants of the app our children, so that
// we can wait for every process that may still write a spool.
func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// runProcessTree starts argv with env, forwards signals, enforces the
// timeout, waits for the app and then for every descendant it left behind.
func runProcessTree(ctx context.Context, argv, env []string, stdio Stdio, timeout time.Duration, log zerolog.Logger, guard *OutputGuard) (*ProcessResult, error) {
	path, err := lookPath(argv[0], stdio.Dir, env)
	if err != nil {
		return nil, &AppNotFoundError{App: argv[0], Err: err}
	}
	if isStaticELF(path) {
		log.Warn().Str("app", path).Msg("the app is a statically linked executable: it ignores LD_PRELOAD and cannot load the HSA runtime's tools, so nothing is recorded (build it dynamically linked, e.g. with cgo for Go programs)")
	}
	if err := becomeSubreaper(); err != nil {
		log.Warn().Err(err).Msg("cannot become a subreaper: processes orphaned by the app may be missed")
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Env: env, Stdin: stdio.Stdin, Stdout: stdio.Stdout, Stderr: stdio.Stderr}
	cmd.Dir = stdio.Dir
	// If rocprof-go dies (SIGKILL, an OOM kill, SIGQUIT), the app must not
	// run on unobserved, filling a spool nobody converts: the kernel kills
	// it. (Pdeathsig follows the thread that forked; Go only ends threads
	// of goroutines that locked one, which this one has not.)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if cmd.Stdin == nil {
		cmd.Stdin = os.Stdin
	}
	if cmd.Stdout == nil {
		cmd.Stdout = os.Stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}

	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwardedSignals...)
	defer signal.Stop(sigs)

	// What rocprof-go's children are before the app starts (a shell's
	// process substitution, `rocprof-go ... > >(tee log)`, makes tee one)
	// are not the app's: never waited for, never signalled.
	tree := newAppTree(env)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, startError(argv[0], path, err)
	}
	tree.app = cmd.Process.Pid
	guard.setApp(cmd.Process.Pid)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	res := &ProcessResult{Pid: cmd.Process.Pid, Start: start}

	var timer <-chan time.Time
	var deadline time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
		deadline = start.Add(timeout)
	}
	var killTimer <-chan time.Time
	var waitErr error
loop:
	for {
		select {
		case waitErr = <-done:
			break loop
		case s := <-sigs:
			if fg, ok := terminalDelivered(s); ok {
				// The terminal sent it to its foreground process group:
				// the app's processes still in it have it; those that
				// left it (setsid, setpgid) get it from us.
				tree.signalOutside(fg, s.(syscall.Signal), log)
				continue
			}
			log.Debug().Str("signal", s.String()).Msg("forwarding signal to the app")
			res.Forwarded = s.(syscall.Signal)
			_ = cmd.Process.Signal(s)
		case <-timer:
			res.TimedOut = true
			log.Warn().Str("timeout", timeout.String()).Str("running", describe(tree.members())).
				Msg("the app ran past --timeout: sending SIGTERM to it and every process it started")
			tree.kill(syscall.SIGTERM)
			k := time.NewTimer(killGrace)
			defer k.Stop()
			killTimer = k.C
		case <-killTimer:
			log.Warn().Msg("the app ignored SIGTERM: sending SIGKILL")
			_ = cmd.Process.Kill()
			tree.kill(syscall.SIGKILL)
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
			ctx = context.Background()
			k := time.NewTimer(killGrace)
			defer k.Stop()
			killTimer = k.C
		}
	}
	res.Duration = time.Since(start)
	res.ExitStatus, res.Signal = exitStatus(cmd.ProcessState, waitErr)
	if res.TimedOut {
		res.ExitStatus = ExitTimeout
		tree.kill(syscall.SIGKILL)
	}
	if tree.waitDescendants(log, sigs, deadline) {
		res.TimedOut = true
		res.ExitStatus = ExitTimeout
	}
	return res, nil
}

// AppNotFoundError is returned when the application cannot be executed.
type AppNotFoundError struct {
	App string
	Err error
}

func (e *AppNotFoundError) Error() string {
	if errors.Is(e.Err, exec.ErrNotFound) {
		return fmt.Sprintf("application %q not found: check the name, or give its path (e.g. ./%s)", e.App, e.App)
	}
	return fmt.Sprintf("application %q cannot be run: %v", e.App, e.Err)
}

func (e *AppNotFoundError) Unwrap() error { return e.Err }

func exitStatus(ps *os.ProcessState, err error) (int, syscall.Signal) {
	if ps == nil {
		return 1, 0
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), ws.Signal()
	}
	return ps.ExitCode(), 0
}

// terminalDelivered reports whether a SIGINT most likely came from the
// terminal, which delivers it to the whole foreground process group (fg),
// rocprof-go's: the app's processes still in that group got it too, and
// forwarding it to them would deliver it twice.
func terminalDelivered(s os.Signal) (fg int, ok bool) {
	if s != syscall.SIGINT {
		return 0, false
	}
	fg, err := unix.IoctlGetInt(int(os.Stdin.Fd()), unix.TIOCGPGRP)
	return fg, err == nil && fg == unix.Getpgrp()
}

// signalOutside sends sig to the processes of the app's tree that are not
// in process group fg: those that left rocprof-go's group (setsid, setpgid:
// a launcher that daemonises, a job-control shell), which the terminal's
// Ctrl-C does not reach. Ctrl-C then stops the app as it would have without
// rocprof-go, where the app was the terminal's foreground.
func (t *appTree) signalOutside(fg int, sig syscall.Signal, log zerolog.Logger) {
	for _, p := range t.members() {
		if pg, err := unix.Getpgid(p.pid); err == nil && pg != fg {
			log.Debug().Int("pid", p.pid).Str("signal", sig.String()).Msg("forwarding the terminal's signal to a process that left rocprof-go's process group")
			_ = unix.Kill(p.pid, sig)
		}
	}
}

// appTree tells the app's processes from the other children rocprof-go
// has: the processes it is subreaper for are the app and the orphans the
// app's processes leave, never the children it had before the app started
// (its own parent made them: a shell's process substitution,
// `rocprof-go ... > >(tee log)`, forks tee as a child of what becomes
// rocprof-go, and tee waits for the end of a pipe rocprof-go holds) nor the
// orphans those leave. An orphan is the app's when the environment it
// started with holds the pass's spool directory, as every process of the
// app's tree inherits it (a process started without it records nothing,
// so nothing is lost without waiting for it).
type appTree struct {
	self      int
	app       int
	inherited map[int]uint64 // pid → start time
	marker    string         // SpoolDirEnv=dir, "" when the app has none
}

func newAppTree(env []string) *appTree {
	t := &appTree{self: os.Getpid(), inherited: map[int]uint64{}}
	for _, p := range scanProcs() {
		if p.ppid == t.self {
			t.inherited[p.pid] = p.start
		}
	}
	if dir := envLookup(env, SpoolDirEnv); dir != "" {
		t.marker = SpoolDirEnv + "=" + dir
	}
	return t
}

// ours reports whether a child of rocprof-go belongs to the app's tree.
func (t *appTree) ours(p procEntry) bool {
	if p.pid == t.app {
		return true
	}
	if start, ok := t.inherited[p.pid]; ok && start == p.start {
		return false
	}
	if t.marker == "" {
		return true
	}
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/environ")
	if err != nil || len(environ) == 0 {
		return true // unreadable (another user's, or a zombie): wait, as before
	}
	for _, kv := range bytes.Split(environ, []byte{0}) {
		if string(kv) == t.marker {
			return true
		}
	}
	return false
}

// children are rocprof-go's children that belong to the app's tree.
func (t *appTree) children(all []procEntry) []procEntry {
	var out []procEntry
	for _, p := range all {
		if p.ppid == t.self && t.ours(p) {
			out = append(out, p)
		}
	}
	return out
}

// members lists every process of the app's tree, parents before children,
// from one scan of /proc: rocprof-go's children that are the app's, and all
// their descendants.
func (t *appTree) members() []procEntry {
	all := scanProcs()
	byParent := map[int][]procEntry{}
	for _, p := range all {
		byParent[p.ppid] = append(byParent[p.ppid], p)
	}
	out := t.children(all)
	for i := 0; i < len(out); i++ {
		out = append(out, byParent[out[i].pid]...)
	}
	return out
}

// kill sends sig to every process of the app's tree, not only the
// children: a grandchild whose parent is still alive is not ours to reap
// yet, but it is part of the run.
func (t *appTree) kill(sig syscall.Signal) {
	for _, p := range t.members() {
		_ = unix.Kill(p.pid, sig)
	}
}

// waitDescendants reaps every orphaned descendant of the app (rocprof-go is
// their subreaper) until none is left, forwarding signals to them
// meanwhile. Each is reaped by its pid: a child of rocprof-go that is not
// the app's is neither waited for nor reaped. With a deadline (--timeout),
// the run ends there too: descendants still running then get SIGTERM, are
// named, and get SIGKILL after the grace period; it reports whether that
// happened.
func (t *appTree) waitDescendants(log zerolog.Logger, sigs <-chan os.Signal, deadline time.Time) (timedOut bool) {
	warned := time.Now().Add(2 * time.Second)
	var kill time.Time
	for {
		kids := t.children(scanProcs())
		if len(kids) == 0 {
			return timedOut
		}
		reaped := false
		for _, k := range kids {
			var ws unix.WaitStatus
			if pid, _ := unix.Wait4(k.pid, &ws, unix.WNOHANG, nil); pid > 0 {
				reaped = true
			}
		}
		if reaped {
			continue
		}
		now := time.Now()
		switch {
		case !deadline.IsZero() && !timedOut && now.After(deadline):
			timedOut = true
			log.Warn().Str("running", describe(t.members())).
				Msg("--timeout reached while processes the app started were still running: sending them SIGTERM")
			t.kill(syscall.SIGTERM)
			kill = now.Add(killGrace)
		case timedOut && now.After(kill):
			t.kill(syscall.SIGKILL)
			kill = now.Add(time.Second)
		}
		select {
		case s := <-sigs:
			if fg, ok := terminalDelivered(s); ok {
				t.signalOutside(fg, s.(syscall.Signal), log)
			} else {
				for _, k := range kids {
					_ = unix.Kill(k.pid, s.(syscall.Signal))
				}
			}
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(warned) {
			log.Info().Msg("the app has exited; waiting for the processes it started to finish")
			warned = time.Now().Add(time.Hour)
		}
	}
}

type procEntry struct {
	pid, ppid int
	comm      string
	start     uint64 // clock ticks after boot: tells a reused pid apart
}

// treeOf lists every descendant of root, parents before children, from one
// scan of /proc (the tests' check that nothing of a run is left).
func treeOf(root int) []procEntry {
	all := scanProcs()
	byParent := map[int][]procEntry{}
	for _, p := range all {
		byParent[p.ppid] = append(byParent[p.ppid], p)
	}
	var out []procEntry
	queue := []int{root}
	for len(queue) > 0 {
		for _, c := range byParent[queue[0]] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
		queue = queue[1:]
	}
	return out
}

func describe(ps []procEntry) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("pid %d (%s)", p.pid, p.comm)
	}
	return strings.Join(parts, ", ")
}

// scanProcs reads every process's pid, parent and command name from /proc.
func scanProcs() []procEntry {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []procEntry
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name may hold spaces and parentheses: fields start after the last ')'.
		i := bytes.LastIndexByte(stat, ')')
		j := bytes.IndexByte(stat, '(')
		if i < 0 || j < 0 || j > i {
			continue
		}
		// After it: state, ppid, ... starttime (the 22nd field of the line).
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) > 19 {
			if p, err := strconv.Atoi(fields[1]); err == nil {
				start, _ := strconv.ParseUint(fields[19], 10, 64)
				out = append(out, procEntry{pid: pid, ppid: p, comm: string(stat[j+1 : i]), start: start})
			}
		}
	}
	return out
}

func lookPath(name, dir string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if dir != "" && !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs // exec would resolve a relative path against Dir again
		}
		st, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s is not an executable file", p)
		}
		return p, nil
	}
	pathEnv := os.Getenv("PATH")
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}
