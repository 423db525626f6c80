package hosts

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// runTimeout bounds one run; it catches hangs on a loaded machine, it is
// not a speed check.
const runTimeout = 5 * time.Minute

// matrix is every ROCm runtime of the matrix, each checked as built.
func matrix(t testing.TB) []rocmmatrix.Runtime {
	rts, err := rocmmatrix.Ready(testsys.RepoRoot(t), testsys.BuildDir(t))
	require.NoError(t, err)
	// The tests' temporary directories (outputs, copies) must be visible
	// inside the roots, which bind /tmp but not another TMPDIR.
	if tmp, err := filepath.EvalSymlinks(os.TempDir()); err == nil && tmp != "/tmp" && !strings.HasPrefix(tmp, "/tmp/") {
		for i := range rts {
			rts[i] = rts[i].WithBinds(tmp)
		}
	}
	return rts
}

// baseEnv is the test's environment without what would steer the runs
// elsewhere: the virtual GPU's and the profiler's own settings, a library
// directory (the shipped binary's embedded libraries are what users run),
// and the names each case sets or removes itself.
func baseEnv(drop ...string) []string {
	var env []string
	for _, e := range os.Environ() {
		name, _, _ := strings.Cut(e, "=")
		keep := !strings.HasPrefix(name, "ROCPROF_") && name != "HSA_TOOLS_LIB" && name != "LD_PRELOAD"
		for _, d := range drop {
			keep = keep && name != d
		}
		if keep {
			env = append(env, e)
		}
	}
	return env
}

// outcome is how a command ended.
type outcome struct {
	code           int // exit code, or 128+signal as a shell says it
	stdout, stderr string
}

// run runs cmd to completion (killing its process group on a hang).
func run(t testing.TB, cmd *exec.Cmd) outcome {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	o := outcome{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() {
			o.code = 128 + int(ws.Signal())
		} else {
			o.code = ws.ExitStatus()
		}
	default:
		require.NoError(t, err, "%s", errb.String())
	}
	return o
}

// command is prog on runtime rt (inside its root for the 6.x/7.x entries),
// with a timeout and env as its whole environment.
func command(t testing.TB, rt rocmmatrix.Runtime, env []string, prog string, args ...string) *exec.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	t.Cleanup(cancel)
	cmd := rt.Command(ctx, prog, args...)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	return cmd
}

// profileArgs is the profiled run every case makes: the sample app with two
// streams and three rounds, its HIP calls, kernels and copies, written as CSV
// into out.
func profileArgs(rt rocmmatrix.Runtime, out string) []string {
	return []string{"--virtual-gpu", "--hip-trace", "--kernel-trace", "--memory-copy-trace", "-f", "csv",
		"-d", out, "-o", "run", "--", filepath.Join(rt.Apps, "multistream"), "2", "3"}
}

// manifest is what the checks read of run.json.
type manifest struct {
	ExitStatus    int              `json:"exit_status"`
	Error         string           `json:"error"`
	DomainRecords map[string]int64 `json:"domain_records"`
	LostDomains   []any            `json:"lost_domains"`
	LostRecords   []any            `json:"lost_records"`
	SkippedSpools []string         `json:"skipped_spools"`
}

// requireEveryRecord checks that a profiled run (profileArgs) exited 0 and
// kept every record: run.json reports no loss, and the kernel trace holds
// each of the app's 12 kernels (6 vadd, 6 scale) besides HIP's copy kernels.
func requireEveryRecord(t testing.TB, o outcome, out, what string) {
	t.Helper()
	require.Equal(t, 0, o.code, "%s: rocprof-go failed:\nstdout: %s\nstderr: %s", what, o.stdout, o.stderr)
	data, err := os.ReadFile(filepath.Join(out, "run.json"))
	require.NoError(t, err, "%s: %s", what, o.stderr)
	var m manifest
	require.NoError(t, json.Unmarshal(data, &m))
	require.Zero(t, m.ExitStatus, "%s: %s", what, data)
	require.Empty(t, m.Error, "%s", what)
	require.Empty(t, m.LostDomains, "%s: %s", what, data)
	require.Empty(t, m.LostRecords, "%s: %s", what, data)
	require.Empty(t, m.SkippedSpools, "%s: %s", what, data)
	for _, d := range []string{"KERNEL_DISPATCH", "HIP_API", "MEMORY_COPY"} {
		require.Positive(t, m.DomainRecords[d], "%s: no %s record: %s", what, d, data)
	}
	f, err := os.Open(filepath.Join(out, "run_kernel_trace.csv"))
	require.NoError(t, err, "%s", what)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	col := -1
	for i, h := range rows[0] {
		if h == "Kernel_Name" {
			col = i
		}
	}
	require.GreaterOrEqual(t, col, 0, "%s: no Kernel_Name column in %v", what, rows[0])
	names := map[string]int{}
	for _, r := range rows[1:] {
		names[r[col]]++
	}
	require.Equal(t, 6, names["vadd(float const*, float const*, float*, int)"], "%s: %v", what, names)
	require.Equal(t, 6, names["scale(float*, float, int)"], "%s: %v", what, names)
	require.EqualValues(t, len(rows)-1, m.DomainRecords["KERNEL_DISPATCH"], "%s: the CSV and run.json disagree", what)
}
