package inject

import (
	"os"
	"strconv"
	"strings"
)

// x86-64 numbers of the system calls a thread may be stopped in for the
// call (doc.go: "Which thread").
const (
	sysRead           = 0
	sysPoll           = 7
	sysReadv          = 19
	sysSelect         = 23
	sysPause          = 34
	sysNanosleep      = 35
	sysAccept         = 43
	sysRecvfrom       = 45
	sysRecvmsg        = 47
	sysWait4          = 61
	sysRtSigtimedwait = 128
	sysRtSigsuspend   = 130
	sysClockNanosleep = 230
	sysEpollWait      = 232
	sysWaitid         = 247
	sysPselect6       = 270
	sysPpoll          = 271
	sysEpollPwait     = 281
	sysAccept4        = 288
	sysRecvmmsg       = 299
	sysEpollPwait2    = 441
)

// waitingSyscalls are the calls a thread makes when it waits for
// something outside the process and that no C library wrapper makes while
// it holds one of its locks. Futex waits are not among them: a thread
// waiting on a condition variable looks like one waiting on a mutex, and
// the loader lock and malloc's arenas are mutexes.
var waitingSyscalls = map[int]string{
	sysPoll: "poll", sysSelect: "select", sysPause: "pause", sysNanosleep: "nanosleep", sysAccept: "accept",
	sysWait4: "wait4", sysRtSigtimedwait: "rt_sigtimedwait", sysRtSigsuspend: "rt_sigsuspend",
	sysClockNanosleep: "clock_nanosleep", sysEpollWait: "epoll_wait", sysWaitid: "waitid",
	sysPselect6: "pselect6", sysPpoll: "ppoll", sysEpollPwait: "epoll_pwait", sysAccept4: "accept4",
	sysEpollPwait2: "epoll_pwait2",
	// Reads: only of a pipe, a socket, a terminal or an event file (fdWaits).
	sysRead: "read", sysReadv: "readv", sysRecvfrom: "recvfrom", sysRecvmsg: "recvmsg", sysRecvmmsg: "recvmmsg",
}

// safeSyscall reports whether a thread of pid in (or at) system call nr
// whose first argument is arg0 holds none of the C library's locks.
func safeSyscall(pid int, nr int64, arg0 uint64) bool {
	if nr < 0 {
		return false
	}
	if _, ok := waitingSyscalls[int(nr)]; !ok {
		return false
	}
	switch nr {
	case sysRead, sysReadv, sysRecvfrom, sysRecvmsg, sysRecvmmsg:
		return fdWaits(pid, int(int32(arg0)))
	}
	return true
}

// fdWaits reports whether fd of pid is a pipe, a socket, a terminal or an
// anonymous-inode file (eventfd, signalfd, timerfd): reading it waits for
// another party, not for a disk.
func fdWaits(pid, fd int) bool {
	if fd < 0 {
		return false
	}
	l, err := os.Readlink(procPath(pid, "fd", strconv.Itoa(fd)))
	if err != nil {
		return false
	}
	for _, p := range []string{"pipe:", "socket:", "anon_inode:", "/dev/pts/", "/dev/tty", "/dev/console"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// threadSyscall reads /proc/PID/task/TID/syscall: the system call the
// thread is blocked in and its first argument; ok false when it runs or
// waits outside a system call.
func threadSyscall(pid, tid int) (nr int64, arg0 uint64, ok bool) {
	b, err := os.ReadFile(procPath(pid, "task", strconv.Itoa(tid), "syscall"))
	if err != nil {
		return 0, 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, 0, false // "running"
	}
	nr, err = strconv.ParseInt(f[0], 10, 64)
	if err != nil || nr < 0 {
		return 0, 0, false
	}
	arg0, _ = strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
	return nr, arg0, true
}

// candidates orders pid's threads for the call: those blocked in a
// waiting system call first, then those running (they soon make some
// system call), then the ones asleep elsewhere (a futex: they may not
// wake for long). waiting[i] tells the first kind.
func candidates(pid int) (tids []int, waiting []bool, err error) {
	all, err := tasks(pid)
	if err != nil {
		return nil, nil, err
	}
	var safe, running, asleep []int
	for _, tid := range all {
		if nr, a0, ok := threadSyscall(pid, tid); ok && safeSyscall(pid, nr, a0) {
			safe = append(safe, tid)
			continue
		}
		if st, err := readStat(procPath(pid, "task", strconv.Itoa(tid), "stat")); err == nil && st.state == 'R' {
			running = append(running, tid)
		} else {
			asleep = append(asleep, tid)
		}
	}
	for range safe {
		waiting = append(waiting, true)
	}
	for range len(running) + len(asleep) {
		waiting = append(waiting, false)
	}
	return append(append(safe, running...), asleep...), waiting, nil
}
