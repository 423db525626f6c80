//go:build linux && amd64

package inject

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
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

// run makes the calls on the seized thread and restores it: the strings
// below the red zone, the return address 0 below them.
func (t *tracee) run(tg *target, saved *unix.PtraceRegs, lib, sym, arg string) (ret int, err error) {
	pid := t.pid
	if !mappedCode(pid, tg.loader.dlopen, tg.loader.from) {
		// The program changed (execve) since the checks read its maps.
		t.atSignal = false
		_ = t.detach(0)
		return 0, &Error{PID: pid, Cause: "it started another program (execve) during the attach",
			Fix: "attach again to the new program"}
	}
	xstate, err := t.getXState()
	if err != nil {
		t.atSignal = false
		_ = t.detach(0)
		return 0, asError(pid, t.goneErr(err))
	}
	// The strings, then the frame: rsp 16-byte aligned before the "call",
	// the return address 0 pushed.
	blob := lib + "\x00" + sym + "\x00" + arg + "\x00"
	strs := (saved.Rsp - redZone - 256 - uint64(len(blob))) &^ 15
	sp := (strs-64)&^15 - 8
	_, err = t.mem.WriteAt(append([]byte(blob), 0, 0, 0, 0, 0, 0, 0, 0), int64(strs))
	if err == nil {
		_, err = t.mem.WriteAt(make([]byte, 8), int64(sp))
	}
	if err != nil {
		_ = t.restore(saved, xstate)
		return 0, asError(pid, t.goneErr(err))
	}
	libAddr, symAddr, argAddr := strs, strs+uint64(len(lib))+1, strs+uint64(len(lib)+len(sym))+2
	ld := tg.loader

	// The thread's errno (in its TLS: no register) is the app's: the
	// calls below set it.
	errnoAt := uint64(0)
	var errnoWas [4]byte
	if ld.errnoLoc != 0 {
		p, err := t.call(saved, sp, ld.errnoLoc)
		if err == nil && p != 0 {
			if _, err := t.mem.ReadAt(errnoWas[:], int64(p)); err == nil {
				errnoAt = p
			}
		}
	}
	finish := func(e error) (int, error) {
		if Exited(e) {
			return 0, e
		}
		if errnoAt != 0 {
			_, _ = t.mem.WriteAt(errnoWas[:], int64(errnoAt))
		}
		if re := t.restore(saved, xstate); re != nil && e == nil {
			e = re
		}
		if e != nil {
			return 0, asError(pid, e)
		}
		return ret, nil
	}
	dlerror := func() string {
		if ld.dlerr == 0 {
			return "no dlerror() in " + ld.how
		}
		p, err := t.call(saved, sp, ld.dlerr)
		if err != nil || p == 0 {
			return "no dlerror() text"
		}
		return t.cString(p)
	}
	h, err := t.call(saved, sp, ld.dlopen, libAddr, rtldNow|rtldLocal|ld.extraMode)
	if err != nil {
		return finish(err)
	}
	if h == 0 {
		msg := dlerror()
		return finish(&Error{PID: pid, Cause: "loading " + lib + " in it failed: " + msg,
			Fix: "check that the library's dependencies exist where the process runs (ldd " + lib + ")"})
	}
	fn, err := t.call(saved, sp, ld.dlsym, h, symAddr)
	if err != nil {
		return finish(err)
	}
	if fn == 0 {
		msg := dlerror()
		if ld.dlclose != 0 {
			_, _ = t.call(saved, sp, ld.dlclose, h)
		}
		return finish(&Error{PID: pid, Cause: lib + " has no " + sym + ": " + msg,
			Fix: "the library does not match this rocprof-go: reinstall rocprof-go"})
	}
	rax, err := t.call(saved, sp, fn, argAddr)
	if err != nil {
		return finish(err)
	}
	ret = int(int32(uint32(rax)))
	return finish(nil)
}

// cString reads a NUL-terminated string of the tracee (at most 4 KiB).
func (t *tracee) cString(addr uint64) string {
	b := make([]byte, 4096)
	n, _ := t.mem.ReadAt(b, int64(addr))
	s := string(b[:n])
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return s
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
