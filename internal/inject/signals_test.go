package inject

import (
	"context"
	"encoding/binary"
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
	rep := &report{}
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
