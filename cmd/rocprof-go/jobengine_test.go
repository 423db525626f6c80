package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/jobgen"
	"github.com/rocprof-go/rocprof-go/internal/duckdb"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// aloneCLI is a copy of the CLI in a directory of its own (no engine
// beside it), in dir.
func aloneCLI(t *testing.T, dir string) string {
	t.Helper()
	alone := filepath.Join(dir, "rocprof-go")
	b, err := os.ReadFile(cliBinary)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(alone, b, 0o755))
	return alone
}

// engineEnv is the environment of a CLI that must use its embedded engine.
func engineEnv(extra ...string) []string {
	env := environWithout("XDG_", "TMPDIR=", "HOME=", duckdb.EnvVar+"=", "PATH=")
	return append(env, append([]string{"PATH=/usr/bin:/bin"}, extra...)...)
}

// job --imbalance runs its embedded engine when the library cache is
// refused (here a cache directory every user can write, without the
// sticky bit): from a private temporary directory in TMPDIR, removed
// afterwards, with a note. Before, the cache's refusal ended the command.
func TestJobImbalanceEngineWhenTheCacheIsRefused(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, jobgen.Write(dir, jobgen.Job{Ranks: 2, Dispatches: 4, Kernels: 1, SlowRank: -1, Parquet: true}))
	open := t.TempDir()
	require.NoError(t, os.Chmod(open, 0o777))
	tmp := t.TempDir()
	cmd := exec.Command(aloneCLI(t, t.TempDir()), "job", "--imbalance", "--format", "csv", dir)
	cmd.Env = engineEnv("XDG_CACHE_HOME="+open, "TMPDIR="+tmp, "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "rocprof-go: note: the DuckDB engine runs from a temporary directory in "+tmp+", removed afterwards: the library cache "+open)
	require.Regexp(t, `(?m)^kernel_000,\d+,1,1,\d+,1,1,4,2,`, string(out))
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	for _, e := range left {
		require.False(t, strings.HasPrefix(e.Name(), "rocprof-go-duckdb-"), "the temporary engine is removed: %s", e.Name())
	}
}

// When the engine can run nowhere (no HOME, /tmp and TMPDIR mounted
// noexec, no XDG_RUNTIME_DIR), job --imbalance says where it tried, why
// each failed, and what to set. The test's files are reached through a
// bind of /tmp made before /tmp is covered, in a private mount namespace.
func TestJobImbalanceEngineNowhereSaysWhatToSet(t *testing.T) {
	require.Equal(t, 0, os.Geteuid(), "this test mounts a noexec /tmp in a mount namespace: run it as root (CI does)")
	base := t.TempDir()
	require.True(t, strings.HasPrefix(base, "/tmp/"), "the test's directories are in /tmp (TMPDIR unset): %s", base)
	dir := filepath.Join(base, "job")
	require.NoError(t, jobgen.Write(dir, jobgen.Job{Ranks: 2, Dispatches: 4, Kernels: 1, SlowRank: -1, Parquet: true}))
	cli := aloneCLI(t, base)
	via := func(p string) string { return filepath.Join("/mnt", strings.TrimPrefix(p, "/tmp/")) }
	cmd := exec.Command(via(cli), "job", "--imbalance", "--format", "csv", via(dir))
	cmd.Env = engineEnv("TMPDIR=/tmp")
	testsys.InMountNamespace(cmd, `mount --bind /tmp /mnt && mount -t tmpfs -o noexec,mode=1777 rpg-noexec /tmp || exit 125`)
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	require.Equal(t, 1, cmd.ProcessState.ExitCode(), "%s", out)
	s := string(out)
	require.Contains(t, s, "job --imbalance found no place where the embedded DuckDB engine can run (the library cache: ")
	require.Contains(t, s, "/tmp: it cannot run there (the file system is mounted noexec)")
	require.Contains(t, s, "set XDG_CACHE_HOME (or TMPDIR) to a directory only you can write, on a file system mounted without noexec, or ROCPROF_GO_DUCKDB to a rocprof-go-duckdb executable")
}
