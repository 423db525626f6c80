package main

import (
	"fmt"
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

// job --imbalance runs the DuckDB engine (here: named by
// ROCPROF_GO_DUCKDB, then the one the CLI embeds) on a 4-rank job's hive
// Parquet; --print-query prints the SQL it runs.
func TestJobImbalance(t *testing.T) {
	dir := t.TempDir()
	j := jobgen.Job{Ranks: 4, Dispatches: 20, Kernels: 2, RanksPerHost: 2, SlowRank: 3, SlowNs: 1000, Parquet: true}
	require.NoError(t, jobgen.Write(dir, j))
	engine := duckdb.EnvVar + "=" + testsys.Artifact(t, duckdb.Name)

	r := runCLI(t, []string{engine}, "job", "--imbalance", "--format", "csv", dir)
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 5)
	// kernel_000 in its second shape: 5 dispatches of 1,500 ns + 3 ns per
	// rank on each rank, 1,000 ns more per dispatch on rank 3 (node1).
	require.Equal(t, fmt.Sprintf("kernel_000,8192,1,1,128,1,1,20,4,%d,7500,7522.5,12545,3,node1,1.6677",
		4*7500+5*3*(0+1+2+3)+5000), lines[1])

	r = runCLI(t, []string{engine}, "job", "--imbalance", dir)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "across 4 ranks")
	require.Contains(t, r.stdout, "3 (node1)")

	r = runCLI(t, []string{engine}, "job", "--imbalance", "--print-query", dir)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "read_parquet('"+filepath.Join(dir, "domain=kernels", "**", "*.parquet")+"', hive_partitioning = true)")

	// The engine the CLI embeds: a copy of rocprof-go alone (no engine
	// beside it or in PATH) unpacks it into its library cache and runs it.
	alone := filepath.Join(t.TempDir(), "rocprof-go")
	b, err := os.ReadFile(cliBinary)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(alone, b, 0o755))
	cache := t.TempDir()
	cmd := exec.Command(alone, "job", "--imbalance", "--format", "csv", dir)
	cmd.Env = append(os.Environ(), duckdb.EnvVar+"=", "XDG_CACHE_HOME="+cache, "PATH=/usr/bin:/bin")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), lines[1])
	unpacked, _ := filepath.Glob(filepath.Join(cache, "rocprof-go", "tool-*", duckdb.Name))
	require.Len(t, unpacked, 1, "the embedded engine, unpacked into the cache")

	r = runCLI(t, nil, "job", "--format", "csv", dir)
	require.Equal(t, 2, r.code, r.stderr)
	r = runCLI(t, []string{engine}, "job", "--imbalance", t.TempDir())
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "--parquet-hive")
}
