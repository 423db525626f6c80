package reliability

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// caughtSignals is a process's SigCgt: the signals it has a handler for.
func caughtSignals(t testing.TB, pid int) uint64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "SigCgt:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			require.NoError(t, err)
			return m
		}
	}
	require.FailNow(t, "no SigCgt line", "/proc/%d/status", pid)
	return 0
}

// --disable-signal-handlers leaves the app's signals to the app, as with
// rocprofv3: the shim installs none of its fatal-signal handlers (seen in
// the traced app's SigCgt while it runs). Before, the option only set
// ROCPROF_SIGNAL_HANDLERS=0, which nothing read, and the handlers were
// installed anyway. (SIGSEGV, SIGBUS and SIGFPE are not looked at: the Go
// runtime of the cgo shim handles them and forwards what is not its own.)
func TestDisableSignalHandlersInstallsNone(t *testing.T) {
	t.Parallel()
	shims := []syscall.Signal{syscall.SIGABRT, syscall.SIGILL, syscall.SIGSYS, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}
	caught := func(m uint64, s syscall.Signal) bool { return m&(1<<(uint(s)-1)) != 0 }
	var seen []string
	for _, tc := range []struct {
		name string
		opts []string
		want bool
	}{
		{"default", traceOpts, true},
		{"disabled", append(append([]string{}, traceOpts...), "--disable-signal-handlers"), false},
	} {
		lines, wait := profiled{opts: tc.opts, argv: []string{app(t, "fault_progress"), "10", "120"}}.startWithProgress(t)
		pid, _ := waitProgress(t, lines, 20)
		m := caughtSignals(t, pid)
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
		drain(lines, 0)
		res := wait()
		require.Equal(t, 137, res.exit, "stderr:\n%s", res.stderr)
		var got []string
		for _, s := range shims {
			if caught(m, s) {
				got = append(got, s.String())
			}
			if tc.want {
				// SIGHUP and SIGQUIT are handled only while their
				// disposition is the default; the test's may not be.
				if s == syscall.SIGABRT || s == syscall.SIGTERM {
					require.True(t, caught(m, s), "%s: the shim handles %s (SigCgt %016x)", tc.name, s, m)
				}
				continue
			}
			require.False(t, caught(m, s), "%s: %s has a handler in the app (SigCgt %016x)", tc.name, s, m)
		}
		seen = append(seen, fmt.Sprintf("%s: SigCgt %016x, handled: %v", tc.name, m, got))
	}
	report(t, "%s", strings.Join(seen, "; "))
}
