// Package inject loads a library into a running x86-64 Linux process and
// calls one of its functions, through ptrace, leaving the process as it
// was: the first step of `rocprof-go --attach` (docs/attach-inject.md).
// It owns the checks made before any ptrace (Preflight), the injection
// (Inject) and the list of a process's descendants (Descendants); it
// knows nothing of profiling: internal/attach gives it the preload
// library's path, rpg_attach_start and the configuration file.
//
// # The checks
//
// Preflight predicts what the kernel would refuse and says why, in one
// line with its fix, without touching the target: the process exists and
// runs (not a zombie, not stopped); ptrace_may_access's rule for
// PTRACE_MODE_ATTACH_REALCREDS (the same real uid and gid as all of the
// target's, or CAP_SYS_PTRACE; not dumpable; capabilities the caller does
// not hold); a caller in a user namespace of its own holds no capability
// over a process outside it (a container without CAP_SYS_PTRACE); Yama's
// ptrace_scope 1 (ancestors only), 2 (CAP_SYS_PTRACE only), 3 (none until
// reboot); no other tracer (TracerPid of every thread); an x86-64 ELF
// program (a 32-bit i386 one is refused), dynamically linked, with
// glibc's dlopen reachable; and the library the same file (device and
// inode) at the same path in the target's mount namespace, where dlopen
// will look for it. Inject runs the same checks first, and explains an
// EPERM from PTRACE_SEIZE with them.
//
// # One thread, at a point where it holds no lock
//
// Only one thread is seized (PTRACE_SEIZE, PTRACE_INTERRUPT); the others
// keep running, so the app's work and its timing go on. The thread must
// call dlopen, which takes the loader's lock and malloc's arena locks: a
// thread interrupted while holding one of them would deadlock on itself.
// A thread blocked in a system call that waits for the outside world
// (read/recv on a pipe, socket or terminal, poll, select, epoll_wait,
// nanosleep, clock_nanosleep, accept, wait4, waitid, pause,
// rt_sigsuspend, rt_sigtimedwait) holds none of them: glibc makes these
// calls for the app, never inside malloc or the loader. Futex waits are
// excluded: a thread waiting for a condition variable cannot be told from
// one waiting for a mutex while it holds another (dlopen calling malloc
// under the loader lock). /proc/PID/task/TID/syscall names the threads
// so blocked; one is seized first. A thread with less than 64 KiB of
// stack below its red zone is passed over (dlopen and the library's
// constructors run on it). When none is, a thread is followed
// with PTRACE_SYSCALL (running threads first, then those asleep in a
// futex, 300 ms each, round again until the deadline) to the entry of
// such a call; at the entry the call has not started, so the saved state
// is the one just before its `syscall` instruction, which the thread
// executes again after the restore. No thread found before ctx's deadline
// (10 s without one) is an error, with the thread left untouched.
//
// # The call
//
// The general registers (PTRACE_GETREGS) and the whole XSAVE area
// (PTRACE_GETREGSET NT_X86_XSTATE: x87, SSE, AVX, AVX-512; dlopen and the
// library's code use vector registers the app may have live across its
// system call, which the kernel keeps) are saved. The strings are written
// below the 128-byte red zone, the return address 0 below them, rsp
// 16-byte aligned at the call (the ABI), DF cleared. orig_rax is set to
// -1, so that the kernel does not restart the interrupted system call
// into the function. Each function (dlopen, dlsym or dlerror, then the
// library's) returns to address 0: the SIGSEGV stop with rip 0 hands back
// rax. dlopen is glibc's: dlopen@@GLIBC_2.34 in libc.so.6, else a loaded
// libdl.so.2's, else __libc_dlopen_mode; its address comes from
// /proc/PID/maps and the ELF dynamic symbols of the mapped file, read
// through /proc/PID/root (checked to be the mapped inode) or
// /proc/PID/map_files. Restoring the saved registers puts back the
// kernel's restart state (rax -ERESTART*, orig_rax the call): the app's
// read() is made again and returns the data, its nanosleep() goes on to
// its full time (restart_syscall). A waiting call the interrupt cut short
// with EINTR (epoll_wait does) is made again the same way as at an entry.
// The thread's errno, which lives in its TLS and which the calls set, is
// read through the target's __errno_location first and written back. The
// signal mask is never touched.
//
// # Signals, stops, exits
//
// Before the thread is changed, a signal it stops for is delivered as it
// came. While it runs the calls, signals for it are held (their siginfo
// kept) and delivered after the restore: the first by PTRACE_DETACH with
// its siginfo, the others queued again (rt_tgsigqueueinfo with their
// siginfo for sigqueue's codes, tgkill otherwise); a SIGCONT drops the
// stop signals held before it. A group-stop during the calls is passed
// by; on the detach the kernel puts the thread back into it. A process
// that exits is reported as such; its exit status is only peeked at
// (WNOWAIT) and stays its parent's. A tracee's stop sends the tracer
// SIGCHLD: the waits wake on it (signal.Notify) rather than polling, so a
// thread is held no longer than the tracer takes to answer. All ptrace requests come from one
// locked OS thread that is never unlocked: when Inject returns the thread
// ends, and any ptrace link an unforeseen path left ends with it.
//
// # Limits
//
// Once the thread runs the calls, ctx no longer bounds them: cutting
// dlopen short would leave the loader's lock held. If rocprof-go is killed
// during the calls (a few milliseconds), the thread returns to address 0
// and the process dies of SIGSEGV. The bytes written below the stack
// pointer are left there (below rsp, no code reads them). The kernel keeps
// one restart block per thread: when a system call of the injected code is
// interrupted with -ERESTART_RESTARTBLOCK (a timed sleep and a signal) and
// the app's thread was seized in such a sleep (nanosleep, clock_nanosleep,
// poll), the app's call is made again whole instead of resumed: exact for
// an absolute sleep, longer (never shorter) for a relative one
// (rpg_attach_start makes no such sleep on the caller's thread). A
// failed dlopen leaves its message as the thread's dlerror state, read by
// the injector's own dlerror call.
package inject
