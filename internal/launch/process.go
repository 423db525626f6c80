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
	TimedOut   bool
	Duration   time.Duration
}

// becomeSubreaper makes orphaned descendants of the app our children, so that
// we can wait for every process that may still write a spool.
func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// runProcessTree starts argv with env, forwards signals, enforces the
// timeout, waits for the app and then for every descendant it left behind.
func runProcessTree(ctx context.Context, argv, env []string, stdio Stdio, timeout time.Duration, log zerolog.Logger) (*ProcessResult, error) {
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

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", argv[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	res := &ProcessResult{Pid: cmd.Process.Pid, Start: start}

	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	var killTimer <-chan time.Time
	var waitErr error
loop:
	for {
		select {
		case waitErr = <-done:
			break loop
		case s := <-sigs:
			if terminalDelivered(s) {
				continue // the terminal already sent it to the app's process group
			}
			log.Debug().Str("signal", s.String()).Msg("forwarding signal to the app")
			_ = cmd.Process.Signal(s)
		case <-timer:
			res.TimedOut = true
			log.Warn().Dur("timeout", timeout).Msg("the app ran past --timeout: sending SIGTERM")
			_ = cmd.Process.Signal(syscall.SIGTERM)
			k := time.NewTimer(killGrace)
			defer k.Stop()
			killTimer = k.C
		case <-killTimer:
			log.Warn().Msg("the app ignored SIGTERM: sending SIGKILL")
			_ = cmd.Process.Kill()
			signalChildren(syscall.SIGKILL)
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
		signalChildren(syscall.SIGKILL)
	}
	waitDescendants(log, sigs)
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
// terminal, which delivers it to the whole foreground process group — the app
// included — so forwarding it again would deliver it twice.
func terminalDelivered(s os.Signal) bool {
	if s != syscall.SIGINT {
		return false
	}
	fg, err := unix.IoctlGetInt(int(os.Stdin.Fd()), unix.TIOCGPGRP)
	return err == nil && fg == unix.Getpgrp()
}

// waitDescendants reaps every orphaned descendant (we are their subreaper)
// until none is left, forwarding signals to them meanwhile.
func waitDescendants(log zerolog.Logger, sigs <-chan os.Signal) {
	warned := time.Now().Add(2 * time.Second)
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		switch {
		case errors.Is(err, unix.ECHILD):
			return
		case err != nil && !errors.Is(err, unix.EINTR):
			return
		case pid > 0:
			continue
		}
		select {
		case s := <-sigs:
			if !terminalDelivered(s) {
				signalChildren(s.(syscall.Signal))
			}
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(warned) {
			log.Info().Msg("the app has exited; waiting for the processes it started to finish")
			warned = time.Now().Add(time.Hour)
		}
	}
}

// signalChildren sends sig to every direct child of this process: the app
// and the orphans we adopted as their subreaper.
func signalChildren(sig syscall.Signal) {
	for _, pid := range childrenOf(os.Getpid()) {
		_ = unix.Kill(pid, sig)
	}
}

// childrenOf lists the processes whose parent is ppid, from /proc.
func childrenOf(ppid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
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
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) > 1 {
			if p, err := strconv.Atoi(fields[1]); err == nil && p == ppid {
				out = append(out, pid)
			}
		}
	}
	return out
}

// lookPath finds the app like execvp would from its working directory and
// PATH (the app's environment, not ours).
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
