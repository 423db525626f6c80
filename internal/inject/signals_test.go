package inject

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// sigqueue sends sig to pid with the value v (si_code SI_QUEUE).
func sigqueue(t *testing.T, pid int, sig syscall.Signal, v int32) {
	var si siginfo
	binary.LittleEndian.PutUint32(si[0:], uint32(sig))
	binary.LittleEndian.PutUint32(si[8:], uint32(0xffffffff)) // SI_QUEUE
	binary.LittleEndian.PutUint32(si[16:], uint32(os.Getpid()))
	binary.LittleEndian.PutUint32(si[20:], uint32(os.Getuid()))
	binary.LittleEndian.PutUint32(si[24:], uint32(v))
	_, _, e := unix.Syscall(unix.SYS_RT_SIGQUEUEINFO, uintptr(pid), uintptr(sig), uintptr(unsafe.Pointer(&si)))
	require.Zero(t, e)
}

// TestSignalsDuringTheCallAreDelivered: signals for the thread while it
// runs the injected calls (600 ms here) are held and delivered after its
// registers are restored, each once, a queued one with its siginfo; a
// SIGSTOP followed by a SIGCONT meanwhile leaves the process running, a
// SIGSTOP alone stops it once the injection is done.
func TestSignalsDuringTheCallAreDelivered(t *testing.T) {
	dir := t.TempDir()
	target := cc(t, dir, "target", "target.c", "-pthread")
	lib := cc(t, dir, "inj.so", "inj.c", "-shared", "-fPIC")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	mark := filepath.Join(dir, "mark")
	p := start(t, cmdOf(target, "signals", mark))
	waitSyscall(t, p.pid, p.pid, sysRead)
	go func() {
		time.Sleep(150 * time.Millisecond)
		sigqueue(t, p.pid, syscall.SIGUSR1, 1234)
		_ = unix.Tgkill(p.pid, p.pid, syscall.SIGUSR2)
		_ = syscall.Kill(p.pid, syscall.SIGSTOP)
		time.Sleep(100 * time.Millisecond)
		_ = syscall.Kill(p.pid, syscall.SIGCONT)
	}()
	rep := &Report{}
	ret, err := inject(ctx, p.pid, lib, "rpg_test_slow", mark, rep)
	require.NoError(t, err)
	require.Equal(t, 42, ret)
	require.Equal(t, "blocked in read", rep.How)
	marker(t, mark, p.pid)
	time.Sleep(50 * time.Millisecond)
	st, err := readStat(procPath(p.pid, "stat"))
	require.NoError(t, err)
	require.NotEqual(t, byte('T'), st.state, "stopped although continued after the stop")
	_, err = p.stdin.Write([]byte("report\n"))
	require.NoError(t, err)
	require.Equal(t, "usr1=1 code=-1 value=1234 after=1 usr2=1", p.line(t), "each signal once, after the call, SIGUSR1 with its siginfo")

	// A SIGSTOP alone: the process stops after the injection.
	mark2 := filepath.Join(dir, "mark2")
	waitSyscall(t, p.pid, p.pid, sysRead)
	go func() {
		time.Sleep(150 * time.Millisecond)
		_ = syscall.Kill(p.pid, syscall.SIGSTOP)
	}()
	ret, err = inject(ctx, p.pid, lib, "rpg_test_slow", mark2, rep)
	require.NoError(t, err)
	require.Equal(t, 42, ret)
	require.Eventually(t, func() bool {
		st, err := readStat(procPath(p.pid, "stat"))
		return err == nil && st.state == 'T'
	}, 5*time.Second, time.Millisecond, "the SIGSTOP sent during the call was lost")
	require.Zero(t, tracerOf(t, p.pid))
	require.NoError(t, syscall.Kill(p.pid, syscall.SIGCONT))
	_, err = p.stdin.Write([]byte("report\n"))
	require.NoError(t, err)
	require.Equal(t, "usr1=1 code=-1 value=1234 after=1 usr2=1", p.line(t))
}

// TestGroupStopDuringTheCall: the process is stopped (SIGSTOP, taken by
// its other, running thread) while the seized thread runs the injected
// call: the call completes, and on the detach the thread joins the
// group-stop, so the whole process is stopped as it was asked to be; it
// goes on with SIGCONT.
func TestGroupStopDuringTheCall(t *testing.T) {
	dir := t.TempDir()
	target := cc(t, dir, "target", "target.c", "-pthread")
	lib := cc(t, dir, "inj.so", "inj.c", "-shared", "-fPIC")
	p := start(t, cmdOf(target, "spinread"))
	tids, err := tasks(p.pid)
	require.NoError(t, err)
	require.Len(t, tids, 2)
	reader := tids[0] + tids[1] - p.pid
	waitSyscall(t, p.pid, reader, sysRead)

	go func() {
		time.Sleep(150 * time.Millisecond)
		_ = syscall.Kill(p.pid, syscall.SIGSTOP)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rep := &Report{}
	mark := filepath.Join(dir, "mark")
	ret, err := inject(ctx, p.pid, lib, "rpg_test_slow", mark, rep)
	require.NoError(t, err)
	require.Equal(t, 42, ret)
	require.Equal(t, reader, rep.TID)
	marker(t, mark, p.pid)
	for _, tid := range tids {
		require.Eventually(t, func() bool {
			st, err := readStat(procPath(p.pid, "task", itoa(tid), "stat"))
			return err == nil && st.state == 'T'
		}, 5*time.Second, time.Millisecond, "thread %d is not stopped", tid)
	}
	require.Zero(t, tracerOf(t, p.pid))
	require.NoError(t, syscall.Kill(p.pid, syscall.SIGCONT))
	_, err = p.stdin.Write([]byte("line\n"))
	require.NoError(t, err)
	require.Equal(t, "got line", p.line(t))
}

// TestLoadFailuresCarryTheTargetsDlerror: a file that is no library, and
// a library without the function, fail with the target's dlerror() text;
// the process goes on.
func TestLoadFailuresCarryTheTargetsDlerror(t *testing.T) {
	dir := t.TempDir()
	target := cc(t, dir, "target", "target.c", "-pthread")
	lib := cc(t, dir, "inj.so", "inj.c", "-shared", "-fPIC")
	bogus := filepath.Join(dir, "bogus.so")
	require.NoError(t, os.WriteFile(bogus, []byte("not an ELF file, long enough to have a header of sixty-four bytes..."), 0o644))
	p := start(t, cmdOf(target, "signals", "-"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	_, err := Inject(ctx, p.pid, bogus, "rpg_test_mark", "-")
	requireError(t, err, p.pid, "loading "+bogus+" in it failed: "+bogus+": invalid ELF header; check that the library's dependencies exist")

	_, err = Inject(ctx, p.pid, lib, "rpg_no_such_function", "-")
	requireError(t, err, p.pid, lib+" has no rpg_no_such_function: "+lib+": undefined symbol: rpg_no_such_function")

	require.Zero(t, tracerOf(t, p.pid))
	_, err = p.stdin.Write([]byte("report\n"))
	require.NoError(t, err)
	require.Equal(t, "usr1=0 code=0 value=0 after=0 usr2=0", p.line(t))
}

// TestSleepSurvivesAnInterruptedSleepInTheCall: the app's thread is seized
// in a 1 s nanosleep, and the injected code's own sleep is interrupted by
// signals (SIGWINCH, held and delivered after): that replaced the thread's
// one restart block, so the app's sleep is made again whole rather than
// resumed from the injected code's block; it lasts at least its second.
func TestSleepSurvivesAnInterruptedSleepInTheCall(t *testing.T) {
	dir := t.TempDir()
	target := cc(t, dir, "target", "target.c", "-pthread")
	lib := cc(t, dir, "inj.so", "inj.c", "-shared", "-fPIC")
	p := start(t, cmdOf(target, "nap"))
	waitSyscall(t, p.pid, p.pid, sysNanosleep)
	go func() {
		time.Sleep(150 * time.Millisecond)
		_ = unix.Tgkill(p.pid, p.pid, syscall.SIGWINCH)
		time.Sleep(100 * time.Millisecond)
		_ = unix.Tgkill(p.pid, p.pid, syscall.SIGWINCH)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rep := &Report{}
	ret, err := inject(ctx, p.pid, lib, "rpg_test_slow", filepath.Join(dir, "mark"), rep)
	require.NoError(t, err)
	require.Equal(t, 42, ret)
	require.Equal(t, "blocked in nanosleep", rep.How)
	var ms, r int
	_, err = fmt.Sscanf(p.line(t), "slept=%d ret=%d", &ms, &r)
	require.NoError(t, err)
	require.Zero(t, r)
	require.GreaterOrEqual(t, ms, 1000, "the app's sleep was cut short")
	require.Less(t, ms, 4000)
}
