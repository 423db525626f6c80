//go:build linux && amd64

package inject

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The frame the trampoline (trampoline/trampoline.S, its F_* offsets)
// reads its arguments from and writes its results to: on the thread's
// stack below the red zone, at the stack pointer the thread starts with.
const (
	fDlopen    = 0
	fDlsym     = 8
	fDlerror   = 16
	fErrnoLoc  = 24
	fDlclose   = 32
	fLib       = 40
	fSym       = 48
	fArg       = 56
	fMode      = 64
	fBlock     = 96 // the signals blocked during the calls
	fErrnoPtr  = 112
	fErrno     = 120
	fHandle    = 128
	fFn        = 136
	fRet       = 144
	fState     = 152 // 1: calls under way; 2: calls done, waiting; 3: results read
	fWaitSet   = 160 // the empty signal set of the wait
	fTimeout   = 168 // how long the thread waits for the results to be read
	fUC        = 256 // the ucontext rt_sigreturn takes: the app's registers
	fErrText   = 576 // dlerror()'s text, NUL-terminated
	errTextLen = 512
	frameSize  = fErrText + errTextLen // the strings follow
)

// struct ucontext and its struct sigcontext (x86-64): offsets.
const (
	ucFlags    = 0
	ucMcontext = 40
	ucSigmask  = 296
	// UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS: the
	// extended state is in the frame, ss is restored as given.
	ucFlagsValue = 1 | 2 | 4
)

const (
	stateDone = 2
	stateRead = 3
	// resultWait bounds the thread's wait for its results to be read: a
	// thread whose injector is gone goes on after it.
	resultWait = 5 * time.Second
)

// blockedDuringCall is the signal mask the trampoline adds: every signal
// but the synchronous ones (a fault in the calls must reach the app's
// handler or the tracer, and the kernel would reset the handler of a
// blocked one) and glibc's SIGSETXID (a setuid() of another thread waits
// for every thread to take it, while holding the lock pthread_create
// needs).
var blockedDuringCall = ^(sigBit(unix.SIGILL) | sigBit(unix.SIGTRAP) | sigBit(unix.SIGBUS) | sigBit(unix.SIGFPE) |
	sigBit(unix.SIGSEGV) | sigBit(unix.SIGSYS) | sigBit(sigSetxid))

// sigSetxid is glibc's SIGSETXID (SIGRTMIN+1).
const sigSetxid = 33

func sigBit[S ~int](s S) uint64 { return 1 << (uint(s) - 1) }

// room is where the trampoline's code goes: the tail of an executable
// file mapping past the end of its segment, which no code of the process
// reaches. Nothing is mapped for it, so nothing is left to unmap;
// orig is what the bytes were (zeros, or the trampoline of an earlier
// injection whose injector was killed), written back after the call.
type room struct {
	addr uint64
	path string
	orig []byte
}

// findRoom chooses the room for the trampoline: in the module of dlopen
// first, else in any other executable file mapping. A segment's tail is
// used only where its bytes are zeros or already the trampoline.
func findRoom(t *tracee, maps []mapping, prefer string) (room, error) {
	need := uint64(len(trampolineCode))
	order := make([]int, 0, len(maps))
	for i, m := range maps {
		if m.path == prefer {
			order = append(order, i)
		}
	}
	for i, m := range maps {
		if m.path != prefer {
			order = append(order, i)
		}
	}
	for _, i := range order {
		m := maps[i]
		if !strings.HasPrefix(m.perms, "r-x") || !strings.HasPrefix(m.path, "/") || m.inode == 0 {
			continue
		}
		start, end, ok := segmentTail(t.pid, m)
		if !ok || end-start < need {
			continue
		}
		addr := (start + 63) &^ 63
		if end-addr < need {
			continue
		}
		old := make([]byte, need)
		if _, err := t.mem.ReadAt(old, int64(addr)); err != nil {
			return room{}, t.goneErr(err)
		}
		if !bytes.Equal(old, make([]byte, need)) && !bytes.Equal(old, trampolineCode) {
			continue
		}
		return room{addr: addr, path: m.path, orig: old}, nil
	}
	return room{}, &Error{PID: t.pid, Cause: fmt.Sprintf("none of its executable mappings has %d unused bytes past the end of its code for the injected call", need),
		Fix: "start the application under rocprof-go instead (launch mode), and report this with the target's /proc/PID/maps"}
}

// segmentTail returns the part of the executable mapping m past the end
// of the segment it maps (to the end of its last page), when the ELF
// file says so and no other segment lies there.
func segmentTail(pid int, m mapping) (start, end uint64, ok bool) {
	f, err := openMapped(pid, m)
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	ef, err := elf.NewFile(f)
	if err != nil {
		return 0, 0, false
	}
	defer ef.Close()
	var seg *elf.Prog
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && p.Off&^0xfff == m.off {
			seg = p
			break
		}
	}
	if seg == nil || seg.Memsz != seg.Filesz {
		return 0, 0, false
	}
	bias := uint64(0)
	if ef.Type == elf.ET_DYN {
		bias = m.start - seg.Vaddr&^0xfff
	} else if m.start != seg.Vaddr&^0xfff {
		return 0, 0, false
	}
	start, end = bias+seg.Vaddr+seg.Memsz, m.end
	if start > end || (end-start) >= 0x1000 {
		return 0, 0, false
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD && p != seg && bias+p.Vaddr < end && bias+p.Vaddr+p.Memsz > start {
			return 0, 0, false
		}
	}
	return start, end, true
}

// resumeState is where the app's thread goes on from the registers
// saved, and with what rax: its interrupted system call restarted as the
// kernel restarts it when no handler runs (-ERESTARTSYS, -ERESTARTNOINTR,
// -ERESTARTNOHAND: made again), else the registers as they are. A call
// the kernel would resume with restart_syscall (-ERESTART_RESTARTBLOCK: a
// timed sleep, poll) is made again whole instead: the thread's one
// restart block does not survive the calls (every nanosleep and
// clock_nanosleep resets it at its entry), and restart_syscall would
// then fail the app's call with EINTR. An absolute sleep is exact so, a
// relative one longer (by the time already slept), never shorter.
func (t *tracee) resumeState(saved *unixRegs) (rip, rax uint64) {
	rip, rax = saved.Rip, saved.Rax
	if int64(saved.Orig_rax) < 0 || !t.isSyscallInsn(saved.Rip) {
		return rip, rax
	}
	switch -int64(saved.Rax) {
	case 512, 513, 514: // ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND
		return rip - 2, saved.Orig_rax
	case errRestartBlock:
		return rip - 2, saved.Orig_rax
	}
	return rip, rax
}

// unixRegs is the general registers as ptrace gives them.
type unixRegs = unix.PtraceRegs

// frame is the trampoline's frame and the strings after it, at addr.
type frame struct {
	addr uint64
	b    []byte
}

func (f *frame) put(off int, v uint64) { binary.LittleEndian.PutUint64(f.b[off:], v) }

// newFrame lays out the frame below the red zone of the saved registers'
// rsp: 64-byte aligned, the strings lib, sym and arg after it, the
// ucontext the app's thread goes on from (rip and rax as resumeState
// says; the signal mask, the alternate stack and the extended state are
// the trampoline's to fill).
func newFrame(saved *unixRegs, ld *loader, lib, sym, arg string, rip, rax uint64) *frame {
	blob := lib + "\x00" + sym + "\x00" + arg + "\x00"
	size := frameSize + len(blob)
	addr := (saved.Rsp - redZone - uint64(size) - 64) &^ 63
	f := &frame{addr: addr, b: make([]byte, size)}
	copy(f.b[frameSize:], blob)
	s := addr + frameSize
	f.put(fDlopen, ld.dlopen)
	f.put(fDlsym, ld.dlsym)
	f.put(fDlerror, ld.dlerr)
	f.put(fErrnoLoc, ld.errnoLoc)
	f.put(fDlclose, ld.dlclose)
	f.put(fLib, s)
	f.put(fSym, s+uint64(len(lib))+1)
	f.put(fArg, s+uint64(len(lib)+len(sym))+2)
	f.put(fMode, rtldNow|rtldLocal|ld.extraMode)
	f.put(fBlock, blockedDuringCall)
	f.put(fTimeout, uint64(resultWait/time.Second))
	f.put(fTimeout+8, uint64(resultWait%time.Second))
	f.put(fWaitSet, 0) // the empty set: the wait takes no signal
	f.put(fUC+ucFlags, ucFlagsValue)
	f.put(fUC+ucSigmask, 0) // the thread's mask: the trampoline writes it (rt_sigprocmask's old set)
	mc := fUC + ucMcontext
	for i, v := range []uint64{saved.R8, saved.R9, saved.R10, saved.R11, saved.R12, saved.R13, saved.R14, saved.R15,
		saved.Rdi, saved.Rsi, saved.Rbp, saved.Rbx, saved.Rdx, rax, saved.Rcx, saved.Rsp, rip, saved.Eflags} {
		f.put(mc+8*i, v)
	}
	binary.LittleEndian.PutUint16(f.b[mc+144:], uint16(saved.Cs)) // cs, gs, fs, ss
	binary.LittleEndian.PutUint16(f.b[mc+150:], uint16(saved.Ss))
	return f
}

// word reads the frame's word at off from the target.
func (t *tracee) word(f *frame, off int) (uint64, error) {
	var b [8]byte
	if _, err := t.mem.ReadAt(b[:], int64(f.addr)+int64(off)); err != nil {
		return 0, t.goneErr(err)
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

func (t *tracee) putWord(f *frame, off int, v uint64) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	if _, err := t.mem.WriteAt(b[:], int64(f.addr)+int64(off)); err != nil {
		return t.goneErr(err)
	}
	return nil
}
