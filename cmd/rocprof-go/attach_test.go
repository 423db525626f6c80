package main

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/launch/launchtest"
)

// The attach options through the CLI: a usage error is one line and exit
// 2; a process that is gone is one line and exit 1, with nothing else
// said; --echo prints the attach plan and touches nothing.
func TestAttachCommandLine(t *testing.T) {
	lib := launchtest.FakeLibDir(t)
	env := []string{launch.LibDirEnv + "=" + lib, launch.SpoolRootEnv + "=" + t.TempDir()}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-p", "x1", "--kernel-trace"}, `option --attach: "x1" is not a process id`},
		{[]string{"--pid", "12", "--kernel-trace", "--", "./app"}, "option --attach: cannot be combined with an application command"},
	} {
		r := runCLI(t, env, tc.args...)
		require.Equal(t, 2, r.code, "%v: %s", tc.args, r.stderr)
		require.Contains(t, r.stderr, tc.want, tc.args)
		require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, "one line: %s", r.stderr)
	}

	gone := exec.Command("true")
	require.NoError(t, gone.Run())
	pid := strconv.Itoa(gone.ProcessState.Pid())
	r := runCLI(t, env, "--attach", pid, "--kernel-trace", "-d", t.TempDir())
	require.Equal(t, 1, r.code, r.stderr)
	require.Equal(t, "rocprof-go: error: cannot attach to PID "+pid+": no such process: check the pid (ps -p "+pid+")\n", r.stderr)

	r = runCLI(t, env, "-p", pid, "--hip-trace", "--attach-duration-msec", "1500", "--attach-children=no", "--echo")
	require.Equal(t, 0, r.code, r.stderr)
	for _, want := range []string{"attach:\n", "  process: PID " + pid + "\n", "  descendants: none (--attach-children=no)\n",
		"  detach: after 1500 ms, or on SIGINT/SIGTERM\n", "    hip-runtime-trace        on\n", "    ROCPROF_HIP_RUNTIME_API_TRACE=1\n"} {
		require.Contains(t, r.stdout, want)
	}
	require.NotContains(t, r.stdout, "LD_PRELOAD")
}
