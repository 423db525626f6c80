//go:build linux && amd64

package inject

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// perThread bounds how long a thread that is not waiting is followed to a
// waiting system call before the next is tried.
const perThread = 300 * time.Millisecond

// drive runs on its own locked OS thread, which it never unlocks: when the
// goroutine ends the thread ends with it, and the kernel drops whatever
// ptrace link an unforeseen error path could have left.
func drive(ctx context.Context, tg *target, lib, sym, arg string, rep *Report) (int, error) {
	runtime.LockOSThread()
	pid := tg.pid
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(defaultSearch)
	}
	start := time.Now()
	nthreads := 0
	for round := 0; ctx.Err() == nil && time.Now().Before(deadline); round++ {
		tids, waiting, err := candidates(pid)
		if err != nil {
			return 0, exitedError(pid, err)
		}
		nthreads = len(tids)
		for i, tid := range tids {
			if ctx.Err() != nil || time.Now().After(deadline) {
				break
			}
			until := deadline
			if !waiting[i] {
				until = minTime(deadline, time.Now().Add(perThread))
			}
			rep.Tried++
			t, saved, how, err := seize(pid, tid, until)
			if errors.Is(err, errThreadGone) || errors.Is(err, errNoSafePoint) {
				continue
			}
			if err != nil {
				return 0, asError(pid, err)
			}
			rep.TID, rep.How = tid, how
			held := time.Now()
			ret, err := t.run(tg, &saved, lib, sym, arg)
			rep.Held = time.Since(held)
			return ret, err
		}
	}
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return 0, &Error{PID: pid, Cause: "the attach was cancelled before any thread was changed", Fix: "attach again", Err: ctx.Err()}
	}
	return 0, &Error{PID: pid, Cause: fmt.Sprintf("none of its %d threads reached a point where loading a library is safe (a wait in poll, read, sleep...) in %s",
		nthreads, time.Since(start).Round(time.Millisecond)),
		Fix: "attach again while the application waits (between requests, in I/O), or give the attach more time"}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func asError(pid int, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{PID: pid, Cause: "ptrace failed: " + err.Error(), Fix: "attach again; if it persists, report it with the target's /proc/PID/status", Err: err}
}

// phaseHook, when set (by the tests), is called at each step of run: the
// tests kill the injector there.
var phaseHook func(phase string)

func phase(name string) {
	if phaseHook != nil {
		phaseHook(name)
	}
}

// leaveWait bounds the wait for the thread to be seen out of the
// trampoline once its results are read.
const leaveWait = 5 * time.Second

// watchPoll is how often the frame's state is read while the thread runs
// the calls (between the stops the tracer is woken for).
const watchPoll = 500 * time.Microsecond

// run makes the seized thread run the trampoline (trampoline/trampoline.S):
// its code in an unused tail of an executable mapping, its frame and the
// strings below the red zone; the thread saves, calls, restores and goes
// on by itself, so that it completes whenever this process dies. The
// tracer only watches: it passes signals on, notes a lost restart block,
// rescues the thread from a fault in the calls, and when the frame says
// the calls are done, stops the thread once it has left the trampoline,
// puts the bytes back and detaches.
func (t *tracee) run(tg *target, saved *unix.PtraceRegs, lib, sym, arg string) (ret int, err error) {
	pid := t.pid
	phase("seized")
	if !mappedCode(pid, tg.loader.dlopen, tg.loader.from) {
		// The program changed (execve) since the checks read its maps.
		t.atSignal = false
		_ = t.detach(0)
		return 0, &Error{PID: pid, Cause: "it started another program (execve) during the attach",
			Fix: "attach again to the new program"}
	}
	// What a rescue from a fault in the calls puts back.
	xstate, err := t.getXState()
	if err == nil {
		t.mask, err = t.getSigmask()
	}
	if err != nil {
		t.atSignal = false
		_ = t.detach(0)
		return 0, asError(pid, t.goneErr(err))
	}
	maps, err := readMaps(pid)
	if err != nil {
		t.atSignal = false
		_ = t.detach(0)
		return 0, asError(pid, t.goneErr(err))
	}
	rm, err := findRoom(t, maps, tg.loader.from)
	if err != nil {
		t.atSignal = false
		_ = t.detach(0)
		return 0, asError(pid, err)
	}
	rip, rax := t.resumeState(saved)
	f := newFrame(saved, tg.loader, lib, sym, arg, rip, rax)
	_, err = t.mem.WriteAt(f.b, int64(f.addr))
	if err == nil {
		_, err = t.mem.WriteAt(trampolineCode, int64(rm.addr))
	}
	if err != nil {
		t.putBack(rm)
		t.atSignal = false
		_ = t.detach(0)
		return 0, asError(pid, t.goneErr(err))
	}
	phase("written")
	r := *saved
	r.Rip, r.Rsp = rm.addr, f.addr
	r.Orig_rax = ^uint64(0) // no restart of the interrupted call into the trampoline
	if err := t.setRegs(&r); err != nil {
		t.putBack(rm)
		_ = t.detach(0)
		return 0, asError(pid, t.goneErr(err))
	}
	// From here the thread finishes alone if this process dies.
	phase("started")
	sig := 0
	if err := t.resume(unix.PTRACE_CONT, 0); err != nil {
		return 0, asError(pid, err)
	}
	phase("running")
	inCode := func(ip uint64) bool { return ip >= rm.addr && ip < rm.addr+uint64(len(trampolineCode)) }
	for {
		ws, err := t.waitStop(time.Now().Add(watchPoll))
		if errors.Is(err, os.ErrDeadlineExceeded) {
			st, err := t.word(f, fState)
			if err != nil {
				return 0, asError(pid, err)
			}
			if st == stateDone {
				break
			}
			continue
		}
		if err != nil {
			return 0, asError(pid, err)
		}
		cur, err := t.getRegs()
		if err != nil {
			return 0, asError(pid, t.goneErr(err))
		}
		if isEventStop(ws) || int(ws.StopSignal()) == syscallStopSig {
			if err := t.resume(unix.PTRACE_CONT, 0); err != nil {
				return 0, asError(pid, err)
			}
			continue
		}
		si, err := t.siginfo()
		if err != nil {
			return 0, asError(pid, t.goneErr(err))
		}
		if fault(si) {
			// The calls faulted: the thread is put back as it was, this
			// tracer still being there to do it.
			return 0, t.rescue(f, rm, saved, xstate, fmt.Errorf("the injected call faulted at %#x (address %#x, signal %d)", cur.Rip, si.addr(), si.signo()))
		}
		// Signals the trampoline does not block (SIGSETXID, SIGSTOP) go
		// on as they came.
		if err := t.resume(unix.PTRACE_CONT, si.signo()); err != nil {
			return 0, asError(pid, err)
		}
	}
	phase("done")
	// The calls are done and the thread waits in the trampoline: it is
	// stopped there, its results read from the frame (which the app's
	// stack reuses once it goes on), told so (stateRead, the interrupt
	// ends its wait); then stopped again once it has left the trampoline.
	var res []byte
	var readAt time.Time
	keep := false
	for {
		if !t.stopped {
			if err := ptrace(unix.PTRACE_INTERRUPT, t.tid, 0, 0); err != nil {
				return 0, asError(pid, t.goneErr(err))
			}
			ws, err := t.waitStop(time.Time{})
			if err != nil {
				return 0, asError(pid, err)
			}
			sig = 0
			if t.atSignal {
				sig = int(ws.StopSignal())
			}
		}
		cur, err := t.getRegs()
		if err != nil {
			return 0, asError(pid, t.goneErr(err))
		}
		// Below the frame, outside the code: a handler of a signal the
		// trampoline lets through (SIGSETXID) runs on its stack and
		// returns into it.
		inHandler := !inCode(cur.Rip) && cur.Rsp < f.addr
		if res == nil && !inCode(cur.Rip) && !inHandler {
			// It waited resultWait for this tracer in vain.
			t.putBack(rm)
			_ = t.detach(sig)
			return 0, &Error{PID: pid, Cause: fmt.Sprintf("its thread went on after waiting %s for rocprof-go to read the call's result; %s may be loaded in it", resultWait, lib),
				Fix: "attach again on a less loaded machine"}
		}
		if res == nil && inCode(cur.Rip) {
			res = make([]byte, frameSize)
			if _, err := t.mem.ReadAt(res, int64(f.addr)); err != nil {
				return 0, asError(pid, t.goneErr(err))
			}
			if err := t.putWord(f, fState, stateRead); err != nil {
				return 0, asError(pid, err)
			}
			readAt = time.Now()
			phase("read")
		} else if res != nil && !inCode(cur.Rip) && !inHandler {
			break
		}
		if res != nil && time.Since(readAt) > leaveWait {
			// Still not seen out (its app code runs deep below the
			// frame): the bytes stay, never executed again.
			keep = true
			break
		}
		if err := t.resume(unix.PTRACE_CONT, sig); err != nil {
			return 0, asError(pid, err)
		}
		sig = 0
		time.Sleep(50 * time.Microsecond)
	}
	phase("left")
	if !keep {
		t.putBack(rm)
	}
	phase("restored")
	if err := t.detach(sig); err != nil {
		return 0, asError(pid, t.goneErr(err))
	}
	word := func(off int) uint64 { return binary.LittleEndian.Uint64(res[off:]) }
	errText := func() string {
		if tg.loader.dlerr == 0 {
			return "no dlerror() in " + tg.loader.how
		}
		s := string(res[fErrText:])
		if i := strings.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		if s == "" {
			return "no dlerror() text"
		}
		return s
	}
	switch {
	case word(fHandle) == 0:
		return 0, &Error{PID: pid, Cause: "loading " + lib + " in it failed: " + errText(),
			Fix: "check that the library's dependencies exist where the process runs (ldd " + lib + ")"}
	case word(fFn) == 0:
		return 0, &Error{PID: pid, Cause: lib + " has no " + sym + ": " + errText(),
			Fix: "the library does not match this rocprof-go: reinstall rocprof-go"}
	}
	return int(int32(uint32(word(fRet)))), nil
}

// fault reports whether si is a fault of the thread's own code (the
// kernel's SIGSEGV, SIGBUS, SIGILL, SIGFPE).
func fault(si siginfo) bool {
	switch syscall.Signal(si.signo()) {
	case syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGILL, syscall.SIGFPE:
		return si.code() > 0
	}
	return false
}

// rescue puts the thread back as it was before the trampoline after a
// fault in the calls: registers, extended state, signal mask, errno; the
// trampoline's bytes back; the fault not delivered.
func (t *tracee) rescue(f *frame, rm room, saved *unix.PtraceRegs, xstate []byte, cause error) error {
	if p, err := t.word(f, fErrnoPtr); err == nil && p != 0 {
		var b [4]byte
		if _, err := t.mem.ReadAt(b[:], int64(f.addr)+fErrno); err == nil {
			_, _ = t.mem.WriteAt(b[:], int64(p))
		}
	}
	t.putBack(rm)
	t.atSignal = false
	if err := t.setSigmask(t.mask); err != nil {
		return asError(t.pid, t.goneErr(err))
	}
	if err := t.restore(saved, xstate); err != nil {
		return asError(t.pid, err)
	}
	return asError(t.pid, cause)
}

// putBack writes zeros over the trampoline, as the tail of the segment
// was (or the trampoline an injector killed earlier left there).
func (t *tracee) putBack(rm room) {
	if t.mem != nil {
		_, _ = t.mem.WriteAt(make([]byte, len(rm.orig)), int64(rm.addr))
	}
}

// mappedCode reports whether addr is in an executable mapping of the file
// path in pid.
func mappedCode(pid int, addr uint64, path string) bool {
	maps, err := readMaps(pid)
	if err != nil {
		return false
	}
	for _, m := range maps {
		if addr >= m.start && addr < m.end {
			return m.path == path && strings.Contains(m.perms, "x")
		}
	}
	return false
}
