package jobscale

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/jobgen"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// job is the benchmark's job: ROCPROF_JOB_DIR when it holds one already
// (generation takes minutes), else generated there or in a temporary
// directory.
func job(b *testing.B) (string, jobgen.Job) {
	j := jobgen.Job{Ranks: envInt("ROCPROF_JOB_RANKS", 2000), Dispatches: envInt("ROCPROF_JOB_DISPATCHES", 10_000),
		Kernels: 50, RanksPerHost: 8, SlowRank: 1234 % envInt("ROCPROF_JOB_RANKS", 2000), SlowNs: 5000, Parquet: true, ROCpd: true}
	dir := os.Getenv("ROCPROF_JOB_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	last := filepath.Join(dir, strconv.Itoa(j.Ranks-1)+"_results.db")
	if _, err := os.Stat(last); err != nil {
		start := time.Now()
		require.NoError(b, jobgen.Write(dir, j))
		b.Logf("generated %d ranks x %d dispatches in %s", j.Ranks, j.Dispatches, time.Since(start).Round(time.Second))
	}
	return dir, j
}

// run runs the CLI and reports its wall time and peak RSS (of the CLI and
// of the children it waited for: DuckDB's engine).
func run(b *testing.B, name string, args ...string) {
	cli := testsys.Artifact(b, "rocprof-go")
	testsys.Artifact(b, "rocprof-go-duckdb")
	cmd := exec.Command(cli, args...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if ee, ok := err.(*exec.ExitError); ok && name == "compare" && ee.ExitCode() == 3 {
		err = nil // a regression found is an answer
	}
	require.NoError(b, err, "%s: %s", name, stderr.String())
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB
	b.Logf("%-10s wall %8.1f s  peak RSS %6.0f MiB  (%d bytes of output)", name, wall.Seconds(), float64(rss)/1024, out.Len())
	b.ReportMetric(wall.Seconds(), name+"-s")
	b.ReportMetric(float64(rss)/1024, name+"-MiB")
}

// BenchmarkJobAnalyses: job --imbalance, summary, compare (the first half
// of the ranks against the second, each rank a run) and convert (every
// rank's database to hive Parquet) of the synthetic job.
func BenchmarkJobAnalyses(b *testing.B) {
	dir, j := job(b)
	dbs := make([]string, j.Ranks)
	for r := range dbs {
		dbs[r] = filepath.Join(dir, fmt.Sprintf("%d_results.db", r))
	}
	for range b.N {
		run(b, "imbalance", "job", "--imbalance", "--format", "csv", dir)
		run(b, "summary", append([]string{"summary", "--by-rank", "--format", "csv", "-i"}, dbs...)...)
		half := j.Ranks / 2
		run(b, "compare", append(append(append([]string{"compare", "--format", "json"}, dbs[:half]...), "--"), dbs[half:]...)...)
		out := b.TempDir()
		run(b, "convert", append([]string{"convert", "-f", "parquet", "--parquet-hive", "-d", out, "-i"}, dbs...)...)
	}
}
