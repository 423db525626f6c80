//go:build linux && amd64

package inject

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ptrace makes one request; every request of an injection comes from the
// one OS thread that seized the tracee (Inject locks it).
func ptrace(req int, tid int, addr, data uintptr) error {
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, uintptr(req), uintptr(tid), addr, data, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// siginfo is a raw siginfo_t (128 bytes on x86-64).
type siginfo [128]byte

func (s *siginfo) signo() int   { return int(int32(binary.LittleEndian.Uint32(s[0:]))) }
func (s *siginfo) code() int32  { return int32(binary.LittleEndian.Uint32(s[8:])) }
func (s *siginfo) pid() int     { return int(int32(binary.LittleEndian.Uint32(s[16:]))) }
func (s *siginfo) addr() uint64 { return binary.LittleEndian.Uint64(s[16:]) }

const (
	siTkill         = -6 // SI_TKILL
	cldExited       = 1  // CLD_EXITED
	cldKilled       = 2
	cldDumped       = 3
	syscallInfoOp   = 0 // ptrace_syscall_info.op
	syscallEntry    = 1 // PTRACE_SYSCALL_INFO_ENTRY
	auditArchX86_64 = 0xc000003e
	syscallStopSig  = int(syscall.SIGTRAP) | 0x80 // PTRACE_O_TRACESYSGOOD
	dfFlag          = 0x400                       // EFLAGS.DF: clear at every call (the ABI)
	redZone         = 128
	errRestartBlock = 516 // ERESTART_RESTARTBLOCK
)

// tracee is one thread of the target seized by this OS thread.
type tracee struct {
	pid, tid int
	mem      *os.File
	// stopped: the thread is in a ptrace-stop this tracer has waited
	// for; atSignal: a signal-delivery-stop (a signal given to
	// PTRACE_DETACH there is delivered).
	stopped, atSignal bool
	// mask is the thread's signal mask when seized (a rescue puts it
	// back).
	mask uint64
}

// errThreadGone: the thread exited but the process lives on.
var errThreadGone = errors.New("thread exited")

// waitStop waits for the tracee's next stop until deadline (zero: no
// limit). An exit is peeked at (WNOWAIT) and not reaped: the process's own
// parent still gets it.
func (t *tracee) waitStop(deadline time.Time) (unix.WaitStatus, error) {
	stops := childSignals()
	for {
		var si siginfo
		_, _, e := unix.Syscall6(unix.SYS_WAITID, unix.P_PID, uintptr(t.tid), uintptr(unsafe.Pointer(&si)),
			unix.WEXITED|unix.WSTOPPED|unix.WNOHANG|unix.WNOWAIT|unix.WALL, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			if e == unix.ECHILD {
				return 0, t.goneErr(e)
			}
			return 0, e
		}
		if si.pid() != 0 {
			switch si.code() {
			case cldExited, cldKilled, cldDumped:
				return 0, t.goneErr(errThreadGone)
			}
			var ws unix.WaitStatus
			wpid, err := unix.Wait4(t.tid, &ws, unix.WALL|unix.WNOHANG, nil)
			if err == unix.EINTR || (err == nil && wpid == 0) {
				continue
			}
			if err != nil {
				return 0, t.goneErr(err)
			}
			if ws.Exited() || ws.Signaled() {
				return 0, t.goneErr(errThreadGone)
			}
			t.stopped = true
			t.atSignal = !isEventStop(ws) && int(ws.StopSignal()) != syscallStopSig
			return ws, nil
		}
		wait := time.Millisecond
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return 0, os.ErrDeadlineExceeded
			}
			wait = min(wait, left)
		}
		// The tracee's stop sends this process SIGCHLD: wait for it, and
		// look again every millisecond whatever (signals coalesce).
		timer := time.NewTimer(wait)
		select {
		case <-stops:
		case <-timer.C:
		}
		timer.Stop()
	}
}

var (
	sigchldOnce sync.Once
	sigchld     chan os.Signal
)

// childSignals is this process's SIGCHLD, which the kernel sends the
// tracer at each ptrace-stop of a tracee: the wait for a stop wakes at
// once instead of polling (each stop of a thread followed to a system
// call holds that thread until the tracer sees it).
func childSignals() <-chan os.Signal {
	sigchldOnce.Do(func() {
		sigchld = make(chan os.Signal, 1)
		signal.Notify(sigchld, syscall.SIGCHLD)
	})
	return sigchld
}

// goneErr is the error for a tracee that vanished: the process's exit, or
// errThreadGone when only the thread ended.
func (t *tracee) goneErr(err error) error {
	if st, e := readStat(procPath(t.pid, "stat")); e != nil || st.state == 'Z' || st.state == 'X' {
		return exitedError(t.pid, err)
	}
	if _, e := os.Stat(procPath(t.pid, "task", fmt.Sprint(t.tid))); e == nil && t.tid == t.pid {
		// The main thread was replaced: another thread ran execve.
		return &Error{PID: t.pid, Cause: "it started another program (execve) during the attach",
			Fix: "attach again to the new program", Err: err}
	}
	return errThreadGone
}

// resume restarts the stopped thread with request req (PTRACE_CONT,
// PTRACE_SYSCALL) and signal sig.
func (t *tracee) resume(req, sig int) error {
	if err := ptrace(req, t.tid, 0, uintptr(sig)); err != nil {
		return t.goneErr(err)
	}
	t.stopped, t.atSignal = false, false
	return nil
}

func isEventStop(ws unix.WaitStatus) bool { return int(ws)>>16 == unix.PTRACE_EVENT_STOP }

func (t *tracee) getRegs() (unix.PtraceRegs, error) {
	var r unix.PtraceRegs
	err := ptrace(unix.PTRACE_GETREGS, t.tid, 0, uintptr(unsafe.Pointer(&r)))
	return r, err
}

func (t *tracee) setRegs(r *unix.PtraceRegs) error {
	return ptrace(unix.PTRACE_SETREGS, t.tid, 0, uintptr(unsafe.Pointer(r)))
}

// getXState reads the whole XSAVE area (x87, SSE, AVX, AVX-512, ...):
// dlopen and the library's code clobber vector registers the thread may
// have live (the kernel saves them at its stop; the ABI would not).
func (t *tracee) getXState() ([]byte, error) {
	buf := make([]byte, 64<<10)
	iov := unix.Iovec{Base: &buf[0], Len: uint64(len(buf))}
	if err := ptrace(unix.PTRACE_GETREGSET, t.tid, unix.NT_X86_XSTATE, uintptr(unsafe.Pointer(&iov))); err != nil {
		return nil, err
	}
	return buf[:iov.Len], nil
}

func (t *tracee) setXState(buf []byte) error {
	iov := unix.Iovec{Base: &buf[0], Len: uint64(len(buf))}
	return ptrace(unix.PTRACE_SETREGSET, t.tid, unix.NT_X86_XSTATE, uintptr(unsafe.Pointer(&iov)))
}

func (t *tracee) siginfo() (siginfo, error) {
	var si siginfo
	err := ptrace(unix.PTRACE_GETSIGINFO, t.tid, 0, uintptr(unsafe.Pointer(&si)))
	return si, err
}

// syscallEntry returns, at a syscall-stop, whether it is an entry and the
// call's number and first argument (PTRACE_GET_SYSCALL_INFO).
func (t *tracee) syscallEntry() (entry bool, nr int64, arg0 uint64, err error) {
	var b [88]byte
	if err := ptrace(unix.PTRACE_GET_SYSCALL_INFO, t.tid, uintptr(len(b)), uintptr(unsafe.Pointer(&b[0]))); err != nil {
		return false, 0, 0, err
	}
	if b[syscallInfoOp] != syscallEntry || binary.LittleEndian.Uint32(b[4:]) != auditArchX86_64 {
		return false, 0, 0, nil
	}
	return true, int64(binary.LittleEndian.Uint64(b[24:])), binary.LittleEndian.Uint64(b[32:]), nil
}

// isSyscallInsn reports whether the two bytes before addr are x86-64's
// `syscall` instruction (0f 05).
func (t *tracee) isSyscallInsn(addr uint64) bool {
	var b [2]byte
	_, err := t.mem.ReadAt(b[:], int64(addr-2))
	return err == nil && b == [2]byte{0x0f, 0x05}
}

// detach lets the thread go from its current stop, with sig delivered when
// it is in a signal-delivery-stop.
func (t *tracee) detach(sig int) error {
	if !t.atSignal {
		sig = 0
	}
	if t.mem != nil {
		t.mem.Close()
		t.mem = nil
	}
	return ptrace(unix.PTRACE_DETACH, t.tid, 0, uintptr(sig))
}

// stopNow interrupts a running tracee and waits for a stop at which it can
// be detached; a signal met on the way is passed back by detach.
func (t *tracee) stopNow() (pass int, err error) {
	if t.stopped {
		return 0, nil
	}
	if err := ptrace(unix.PTRACE_INTERRUPT, t.tid, 0, 0); err != nil {
		return 0, err
	}
	ws, err := t.waitStop(time.Now().Add(5 * time.Second))
	if err != nil {
		return 0, err
	}
	if t.atSignal {
		return int(ws.StopSignal()), nil
	}
	return 0, nil
}

// errNoSafePoint: the thread reached no waiting system call in its time.
var errNoSafePoint = errors.New("no safe point")

// stoppedError is the refusal of a process in a group-stop.
func stoppedError(pid int) *Error {
	return &Error{PID: pid, Cause: "it was stopped (SIGSTOP or SIGTSTP) during the attach",
		Fix: fmt.Sprintf("resume it (kill -CONT %d) and attach again", pid)}
}

// seize takes tid and brings it to a point where it holds no C library
// lock: blocked in (or at the entry of) a waiting system call. It returns
// the registers to restore at the end: for a call interrupted it keeps
// the kernel's restart state (rax -ERESTART*, orig_rax its number); for a
// call stopped at its entry or cut short with EINTR by the stop, the state
// just before its `syscall` instruction, so that the thread makes it again.
func seize(pid, tid int, until time.Time) (*tracee, unix.PtraceRegs, string, error) {
	var none unix.PtraceRegs
	t := &tracee{pid: pid, tid: tid}
	if err := ptrace(unix.PTRACE_SEIZE, tid, 0, unix.PTRACE_O_TRACESYSGOOD); err != nil {
		switch {
		case errors.Is(err, unix.ESRCH):
			return nil, none, "", t.goneErr(err)
		case errors.Is(err, unix.EPERM):
			return nil, none, "", refused(pid, err)
		}
		return nil, none, "", err
	}
	mem, err := os.OpenFile(procPath(pid, "mem"), os.O_RDWR, 0)
	if err != nil {
		_ = ptrace(unix.PTRACE_DETACH, tid, 0, 0) // not stopped yet: the thread is left as it was
		if gone(err) {
			return nil, none, "", t.goneErr(err)
		}
		return nil, none, "", err
	}
	t.mem = mem
	pass := 0 // a signal stopped at, to deliver when the thread goes on
	fail := func(err error) (*tracee, unix.PtraceRegs, string, error) {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			err = errNoSafePoint
		}
		if errors.Is(err, errThreadGone) || Exited(err) {
			t.mem.Close()
			return nil, none, "", err
		}
		p, e := t.stopNow()
		if e == nil {
			e = t.detach(max(p, pass))
		}
		if e != nil && gone(e) {
			return nil, none, "", t.goneErr(e)
		}
		return nil, none, "", err
	}
	if err := ptrace(unix.PTRACE_INTERRUPT, tid, 0, 0); err != nil {
		return fail(t.goneErr(err))
	}
	// The first stop: the interrupt's. A signal met first is let through.
	for {
		ws, err := t.waitStop(time.Now().Add(5 * time.Second))
		if err != nil {
			return fail(err)
		}
		if isEventStop(ws) {
			if ws.StopSignal() != syscall.SIGTRAP {
				t.atSignal = false
				_ = t.detach(0) // the thread joins the group-stop
				return nil, none, "", stoppedError(pid)
			}
			break
		}
		if err := t.resume(unix.PTRACE_CONT, int(ws.StopSignal())); err != nil {
			return fail(err)
		}
	}
	regs, err := t.getRegs()
	if err != nil {
		return fail(t.goneErr(err))
	}
	if !stackRoom(pid, regs.Rsp) {
		return fail(errNoSafePoint)
	}
	if nr := int64(regs.Orig_rax); safeSyscall(pid, nr, regs.Rdi) {
		saved := regs
		rax := int64(regs.Rax)
		how := "blocked in " + waitingSyscalls[int(nr)]
		if rax == -int64(unix.EINTR) && t.isSyscallInsn(regs.Rip) {
			// The stop cut the call short (epoll_wait, ...): make it again.
			saved.Rip -= 2
			saved.Rax = saved.Orig_rax
			saved.Orig_rax = ^uint64(0)
			how += " (made again)"
		}
		return t, saved, how, nil
	}
	// Follow the thread to the entry of a waiting system call.
	for time.Now().Before(until) {
		if err := t.resume(unix.PTRACE_SYSCALL, pass); err != nil {
			return fail(err)
		}
		pass = 0
		ws, err := t.waitStop(until)
		if err != nil {
			return fail(err)
		}
		switch {
		case isEventStop(ws):
			if ws.StopSignal() != syscall.SIGTRAP {
				t.atSignal = false
				_ = t.detach(0)
				return nil, none, "", stoppedError(pid)
			}
		case int(ws.StopSignal()) == syscallStopSig:
			entry, nr, arg0, err := t.syscallEntry()
			if err != nil {
				return fail(t.goneErr(err))
			}
			if !entry || !safeSyscall(pid, nr, arg0) {
				continue
			}
			regs, err := t.getRegs()
			if err != nil {
				return fail(t.goneErr(err))
			}
			saved := regs
			saved.Rip -= 2
			saved.Rax = saved.Orig_rax
			saved.Orig_rax = ^uint64(0)
			return t, saved, "at the entry of " + waitingSyscalls[int(nr)], nil
		default:
			pass = int(ws.StopSignal()) // a signal before anything changed: delivered as it came
		}
	}
	return fail(errNoSafePoint)
}

// minStack is the stack a thread must have below its stack pointer for
// the calls: dlopen and the library's constructors run on it.
const minStack = 64 << 10

// stackRoom reports whether the stack at rsp has minStack writable bytes
// below the red zone (the main thread's [stack] grows on demand).
func stackRoom(pid int, rsp uint64) bool {
	maps, err := readMaps(pid)
	if err != nil {
		return false
	}
	for _, m := range maps {
		if rsp > m.start && rsp <= m.end {
			if m.path == "[stack]" {
				return true
			}
			return strings.HasPrefix(m.perms, "rw") && rsp-redZone-m.start >= minStack
		}
	}
	return false
}

// refused is the error for EPERM from PTRACE_SEIZE: the checks' own
// explanation when they find one now, else the kernel's word.
func refused(pid int, err error) *Error {
	st, e := readStat(procPath(pid, "stat"))
	if e != nil || st.state == 'Z' || st.state == 'X' {
		return exitedError(pid, err) // PTRACE_SEIZE refuses an exiting process
	}
	{
		if pe := checkPermission(pid, st); pe != nil {
			pe.Err = err
			return pe
		}
		if pe := checkTracer(pid); pe != nil {
			pe.Err = err
			return pe
		}
	}
	return &Error{PID: pid, Cause: "the kernel refused to let rocprof-go trace it (EPERM: a security module, seccomp or a container's policy)",
		Fix: "run rocprof-go as root with CAP_SYS_PTRACE where the process runs, or start the application under rocprof-go", Err: err}
}

// getSigmask and setSigmask read and set the thread's signal mask.
func (t *tracee) getSigmask() (uint64, error) {
	var m uint64
	err := ptrace(unix.PTRACE_GETSIGMASK, t.tid, 8, uintptr(unsafe.Pointer(&m)))
	return m, err
}

func (t *tracee) setSigmask(m uint64) error {
	return ptrace(unix.PTRACE_SETSIGMASK, t.tid, 8, uintptr(unsafe.Pointer(&m)))
}

// restore puts back the thread's registers and extended state (a rescue
// from a fault in the calls) and detaches.
func (t *tracee) restore(saved *unix.PtraceRegs, xstate []byte) error {
	if int64(saved.Orig_rax) >= 0 && int64(saved.Rax) == -errRestartBlock && t.isSyscallInsn(saved.Rip) {
		// The app's sleep cannot be resumed where it was (its restart
		// block is gone): it is made again whole, which an absolute sleep
		// makes exactly and a relative one longer, never shorter.
		again := *saved
		again.Rip -= 2
		again.Rax = again.Orig_rax
		again.Orig_rax = ^uint64(0)
		saved = &again
	}
	err := t.setRegs(saved)
	if err == nil && xstate != nil {
		err = t.setXState(xstate)
	}
	if err != nil {
		return t.goneErr(err)
	}
	if err := t.detach(0); err != nil {
		return t.goneErr(err)
	}
	return nil
}
