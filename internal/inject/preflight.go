package inject

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// yamaScopePath is Yama's ptrace_scope sysctl (a variable so that the tests
// can give the mapping of each value on a kernel built without Yama).
var yamaScopePath = "/proc/sys/kernel/yama/ptrace_scope"

// target is what the checks learnt of the process: what Inject needs next.
type target struct {
	pid    int
	maps   []mapping
	loader *loader
}

// Preflight checks, without touching the target, that this process can
// inject lib into pid. It returns nil or an *Error whose Cause and Fix name
// the first obstacle.
func Preflight(pid int, lib string) error {
	_, err := preflight(pid, lib)
	if err != nil {
		return err
	}
	return nil
}

func preflight(pid int, lib string) (*target, *Error) {
	if pid <= 0 {
		return nil, &Error{PID: pid, Cause: "not a process id", Fix: "give the PID of a running process (ps -e lists them)"}
	}
	if pid == os.Getpid() {
		return nil, &Error{PID: pid, Cause: "it is rocprof-go itself", Fix: "give the PID of the application to profile"}
	}
	st, err := readStat(procPath(pid, "stat"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &Error{PID: pid, Cause: "no process has this PID", Fix: "check the PID (ps -p PID), the process may have ended", Err: err}
		}
		return nil, &Error{PID: pid, Cause: "its /proc entry cannot be read: " + err.Error(), Fix: "run rocprof-go where /proc shows the process (the same PID namespace)", Err: err}
	}
	switch st.state {
	case 'Z', 'X':
		return nil, &Error{PID: pid, Cause: fmt.Sprintf("it has exited (%s is a zombie waiting for its parent)", st.comm),
			Fix: "attach to a process that is still running"}
	case 'T':
		return nil, &Error{PID: pid, Cause: fmt.Sprintf("it is stopped (%s received SIGSTOP or SIGTSTP)", st.comm),
			Fix: fmt.Sprintf("resume it (kill -CONT %d) and attach again", pid)}
	}
	if !filepath.IsAbs(lib) {
		return nil, &Error{PID: pid, Cause: fmt.Sprintf("the profiler library path %q is not absolute", lib),
			Fix: "this is a bug of rocprof-go: report it"}
	}
	var libSt unix.Stat_t
	if err := unix.Stat(lib, &libSt); err != nil {
		return nil, &Error{PID: pid, Cause: fmt.Sprintf("the profiler library %s cannot be read: %v", lib, err),
			Fix: "reinstall rocprof-go (or run `make build`)", Err: err}
	}
	if e := checkPermission(pid, st); e != nil {
		return nil, e
	}
	if e := checkTracer(pid); e != nil {
		return nil, e
	}
	if e := checkExecutable(pid); e != nil {
		return nil, e
	}
	maps, err := readMaps(pid)
	if err != nil {
		if gone(err) {
			return nil, exitedError(pid, err)
		}
		return nil, &Error{PID: pid, Cause: "its memory map cannot be read: " + err.Error(),
			Fix: "run rocprof-go as the process's user or as root", Err: err}
	}
	ld, e := findLoader(pid, maps)
	if e != nil {
		return nil, e
	}
	if ld == nil {
		return nil, noLibc(pid, maps)
	}
	if e := checkLibrary(pid, lib, libSt); e != nil {
		return nil, e
	}
	return &target{pid: pid, maps: maps, loader: ld}, nil
}

// self describes this process's credentials as ptrace judges them.
type self struct {
	ruid, rgid int
	capPtrace  bool // CAP_SYS_PTRACE in the permitted and effective sets
	capPrm     uint64
	initUserNS bool
}

func readSelf() self {
	s := self{ruid: os.Getuid(), rgid: os.Getgid()}
	if m, err := readStatus("/proc/self/status"); err == nil {
		s.capPrm = capSet(m["CapPrm"])
		s.capPtrace = capSet(m["CapEff"])&(1<<capSysPtrace) != 0
	}
	b, err := os.ReadFile("/proc/self/uid_map")
	s.initUserNS = err == nil && strings.Join(strings.Fields(string(b)), " ") == "0 0 4294967295"
	return s
}

// checkPermission predicts the kernel's ptrace access check
// (ptrace_may_access for PTRACE_MODE_ATTACH_REALCREDS, then the capability
// and Yama hooks), each refusal with its own fix.
func checkPermission(pid int, st procStat) *Error {
	me := readSelf()
	status, err := readStatus(procPath(pid, "status"))
	if err != nil {
		if gone(err) {
			return exitedError(pid, err)
		}
		return &Error{PID: pid, Cause: "its status cannot be read: " + err.Error(), Fix: "run rocprof-go as the process's user or as root", Err: err}
	}
	uids, gids := ids(status["Uid"]), ids(status["Gid"])
	if !me.initUserNS {
		myNS, err1 := os.Readlink("/proc/self/ns/user")
		theirNS, err2 := os.Readlink(procPath(pid, "ns", "user"))
		if err1 != nil || err2 != nil || myNS != theirNS {
			return &Error{PID: pid, Cause: "rocprof-go runs in a user namespace (a container) without CAP_SYS_PTRACE over the process's namespace",
				Fix: "run rocprof-go in the process's own namespace (inside its container, or with nsenter) or on the host as root"}
		}
	}
	sameIDs := len(uids) >= 3 && len(gids) >= 3
	for _, u := range uids[:min(3, len(uids))] {
		sameIDs = sameIDs && u == me.ruid
	}
	for _, g := range gids[:min(3, len(gids))] {
		sameIDs = sameIDs && g == me.rgid
	}
	if !sameIDs && !me.capPtrace {
		owner := "another user"
		if len(uids) > 1 {
			owner = userName(uids[1])
		}
		return &Error{PID: pid, Cause: fmt.Sprintf("it belongs to %s and rocprof-go runs as %s without CAP_SYS_PTRACE", owner, userName(me.ruid)),
			Fix: "run rocprof-go as the process's user, or as root (sudo)"}
	}
	if sameIDs && !me.capPtrace {
		// A process that is not dumpable (set-user-ID or file capabilities,
		// prctl(PR_SET_DUMPABLE, 0)) has its /proc entry owned by root.
		var pst unix.Stat_t
		if unix.Stat(procPath(pid), &pst) == nil && int(pst.Uid) != me.ruid {
			return &Error{PID: pid, Cause: "it is not dumpable (a set-user-ID or file-capability program, or it called prctl(PR_SET_DUMPABLE, 0))",
				Fix: "run rocprof-go as root (or with CAP_SYS_PTRACE)"}
		}
		if prm := capSet(status["CapPrm"]); prm&^me.capPrm != 0 {
			return &Error{PID: pid, Cause: "it holds capabilities rocprof-go does not have",
				Fix: "run rocprof-go as root (or with CAP_SYS_PTRACE)"}
		}
	}
	return checkYama(pid, me)
}

// checkYama applies Yama's ptrace_scope: 0 classic permissions; 1 only
// ancestors (or a tracer the process named with PR_SET_PTRACER) unless
// CAP_SYS_PTRACE; 2 only CAP_SYS_PTRACE; 3 no attach at all.
func checkYama(pid int, me self) *Error {
	b, err := os.ReadFile(yamaScopePath)
	if err != nil {
		return nil // no Yama in this kernel
	}
	scope, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return nil
	}
	switch {
	case scope == 1 && !me.capPtrace && !isAncestorOf(os.Getpid(), pid):
		return &Error{PID: pid, Cause: "Yama ptrace_scope is 1: only a process's ancestors may attach to it",
			Fix: "run rocprof-go as root or with CAP_SYS_PTRACE, or allow attaching with `sysctl kernel.yama.ptrace_scope=0`"}
	case scope == 2 && !me.capPtrace:
		return &Error{PID: pid, Cause: "Yama ptrace_scope is 2: only an administrator (CAP_SYS_PTRACE) may attach",
			Fix: "run rocprof-go as root (sudo) or with CAP_SYS_PTRACE"}
	case scope >= 3:
		return &Error{PID: pid, Cause: "Yama ptrace_scope is 3: attaching is disabled until the next reboot",
			Fix: "start the application under rocprof-go instead (launch mode), or reboot with kernel.yama.ptrace_scope below 3"}
	}
	return nil
}

// isAncestorOf reports whether a is an ancestor of pid.
func isAncestorOf(a, pid int) bool {
	for i := 0; i < 4096 && pid > 1; i++ {
		st, err := readStat(procPath(pid, "stat"))
		if err != nil {
			return false
		}
		if st.ppid == a {
			return true
		}
		pid = st.ppid
	}
	return false
}

func userName(uid int) string {
	if b, err := os.ReadFile("/etc/passwd"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Split(line, ":")
			if len(f) > 2 && f[2] == strconv.Itoa(uid) {
				return fmt.Sprintf("user %s (uid %d)", f[0], uid)
			}
		}
	}
	return fmt.Sprintf("uid %d", uid)
}

// checkTracer refuses a process one of whose threads is already traced (a
// debugger, strace, another profiler): ptrace allows one tracer.
func checkTracer(pid int) *Error {
	tids, err := tasks(pid)
	if err != nil {
		if gone(err) {
			return exitedError(pid, err)
		}
		tids = []int{pid}
	}
	for _, tid := range tids {
		m, err := readStatus(procPath(pid, "task", strconv.Itoa(tid), "status"))
		if err != nil {
			continue
		}
		if tp, _ := strconv.Atoi(m["TracerPid"]); tp != 0 {
			who := strconv.Itoa(tp)
			if st, err := readStat(procPath(tp, "stat")); err == nil {
				who += " (" + st.comm + ")"
			}
			return &Error{PID: pid, Cause: "it is already traced by PID " + who + ", a debugger or another tracer",
				Fix: "detach that tracer (quit gdb or strace) and attach again"}
		}
	}
	return nil
}

// checkExecutable refuses a program that is not x86-64 (a 32-bit i386
// program, another architecture under emulation).
func checkExecutable(pid int) *Error {
	f, err := elf.Open(procPath(pid, "exe"))
	if err != nil {
		if gone(err) {
			return exitedError(pid, err)
		}
		var fe *elf.FormatError
		if errors.As(err, &fe) {
			return &Error{PID: pid, Cause: "its program is not an ELF file", Fix: "attach works with x86-64 Linux programs only", Err: err}
		}
		return &Error{PID: pid, Cause: "its program cannot be read: " + err.Error(), Fix: "run rocprof-go as the process's user or as root", Err: err}
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 {
		what := fmt.Sprintf("a %s %s program", f.Class, f.Machine)
		if f.Machine == elf.EM_386 {
			what = "a 32-bit i386 program"
		}
		return &Error{PID: pid, Cause: "it is " + what + ": only x86-64 processes can be profiled",
			Fix: "rebuild the application for x86-64"}
	}
	return nil
}

// noLibc says why a process without glibc mapped cannot load a library.
func noLibc(pid int, maps []mapping) *Error {
	hasInterp := false
	if f, err := elf.Open(procPath(pid, "exe")); err == nil {
		for _, p := range f.Progs {
			hasInterp = hasInterp || p.Type == elf.PT_INTERP
		}
		f.Close()
	}
	if !hasInterp {
		return &Error{PID: pid, Cause: "it is statically linked: it has no dynamic loader to load the profiler with",
			Fix: "relink the application dynamically (without -static)"}
	}
	for _, m := range maps {
		b := filepath.Base(m.path)
		if strings.HasPrefix(b, "ld-musl") || strings.HasPrefix(b, "libc.musl") {
			return &Error{PID: pid, Cause: "it uses the musl C library: the profiler is loaded with glibc's dlopen",
				Fix: "build the application against glibc"}
		}
	}
	return &Error{PID: pid, Cause: "it has no glibc (libc.so.6) loaded",
		Fix: "attach works with glibc-linked programs; start the application under rocprof-go instead (launch mode)"}
}

// checkLibrary requires lib to be the same file (device and inode) at the
// same path in the process's mount namespace: dlopen runs there.
func checkLibrary(pid int, lib string, want unix.Stat_t) *Error {
	var st unix.Stat_t
	err := unix.Stat(procPath(pid, "root")+lib, &st)
	if err == nil && st.Dev == want.Dev && st.Ino == want.Ino {
		return nil
	}
	if err != nil && gone(err) {
		if _, e := os.Stat(procPath(pid)); e != nil {
			return exitedError(pid, err)
		}
	}
	what := "a different file"
	if err != nil {
		what = "missing"
		if !errors.Is(err, syscall.ENOENT) {
			what = "unreadable (" + err.Error() + ")"
		}
	}
	return &Error{PID: pid, Cause: fmt.Sprintf("it runs in another mount namespace (a container) where %s is %s", lib, what),
		Fix: fmt.Sprintf("run rocprof-go inside that container, or bind-mount %s there at the same path", filepath.Dir(lib)), Err: err}
}
