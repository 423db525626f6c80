package reliability

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// TestUnprofiledProcessesAreReported: a process of the app that cannot
// record — it changes its user before its first recorded call, runs in a
// private /dev/shm, or is exec'd with LD_PRELOAD removed — is counted in
// run.json's unprofiled_processes with its cause, fails the run, and the
// empty-domain notes do not claim the app made no call (issue 31). Before:
// exit 0, nothing in run.json, "the app made no ROCTx call".
func TestUnprofiledProcessesAreReported(t *testing.T) {
	fault := app(t, "fault_unprofiled")
	vgpu := artifact(t, "vgpu/librocprof-go-vgpu.so")
	uid, gid := testsys.SecondUser(t)
	cases := []struct {
		name   string
		opts   []string
		argv   []string
		env    []string
		cause  string
		reason string // in run.json's reason and on stderr
	}{
		// Markers only: with kernel or HIP tracing the preload library
		// records the HIP runtime's start-up (__hipRegisterFatBinary,
		// before main), so the spool exists before the app changes its user.
		{"setuid", []string{"--marker-trace"}, []string{fault, "setuid", fmt.Sprint(uid), fmt.Sprint(gid)}, nil,
			"spool_not_created", fmt.Sprintf("changed its user (setuid: uid %d, started as 0)", uid)},
		{"private-dev-shm", []string{"--marker-trace", "--kernel-trace"}, []string{"unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
			`mount -t tmpfs -o size=1m,mode=1777 rpg-private-shm /dev/shm && exec "$0"`, fault},
			[]string{"ROCPROF_GO_SPOOL_ROOT=/dev/shm"},
			"spool_not_created", "another mount namespace with its own /dev/shm"},
		{"ld-preload-unset", []string{"--marker-trace", "--kernel-trace"}, []string{"env", "-u", "LD_PRELOAD", "LD_PRELOAD=" + vgpu, fault}, nil,
			"profiler_removed", "with LD_PRELOAD or ROCPROF_GO_SPOOL_DIR removed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := profiled{opts: append(c.opts, "-f", "csv"), argv: c.argv, env: c.env}.run(t)
			require.Contains(t, res.stdout, "calls=done", "the app did not run: %s", res.stderr)
			pid := intField(t, res.stdout, "pid")
			require.NotEqual(t, 0, res.exit, "a run with an unprofiled process must fail: %s", res.stderr)
			m := readManifest(t, res.dir)
			require.Len(t, m.UnprofiledProcesses, 1, "run.json: %+v", m)
			p := m.UnprofiledProcesses[0]
			require.Equal(t, pid, p.PID)
			require.Equal(t, c.cause, p.Cause)
			require.Contains(t, p.Reason, c.reason)
			require.Contains(t, res.stderr, "could not be profiled")
			require.Contains(t, res.stderr, c.reason)
			require.NotContains(t, res.stderr, "the app made no ROCTx call")
			require.NotContains(t, res.stderr, "the app launched no kernel")
			t.Logf("RESULT unprofiled %s: exit %d, run.json %s: %s", c.name, res.exit, p.Cause, p.Reason)
		})
	}
}

// TestProfiledExecsAreNotReported: an exec that keeps the profiler's
// environment (a shell running the app) and a failed exec without it are
// not unprofiled processes.
func TestProfiledExecsAreNotReported(t *testing.T) {
	fault := app(t, "fault_unprofiled")
	res := profiled{opts: []string{"--marker-trace", "-f", "csv"}, argv: []string{"/bin/sh", "-c",
		`env -u LD_PRELOAD /nonexistent/program; exec "$0"`, fault}}.run(t)
	require.Equal(t, 0, res.exit, res.stderr)
	m := readManifest(t, res.dir)
	require.Empty(t, m.UnprofiledProcesses)
	require.False(t, strings.Contains(res.stderr, "could not be profiled"), res.stderr)
}
