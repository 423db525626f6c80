package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

func csvRows(t *testing.T, path string) int {
	t.Helper()
	return len(readCSVFile(t, path)) - 1
}

// A spool file system that fills up during the run (a container's small
// /dev/shm) loses records: the run says exactly how many, records them in
// run.json, and fails; what was kept plus what was lost is what the app did.
// The same on a file system without fallocate (a FUSE mount such as bindfs,
// or NFSv3) over a store that fills: there the recorder reserves each
// segment by writing it, so the records it could not store are counted as
// dropped instead of vanishing when their pages are written back (before:
// exit 0, about a fifth of the calls missing without a word). The spools
// the run kept say so again when converted.
func TestFullSpoolFileSystemIsReportedExactly(t *testing.T) {
	app, err := filepath.Abs(filepath.Join("..", "..", "build", "testdata", "hip_calls_rate"))
	require.NoError(t, err)
	const calls = "1000000"
	run := func(env ...string) (cliResult, string) {
		out := t.TempDir()
		r := runCLI(t, append([]string{builtLibs(t)}, env...), "--virtual-gpu", "--hip-runtime-trace", "-f", "csv",
			"-d", out, "-o", "run", "--", app, calls)
		return r, out
	}
	// Room enough: the app's total.
	r, out := run()
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	total := csvRows(t, filepath.Join(out, "run_hip_api_trace.csv"))
	require.Greater(t, total, 1000000)

	for _, fs := range []struct {
		name  string
		mount func(tmpfs string) string
	}{
		{"tmpfs", func(tmpfs string) string { return tmpfs }},
		{"bindfs-without-fallocate", func(tmpfs string) string { return testsys.Bindfs(t, tmpfs) }},
	} {
		t.Run(fs.name, func(t *testing.T) {
			// 20 MiB: passes the start check, fills after about half the calls.
			small := testsys.SmallTmpfs(t, "20m")
			root := fs.mount(small)
			keep := t.TempDir()
			// Undrained: a spool root in memory is otherwise drained to the
			// output file system under its share of the tmpfs, and the
			// recorders pause at the share instead of meeting ENOSPC
			// (test/reliability's drain tests cover that path).
			r, out := run("ROCPROF_GO_SPOOL_ROOT="+root, launch.KeepSpoolsEnv+"="+keep, launch.DrainEnv+"=0")
			require.Equal(t, 1, r.code, "stderr: %s", r.stderr)
			require.Contains(t, r.stderr, "rocprof-go: error: records were not kept:")
			require.Regexp(t, `pid \d+: \d+ dropped by the recorder \(its spool could not grow: no space left on device \(errno 28\)\)`, r.stderr)
			require.Contains(t, r.stderr, "ROCPROF_GO_SPOOL_ROOT=DIR")
			require.Equal(t, fs.name != "tmpfs", strings.Contains(r.stderr, "cannot reserve space (it has no fallocate"), "the note on a file system without fallocate, only there")
			kept := csvRows(t, filepath.Join(out, "run_hip_api_trace.csv"))
			raw, err := os.ReadFile(filepath.Join(out, "run.json"))
			require.NoError(t, err)
			var m struct {
				ExitStatus int    `json:"exit_status"`
				Error      string `json:"error"`
				Lost       []struct {
					PID        int    `json:"pid"`
					Dropped    uint64 `json:"dropped"`
					LostChunks uint64 `json:"lost_chunks"`
					StoreError string `json:"store_error"`
				} `json:"lost_records"`
			}
			require.NoError(t, json.Unmarshal(raw, &m))
			require.Equal(t, 0, m.ExitStatus, "the app itself succeeded")
			require.Contains(t, m.Error, "records were not kept")
			require.Len(t, m.Lost, 1)
			require.Greater(t, m.Lost[0].Dropped, uint64(0))
			require.Zero(t, m.Lost[0].LostChunks, "nothing written was lost by the file system")
			require.Equal(t, "no space left on device (errno 28)", m.Lost[0].StoreError)
			require.Greater(t, kept, 0)
			require.Equal(t, total, kept+int(m.Lost[0].Dropped), "kept + dropped = every call the app made")
			t.Logf("%s: kept %d, dropped %d of %d", fs.name, kept, m.Lost[0].Dropped, total)
			entries, err := os.ReadDir(small)
			require.NoError(t, err)
			require.Empty(t, entries, "the run's spool directory is removed")

			// The kept spools, converted, say the same and fail.
			conv := t.TempDir()
			c := runCLI(t, nil, "convert", "-i", filepath.Join(keep, "pass_1"), "-f", "csv", "-d", conv, "-o", "run")
			require.Equal(t, 1, c.code, "stderr: %s", c.stderr)
			require.Contains(t, c.stderr, "records were not kept when the app ran")
			require.Contains(t, c.stderr, fmt.Sprintf("%d dropped by the recorder (its spool could not grow: no space left on device (errno 28))", m.Lost[0].Dropped))
			require.Equal(t, kept, csvRows(t, filepath.Join(conv, "run_hip_api_trace.csv")), "convert writes every record kept")
		})
	}
}

// A spool file system without room for even the first spools stops the run
// before the app starts, naming the fix.
func TestSpoolFileSystemWithoutRoomIsRefused(t *testing.T) {
	small := testsys.SmallTmpfs(t, "8m")
	out := t.TempDir()
	r := runCLI(t, []string{builtLibs(t), "ROCPROF_GO_SPOOL_ROOT=" + small}, "--hip-runtime-trace", "-d", out, "--", "echo", "ran")
	require.Equal(t, 1, r.code, "stderr: %s", r.stderr)
	require.Regexp(t, `rocprof-go: error: the spool file system `+small+` has only \d+ KiB free: free space there, or put the spools elsewhere with ROCPROF_GO_SPOOL_ROOT=DIR`, r.stderr)
	require.NotContains(t, r.stdout, "ran", "the app did not start")
}

// A spool file that cannot be read (here an empty one, as a process leaves
// when its spool's first segment could not be allocated) is not skipped
// quietly: the run names it, lists it in run.json and fails.
func TestUnreadableSpoolIsReported(t *testing.T) {
	out := t.TempDir()
	r := runCLI(t, []string{builtLibs(t)}, "--hip-runtime-trace", "-f", "csv", "-d", out, "-o", "run", "--",
		"sh", "-c", `: > "$ROCPROF_GO_SPOOL_DIR/rpg-99999-1-0.spool"`)
	require.Equal(t, 1, r.code, "stderr: %s", r.stderr)
	require.Regexp(t, `rocprof-go: error: records were not kept:\n  spool \S+/rpg-99999-1-0.spool: .* \(unreadable: every record of that process\)`, r.stderr)
	raw, err := os.ReadFile(filepath.Join(out, "run.json"))
	require.NoError(t, err)
	var m struct {
		Skipped []string `json:"skipped_spools"`
	}
	require.NoError(t, json.Unmarshal(raw, &m))
	require.Len(t, m.Skipped, 1)
	require.Contains(t, m.Skipped[0], "rpg-99999-1-0.spool")
}

// A spool root without fallocate (bindfs over a tmpfs with room): every
// runtime of the matrix records through the recorder's reserve-by-writing
// path, its HSA-side records (kernels, from the shim) and HIP calls alike,
// and the run keeps every record.
func TestSpoolWithoutFallocateOnEveryRuntime(t *testing.T) {
	cli := shippedBinary(t)
	root := testsys.Bindfs(t, testsys.SmallTmpfs(t, "256m"))
	probe := filepath.Join(root, "probe")
	f, err := os.Create(probe)
	require.NoError(t, err)
	require.ErrorIs(t, syscall.Fallocate(int(f.Fd()), 0, 0, 4096), syscall.EOPNOTSUPP, "the spool root has no fallocate")
	require.NoError(t, f.Close())
	require.NoError(t, os.Remove(probe))
	onRuntimes(t, nil, func(t *testing.T, rt rocmmatrix.Runtime, cache string) {
		out := t.TempDir()
		stderr, code := shippedOnRuntime(t, rt, cli, cache, 5*time.Minute, []string{"ROCPROF_GO_SPOOL_ROOT=" + root},
			"--virtual-gpu", "--kernel-trace", "--hip-runtime-trace", "-f", "csv", "-d", out, "-o", "run", "--",
			filepath.Join(rt.Apps, "multistream"), "2", "3")
		require.Equal(t, 0, code, "ROCm %s: %s", rt.Name, stderr)
		require.Regexp(t, `rocprof-go: note: the spool file system of `+root+`/rocprof-go-run-\S+ cannot reserve space \(it has no fallocate: FUSE or NFS\): each 4 MiB of a spool is reserved by writing it, which slows the recording; spools on a local tmpfs are faster \(ROCPROF_GO_SPOOL_ROOT=DIR\)`, stderr)
		names, _ := kernelNames(t, filepath.Join(out, "run_kernel_trace.csv"))
		require.Equal(t, 6, names["vadd(float const*, float const*, float*, int)"], "ROCm %s: %v", rt.Name, names)
		require.Equal(t, 6, names["scale(float*, float, int)"], "ROCm %s: %v", rt.Name, names)
		require.Greater(t, csvRows(t, filepath.Join(out, "run_hip_api_trace.csv")), 12, "ROCm %s", rt.Name)
		raw, err := os.ReadFile(filepath.Join(out, "run.json"))
		require.NoError(t, err)
		require.NotContains(t, string(raw), `"lost_records"`, "ROCm %s", rt.Name)
		entries, err := os.ReadDir(root)
		require.NoError(t, err)
		require.Empty(t, entries, "ROCm %s: the run's spool directory is removed", rt.Name)
	})
}
