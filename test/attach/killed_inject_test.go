package attachtest

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/stretchr/testify/require"
)

// TestCLIKilledDuringTheInjection: rocprof-go --attach is killed with
// SIGKILL as soon as the target maps the preload library (its dlopen or
// rpg_attach_start under way on the injected thread, run by the
// self-restoring trampoline), and, in a second round, 5 ms after it
// started (before or while it seizes a thread). Each time the target goes
// on: the library, when it was loaded, finds no rocprof-go and detaches
// by itself; the process is then as it was (no mapping of ours, threads,
// descriptors, handlers, not traced), and its output is that of a run
// nobody attached to.
func TestCLIKilledDuringTheInjection(t *testing.T) {
	rt := runtimeNamed(t, rocmmatrix.HostName)
	h := newHarness(t, rt)
	app := filepath.Join(rt.Apps, "attach_server")
	wantOut, wantErr := h.reference(t, app)

	s := h.start(t, app)
	before := states(t, s.pids())
	for round, early := range []bool{false, true} {
		out := filepath.Join(h.tmp, "out")
		cmd := h.rt.Command(t.Context(), h.cli, attachArgs(s.pid, 0, out, "killed", "csv")...)
		cmd.Env = h.cliEnv()
		cmd.Dir = h.tmp
		var errb syncBuffer
		cmd.Stderr = &errb
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		if early {
			time.Sleep(5 * time.Millisecond)
		} else {
			for deadline := time.Now().Add(runTimeout); !mapsPreload(s.pid) && time.Now().Before(deadline) && running(cmd.Process.Pid); {
				time.Sleep(time.Millisecond)
			}
			require.True(t, mapsPreload(s.pid), "round %d: the target never mapped the preload library; rocprof-go's stderr:\n%s", round, errb.String())
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()
		stdin.Close()
		detached(t, before)
		require.True(t, running(s.pid), "round %d: the target keeps running", round)
	}
	gotOut, gotErr := s.finish(t)
	require.Equal(t, wantOut, gotOut)
	require.Equal(t, wantErr, gotErr)
}
