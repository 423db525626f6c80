package reliability

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// drainRun is one rocprof-go run for the spool-drain tests (issue 43),
// with the command's own wrappers (namespace, cgroup).
type drainRun struct {
	exit           int
	stdout, stderr string
	peakShm        int64 // most bytes used in the run's /dev/shm, sampled
}

// runDrained runs rocprof-go with args and env, wrapped by wrap, sampling
// the used bytes of shm (a path as the process sees it, through
// /proc/PID/root) every 2 ms.
func runDrained(t *testing.T, args, env []string, wrap func(*exec.Cmd), shm string, onStdout func(string, *exec.Cmd)) drainRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli(t), args...)
	cmd.Env = append(os.Environ(), env...)
	if wrap != nil {
		wrap(cmd)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			var st unix.Statfs_t
			if shm != "" && unix.Statfs(filepath.Join("/proc", itoa(cmd.Process.Pid), "root", shm), &st) == nil {
				if used := int64(st.Blocks-st.Bfree) * st.Bsize; used > peak.Load() {
					peak.Store(used)
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	var stdout strings.Builder
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		stdout.WriteString(sc.Text() + "\n")
		if onStdout != nil {
			onStdout(sc.Text(), cmd)
		}
	}
	err = cmd.Wait()
	close(stop)
	<-sampled
	require.NoError(t, ctx.Err(), "rocprof-go did not finish: %s", errb.String())
	return drainRun{exit: exitCode(t, err), stdout: stdout.String(), stderr: errb.String(), peakShm: peak.Load()}
}

func itoa(n int) string { return strconv.Itoa(n) }

const drainCalls = 6000000 // 192 MB of 32-byte HIP records: three times the 64 MiB /dev/shm

// TestSpoolsDrainedUnderSmallShmAndMemoryCgroup: a HIP call loop at full
// speed (6M calls, ~190 MB of records in 1-2 s) with its spools in a
// private 64 MiB /dev/shm, rocprof-go and the app in a 512 MiB memory
// cgroup. The spools are drained to the output file system while the app
// runs: /dev/shm never holds more than the run's share (16 MiB, a quarter
// of it), the cgroup is not OOM-killed, and every record is either in the
// outputs or counted as dropped, with the run failing and saying why.
func TestSpoolsDrainedUnderSmallShmAndMemoryCgroup(t *testing.T) {
	const limit = 512 << 20
	cg := testsys.MemoryCgroup(t, limit)
	out := t.TempDir()
	r := runDrained(t, []string{"--virtual-gpu", "--hip-trace", "-f", "parquet", "-d", out, "--", app(t, "hip_calls_rate"), itoa(drainCalls)},
		[]string{"ROCPROF_GO_SPOOL_ROOT=/dev/shm"},
		func(cmd *exec.Cmd) {
			testsys.InMountNamespace(cmd, testsys.SmallDevShm)
			cg.Wrap(cmd)
		}, "/dev/shm", nil)
	report(t, "exit %d, /dev/shm peak %.1f MiB (sampled), cgroup peak %.0f MiB, OOM kills %d\n%s", r.exit,
		float64(r.peakShm)/(1<<20), float64(cg.Peak())/(1<<20), cg.OOMKills(), r.stderr)
	require.Zero(t, cg.OOMKills(), "the cgroup's memory ran out")
	require.LessOrEqual(t, cg.Peak(), int64(limit))
	const share = 16 << 20
	require.LessOrEqual(t, r.peakShm, int64(share), "the run's /dev/shm went past its share")
	m := readManifest(t, out)
	require.Len(t, m.Passes, 1)
	d := m.Passes[0].Drain
	require.NotNil(t, d, "the spools were not drained")
	require.Equal(t, int64(share), d.ShmShareBytes)
	require.LessOrEqual(t, d.PeakShmBytes, int64(share))
	require.Greater(t, d.BytesDrained, int64(100<<20), "drained while the app ran")
	require.Greater(t, m.AppExitToFinishS, 0.0)
	hip := m.DomainRecords["HIP_API"]
	var dropped uint64
	for _, l := range m.LostRecords {
		dropped += l.Dropped
		require.Contains(t, l.StoreError, "recording paused by rocprof-go")
	}
	require.GreaterOrEqual(t, uint64(hip)+dropped, uint64(drainCalls), "records neither kept nor counted")
	if dropped == 0 {
		require.Zero(t, r.exit, r.stderr)
		require.False(t, d.ShmLimited)
	} else {
		require.NotZero(t, r.exit)
		require.True(t, d.ShmLimited)
		require.Contains(t, r.stderr, "reached their share of /dev/shm (16 MiB, ROCPROF_GO_SHM_SHARE_MIB)")
		require.Contains(t, r.stderr, "records were not kept")
	}
	// Nothing left behind: the run's directory on the output file system
	// is gone with the run.
	left, err := filepath.Glob(filepath.Join(out, ".rocprof-go-unconverted-*"))
	require.NoError(t, err)
	require.Empty(t, left)
}

// TestOutputFileSystemFullStopsRecording: the output directory is a 256 MiB
// tmpfs that keeps a 160 MiB reserve for the outputs (their spill files
// included): once the drained
// spools would eat into it, recording stops for good, rocprof-go says so
// once, what was recorded is converted, the dropped records are counted,
// and the run fails.
func TestOutputFileSystemFullStopsRecording(t *testing.T) {
	out := testsys.SmallTmpfs(t, "256m")
	r := runDrained(t, []string{"--virtual-gpu", "--hip-trace", "-f", "parquet", "-d", out, "--", app(t, "hip_calls_rate"), itoa(drainCalls)},
		[]string{"ROCPROF_GO_SPOOL_ROOT=/dev/shm", "ROCPROF_GO_OUTPUT_RESERVE_MIB=160"},
		func(cmd *exec.Cmd) { testsys.InMountNamespace(cmd, testsys.SmallDevShm) }, "", nil)
	report(t, "exit %d\n%s", r.exit, r.stderr)
	require.NotZero(t, r.exit)
	require.Equal(t, 1, strings.Count(r.stderr, "the output file system is full"), r.stderr)
	require.Contains(t, r.stderr, "recording stopped: what was recorded is kept and converted")
	require.Contains(t, r.stderr, "the output file system would have been filled")
	m := readManifest(t, out)
	d := m.Passes[0].Drain
	require.NotNil(t, d)
	require.True(t, d.OutputFull)
	hip := m.DomainRecords["HIP_API"]
	require.Greater(t, hip, int64(100000), "what was recorded is converted")
	var dropped uint64
	for _, l := range m.LostRecords {
		dropped += l.Dropped
	}
	require.Greater(t, dropped, uint64(0))
	require.GreaterOrEqual(t, uint64(hip)+dropped, uint64(drainCalls))
	files, err := filepath.Glob(filepath.Join(out, "*", "*_hip_api.parquet"))
	require.NoError(t, err)
	require.Len(t, files, 1)
}

// TestSIGTERMWhileWritingKeepsSpoolsOnDisk: rocprof-go, sent SIGTERM twice
// while it writes the outputs, keeps the recorded data, and keeps it on the
// output file system, not in memory (the spool root, a tmpfs, holds no
// spool afterwards); the next run names the kept run once, the one after
// does not name it again.
func TestSIGTERMWhileWritingKeepsSpoolsOnDisk(t *testing.T) {
	spools := testsys.SmallTmpfs(t, "256m")
	out := t.TempDir()
	env := []string{"ROCPROF_GO_SPOOL_ROOT=" + spools}
	args := []string{"--virtual-gpu", "--hip-trace", "-f", "csv", "-d", out, "--", app(t, "hip_calls_rate"), "3000000"}
	r := runDrained(t, args, env, nil, "", func(line string, cmd *exec.Cmd) {
		if strings.HasPrefix(line, "calls=") { // the app is done: the outputs are being written
			time.Sleep(300 * time.Millisecond)
			_ = cmd.Process.Signal(syscall.SIGTERM)
			time.Sleep(50 * time.Millisecond)
			_ = cmd.Process.Signal(syscall.SIGTERM)
		}
	})
	report(t, "exit %d\n%s", r.exit, r.stderr)
	require.NotZero(t, r.exit)
	inMemory, err := filepath.Glob(filepath.Join(spools, "*", "*", "rpg-*.spool"))
	require.NoError(t, err)
	require.Empty(t, inMemory, "a spool was left in memory")
	kept, err := filepath.Glob(filepath.Join(out, ".rocprof-go-unconverted-*", "rocprof-go-run-*", "pass_1", "rpg-*.spool"))
	require.NoError(t, err)
	require.Len(t, kept, 1, "the spool is kept on the output file system")
	runDir := filepath.Dir(filepath.Dir(kept[0]))
	require.FileExists(t, filepath.Join(runDir, "kept"))

	small := []string{"--virtual-gpu", "--hip-trace", "-f", "csv", "-d", out, "--", app(t, "hip_calls_rate"), "1000"}
	next := runDrained(t, small, env, nil, "", nil)
	require.Zero(t, next.exit, next.stderr)
	require.Equal(t, 1, strings.Count(next.stderr, runDir+" holds 1 spools of an earlier run"), next.stderr)
	again := runDrained(t, small, env, nil, "", nil)
	require.Zero(t, again.exit, again.stderr)
	require.NotContains(t, again.stderr, runDir)
	require.FileExists(t, kept[0], "named, not removed: only the user knows whether it is still wanted")
}
