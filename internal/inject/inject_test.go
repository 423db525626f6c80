package inject

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestInjectKeepsTheThreadExact: the library is loaded and its function
// called on the main thread blocked in read() on a pipe, then in
// nanosleep(); the thread's vector registers (ymm0-15, and zmm16/17/24/31
// with AVX-512), live across each system call, come back exact although
// the library's code clobbers them, and so is its errno; the read still returns the data
// written after the injection, the sleep lasts its full second, another
// thread computes the same sum as without injection, the target exits 0.
func TestInjectKeepsTheThreadExact(t *testing.T) {
	dir := t.TempDir()
	target := cc(t, dir, "target", "target.c", "-pthread")
	lib := cc(t, dir, "inj.so", "inj.c", "-shared", "-fPIC")

	ref, err := runOut(target, "compute")
	require.NoError(t, err)

	p := start(t, cmdOf(target, "regs"))
	waitSyscall(t, p.pid, p.pid, sysRead)

	rep := &Report{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	mark := filepath.Join(dir, "mark-read")
	t0 := time.Now()
	ret, err := inject(ctx, p.pid, lib, "rpg_test_mark", mark, rep)
	t.Logf("injection in read: %s, %+v", time.Since(t0), rep)
	require.NoError(t, err)
	require.Equal(t, 42, ret)
	require.Equal(t, p.pid, rep.TID)
	require.Equal(t, "blocked in read", rep.How)
	marker(t, mark, p.pid)
	require.Zero(t, tracerOf(t, p.pid), "still traced after Inject")

	_, err = p.stdin.Write([]byte("hello\n"))
	require.NoError(t, err)
	require.Equal(t, "read=6 hello vectors=intact errno=1234", p.line(t), "the thread's registers and errno")

	require.Equal(t, "sleeping", p.line(t))
	waitSyscall(t, p.pid, p.pid, sysNanosleep)
	time.Sleep(200 * time.Millisecond)
	mark = filepath.Join(dir, "mark-sleep")
	ret, err = inject(ctx, p.pid, lib, "rpg_test_mark", mark, rep)
	require.NoError(t, err)
	require.Equal(t, 42, ret)
	require.Equal(t, "blocked in nanosleep", rep.How)
	marker(t, mark, p.pid)

	slept := p.line(t)
	f := strings.Fields(slept)
	require.Len(t, f, 3, slept)
	ms, err := strconv.Atoi(strings.TrimPrefix(f[0], "slept="))
	require.NoError(t, err, slept)
	require.GreaterOrEqual(t, ms, 1000, "the sleep was cut short")
	require.Less(t, ms, 5000)
	require.Equal(t, "ret=0 vectors=intact", f[1]+" "+f[2])
	require.Equal(t, strings.TrimSpace(ref), p.line(t))
	require.NoError(t, p.cmd.Wait())
}

// TestThreadWithASmallStackIsPassedOver: a thread blocked in read() whose
// stack has 20 KiB is not used for the calls (dlopen and the library's
// constructors need more); the main thread, followed to its nanosleep, is.
func TestThreadWithASmallStackIsPassedOver(t *testing.T) {
	dir := t.TempDir()
	target := cc(t, dir, "target", "target.c", "-pthread")
	lib := cc(t, dir, "inj.so", "inj.c", "-shared", "-fPIC")
	p := start(t, cmdOf(target, "smallstack"))
	tids, err := tasks(p.pid)
	require.NoError(t, err)
	require.Len(t, tids, 2)
	small := tids[0] + tids[1] - p.pid
	waitSyscall(t, p.pid, small, sysRead)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rep := &Report{}
	mark := filepath.Join(dir, "mark")
	ret, err := inject(ctx, p.pid, lib, "rpg_test_mark", mark, rep)
	require.NoError(t, err)
	require.Equal(t, 42, ret)
	require.Equal(t, p.pid, rep.TID, "the small stack's thread was used (%s)", rep.How)
	require.Contains(t, rep.How, "nanosleep")
	marker(t, mark, p.pid)
}

// TestConcurrentInjections: four processes injected at once from four
// goroutines (as the workers of a process tree are), each by its own
// tracer thread, all sharing the SIGCHLD wake-ups.
func TestConcurrentInjections(t *testing.T) {
	dir := t.TempDir()
	target := cc(t, dir, "target", "target.c", "-pthread")
	lib := cc(t, dir, "inj.so", "inj.c", "-shared", "-fPIC")
	var ps []*proc
	for range 4 {
		ps = append(ps, start(t, cmdOf(target, "smallstack")))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	errs := make(chan error, len(ps))
	for i, p := range ps {
		go func() {
			ret, err := Inject(ctx, p.pid, lib, "rpg_test_mark", filepath.Join(dir, "mark-"+strconv.Itoa(i)))
			if err == nil && ret != 42 {
				err = fmt.Errorf("PID %d: returned %d", p.pid, ret)
			}
			errs <- err
		}()
	}
	for range ps {
		require.NoError(t, <-errs)
	}
	for i, p := range ps {
		marker(t, filepath.Join(dir, "mark-"+strconv.Itoa(i)), p.pid)
		require.Zero(t, tracerOf(t, p.pid))
	}
}
