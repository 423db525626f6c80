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
// # The call: a self-restoring trampoline
//
// The thread makes the call by itself, so that it completes and goes on
// correctly whenever rocprof-go dies (docs/attach-inject.md has the table
// of every window). Its code, trampoline/trampoline.S (assembled into
// trampoline_code_amd64.go, checked by TestTrampolineIsTheSource), is
// written through /proc/PID/mem into the unused tail of an executable
// segment (past the ELF segment's p_vaddr+p_memsz, to its page's end;
// libc's first): no mapping is made, so none is left. Its frame goes below
// the 128-byte red zone: the addresses of glibc's dlopen, dlsym, dlerror,
// dlclose and __errno_location (dlopen@@GLIBC_2.34 in libc.so.6, else a
// loaded libdl.so.2's, else __libc_dlopen_mode; from /proc/PID/maps and
// the ELF dynamic symbols of the mapped file, read through /proc/PID/root,
// checked to be the mapped inode, or /proc/PID/map_files), the strings,
// and a ucontext of the app's registers as they must be when the thread
// goes on. One PTRACE_SETREGS points rip at the trampoline, rsp at the
// frame, orig_rax -1 (no restart of the interrupted call into it).
//
// The trampoline blocks the thread's signals but the synchronous ones and
// glibc's SIGSETXID (a setuid() of another thread waits for every thread
// to take it while holding the lock pthread_create needs; a blocked
// fault's handler would be reset by the kernel), the old mask going into
// the ucontext; records the alternate signal stack; saves the extended
// state with XSAVE (the features of XCR0 but AMX's, the size from CPUID
// leaf 0xD, 64-byte aligned, with the software bytes and magic words of
// a signal frame; FXSAVE without OSXSAVE) and errno; calls dlopen, dlsym
// and the function; writes the results (and dlerror()'s text) into the
// frame; puts errno back; waits at most resultWait for the tracer to read
// them (the frame is free stack the app reuses once the thread goes on):
// rt_sigtimedwait on an empty set, which the tracer's PTRACE_INTERRUPT ends
// with EINTR and no restart; and ends with rt_sigreturn on the ucontext,
// which puts back the registers, flags, signal mask, alternate stack and
// extended state in one system call.
//
// The app's interrupted system call is made again as the kernel would
// when no handler runs: -ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND
// are made again (rip on the syscall instruction, rax its number), so a
// read returns the data written later. -ERESTART_RESTARTBLOCK (a timed
// sleep, poll) is made again whole rather than resumed with
// restart_syscall: the thread's one restart block does not survive the
// call (each nanosleep resets it at its entry, rt_sigreturn too), and
// restart_syscall would fail the app's call with EINTR; exact for an
// absolute sleep, longer (never shorter) for a relative one. A waiting
// call the interrupt cut short with EINTR (epoll_wait does) is made again
// the same way as at an entry.
//
// The tracer only watches. It lets the thread run (PTRACE_CONT), passes
// on the signals it takes (those the mask lets through) and group-stops,
// reads the frame's state every watchPoll; when the results are there, it
// stops the thread in the trampoline, reads them, marks them read and
// lets it go; it stops the thread again once it is out of the trampoline
// (and not in a signal handler run from it, on the stack below the
// frame), writes the tail's zeros back and detaches. A fault of the call
// (SIGSEGV, SIGBUS, SIGILL, SIGFPE) is not delivered: the tracer puts the
// thread back itself (registers, XSAVE area, signal mask by
// PTRACE_SETSIGMASK, errno) and reports it.
//
// # Signals, stops, exits
//
// Before the thread is changed, a signal it stops for is delivered as it
// came. During the call the signals it blocks stay pending, each with its
// siginfo, and are delivered after rt_sigreturn; process-directed ones may
// go to another thread meanwhile, as the kernel chooses. A SIGSTOP stops
// the process (the tracer lets the thread go on through the group-stop);
// on the detach the kernel puts the thread back into it. A process that
// exits is reported as such; its exit status is only peeked at (WNOWAIT)
// and stays its parent's. A tracee's stop sends the tracer SIGCHLD: the
// waits wake on it (signal.Notify) rather than polling, so a thread is
// held no longer than the tracer takes to answer. All ptrace requests come
// from one locked OS thread that is never unlocked: when Inject returns
// the thread ends, and any ptrace link an unforeseen path left ends with
// it.
//
// # Limits
//
// Once the thread runs the call, ctx no longer bounds it: cutting dlopen
// short would leave the loader's lock held. If rocprof-go is killed the
// thread completes the call alone (the library then finds no rocprof-go
// at the socket and detaches itself); after waiting resultWait when the
// results were not read. The trampoline's bytes then stay in the segment
// tail, never executed again, and the next injection writes its own over
// them and the zeros back. The bytes written below the stack pointer are
// left there (below rsp, no code reads them). A signal whose handler was
// installed without SA_RESTART that comes during the call is handled after
// it, and the app's interrupted call is made again rather than failing
// with EINTR. A failed dlopen leaves its message as the thread's dlerror
// state, copied by the trampoline.
package inject
