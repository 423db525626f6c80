package inject

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestInjectUnderMallocAndDlopenStorm: 64 threads malloc/free and
// dlopen/dlclose a library without rest while 20 injections in a row
// load another library and call it; no thread waits in a system call for
// long (the main thread is in pthread_join, a futex), so each injection
// follows a thread to a poll. Every injection returns within its bound,
// the target then stops its threads and exits 0: nothing deadlocked. The
// whole test is bounded (a hang fails it, the target killed).
func TestInjectUnderMallocAndDlopenStorm(t *testing.T) {
	dir := t.TempDir()
	hammer := cc(t, dir, "hammer", "hammer.c", "-pthread", "-ldl")
	small := cc(t, dir, "small.so", "small.c", "-shared", "-fPIC")
	lib := cc(t, dir, "inj.so", "inj.c", "-shared", "-fPIC")
	stop := filepath.Join(dir, "stop")
	p := start(t, cmdOf(hammer, small, stop))

	const rounds = 20
	done := make(chan error, 1)
	hows := map[string]int{}
	var took []time.Duration
	var maxHeld time.Duration
	go func() {
		done <- func() error {
			for i := range rounds {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				rep := &Report{}
				mark := filepath.Join(dir, fmt.Sprintf("mark-%d", i))
				t0 := time.Now()
				ret, err := inject(ctx, p.pid, lib, "rpg_test_mark", mark, rep)
				cancel()
				if err != nil {
					return fmt.Errorf("injection %d: %w", i, err)
				}
				if ret != 42 {
					return fmt.Errorf("injection %d returned %d", i, ret)
				}
				b, err := os.ReadFile(mark)
				if err != nil || string(b) != fmt.Sprintf("marked %s pid=%d\n", mark, p.pid) {
					return fmt.Errorf("injection %d: marker %q, %v", i, b, err)
				}
				took = append(took, time.Since(t0))
				maxHeld = max(maxHeld, rep.Held)
				hows[strings.TrimSuffix(rep.How, " (made again)")]++
			}
			return nil
		}()
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Minute):
		_ = p.cmd.Process.Kill()
		t.Fatal("20 injections did not finish within 5 minutes: a deadlock")
	}
	t.Logf("20 injections: %v; the threads' points: %v; longest hold of a thread %s", took, hows, maxHeld)
	require.Zero(t, tracerOf(t, p.pid))

	require.NoError(t, os.WriteFile(stop, nil, 0o644))
	exited := make(chan error, 1)
	go func() {
		l := p.line(t)
		require.True(t, strings.HasPrefix(l, "done "), l)
		exited <- p.cmd.Wait()
	}()
	select {
	case err := <-exited:
		require.NoError(t, err, "the target did not exit cleanly after the injections")
	case <-time.After(60 * time.Second):
		t.Fatal("the target's threads did not stop within 60 s after the injections: a deadlock")
	}
}
