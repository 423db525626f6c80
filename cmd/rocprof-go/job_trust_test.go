package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/jobgen"
	"github.com/rocprof-go/rocprof-go/internal/duckdb"
	"github.com/rocprof-go/rocprof-go/internal/jobdir"
	"github.com/rocprof-go/rocprof-go/internal/pipeline"
	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// An output directory and a spool root whose paths hold `[` or `\` (a user
// may name a directory so) keep every record: the spools are listed from
// the open directory, not by a glob built from its path. Before, the rank
// lost every record with exit 0 and "the app launched no kernel".
func TestProfileIntoADirectoryNamedLikeAPattern(t *testing.T) {
	onRuntimes(t, []string{rocmmatrix.HostName}, func(t *testing.T, rt rocmmatrix.Runtime, cache string) {
		for _, name := range []string{"out[1]", `back\slash`} {
			root := t.TempDir()
			out, spools := filepath.Join(root, name), filepath.Join(root, "spool"+name)
			require.NoError(t, os.Mkdir(spools, 0o700))
			// A sibling a pattern made of the path would match.
			require.NoError(t, os.Mkdir(filepath.Join(root, "out1"), 0o700))
			stderr, code := shippedOnRuntime(t, rt, cliBinary, cache, 5*time.Minute, []string{"ROCPROF_GO_SPOOL_ROOT=" + spools},
				"--virtual-gpu", "--kernel-trace", "-f", "csv", "-d", out, "-o", "run", "--", filepath.Join(rt.Apps, "multistream"), "2", "3")
			require.Equal(t, 0, code, "%s: %s", name, stderr)
			require.NotContains(t, stderr, "launched no kernel", name)
			names, _ := kernelNames(t, filepath.Join(out, "run_kernel_trace.csv"))
			require.Equal(t, 6, names["vadd(float const*, float const*, float*, int)"], "%s: %v", name, names)
			require.Equal(t, 6, names["scale(float*, float, int)"], "%s: %v", name, names)
		}
	})
}

// job --imbalance on out[1] reads out[1]'s Parquet, not that of a sibling
// out1 its path matches as a glob (nor, for a backslash, nothing). Before,
// DuckDB's pattern was built from the path: out[1]'s table showed out1's
// four ranks.
func TestJobImbalanceInADirectoryNamedLikeAPattern(t *testing.T) {
	engine := duckdb.EnvVar + "=" + testsys.Artifact(t, duckdb.Name)
	for _, name := range []string{"out[1]", `back\slash`} {
		root := t.TempDir()
		dir := filepath.Join(root, name)
		require.NoError(t, jobgen.Write(dir, jobgen.Job{Ranks: 2, Dispatches: 4, Kernels: 1, SlowRank: -1, Parquet: true}))
		require.NoError(t, jobgen.Write(filepath.Join(root, "out1"), jobgen.Job{Ranks: 4, Dispatches: 6, Kernels: 1, SlowRank: -1, Parquet: true}))
		r := runCLI(t, []string{engine}, "job", "--imbalance", "--format", "csv", dir)
		require.Equal(t, 0, r.code, "%s: %s", name, r.stderr)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		require.Len(t, lines, 3, "%s: %s", name, r.stdout) // header, two launch shapes
		for _, l := range lines[1:] {
			// kernel_000 in each shape: 2 dispatches on each of the 2 ranks.
			require.Regexp(t, `^kernel_000,\d+,1,1,\d+,1,1,4,2,`, l, name)
		}
		r = runCLI(t, []string{engine}, "job", "--imbalance", "--print-query", dir)
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, "-- run in ")
		require.Contains(t, r.stdout, "read_parquet('domain=kernels/**/*.parquet', hive_partitioning = true)")
	}
}

// writeRanks writes a job's rank manifests into dir (size ranks, those
// listed), each naming its rank's database as jobgen writes it.
func writeRanks(t *testing.T, dir string, size string, ranks ...string) {
	t.Helper()
	writeRanksShared(t, dir, size, true, ranks...)
}

// writeRanksShared is writeRanks saying whether the ranks share dir.
func writeRanksShared(t *testing.T, dir string, size string, shared bool, ranks ...string) {
	t.Helper()
	for _, r := range ranks {
		m := &pipeline.Manifest{Version: pipeline.Version, PID: 100, Host: "node0",
			Started: time.Now(), Finished: time.Now(),
			Rank:  &pipeline.ManifestRank{Launcher: "Open MPI", Job: "PMIX_NAMESPACE=jobgen", Rank: r, Size: size, SharedDir: &shared},
			Files: []pipeline.ManifestFile{{Path: r + "_results.db", Format: "rocpd", Domain: "kernel_dispatch", Records: 8}}}
		require.NoError(t, pipeline.WriteManifest(dir, m))
	}
}

// A job with a rank missing (its rocprof-go killed before it wrote its
// manifest) is not reported complete: job names the missing rank and
// fails, and summary and compare refuse the job unless
// --allow-incomplete (a CI gate must not pass on half a job). Before, job
// said "1 ranks on 1 hosts, 0 failed" (exit 0) and compare found no
// regression.
func TestJobWithAMissingRankIsIncomplete(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, jobgen.Write(dir, jobgen.Job{Ranks: 2, Dispatches: 4, Kernels: 1, SlowRank: -1, ROCpd: true}))
	writeRanks(t, dir, "2", "0")

	r := runCLI(t, nil, "job", dir)
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, `job "PMIX_NAMESPACE=jobgen" (Open MPI): 1 ranks of 2 on 1 hosts, 0 failed, 1 missing (rank 1)`)
	require.Contains(t, r.stderr, "the job in "+dir+" is incomplete: 1 of its 2 ranks left no manifest (rank 1)")
	r = runCLI(t, nil, "job", "--json", dir)
	require.Equal(t, 1, r.code, r.stderr)

	r = runCLI(t, nil, "compare", dir, dir)
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "1 of the job's 2 ranks left no manifest (rank 1)")
	r = runCLI(t, nil, "summary", "-i", dir)
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "1 of the job's 2 ranks left no manifest (rank 1)")
	r = runCLI(t, nil, "summary", "--allow-incomplete", "-i", dir)
	require.Equal(t, 0, r.code, r.stderr)

	// A rank of a job whose -d depends on the rank ('prof/%rank%') is
	// alone in its directory by design: nothing is missing there.
	own := t.TempDir()
	require.NoError(t, jobgen.Write(own, jobgen.Job{Ranks: 1, Dispatches: 4, Kernels: 1, SlowRank: -1, ROCpd: true}))
	writeRanksShared(t, own, "2", false, "0")
	r = runCLI(t, nil, "job", own)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "1 ranks of 2 on 1 hosts, 0 failed (the job's other ranks wrote into their own output directories)")
	r = runCLI(t, nil, "summary", "-i", own)
	require.Equal(t, 0, r.code, r.stderr)

	writeRanks(t, dir, "2", "1")
	r = runCLI(t, nil, "job", dir)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "2 ranks of 2 on 1 hosts, 0 failed\n")
	r = runCLI(t, nil, "compare", dir, dir)
	require.Equal(t, 0, r.code, r.stderr)
	r = runCLI(t, nil, "summary", "-i", dir)
	require.Equal(t, 0, r.code, r.stderr)
}

// A rank manifest another user planted in a shared output directory (here
// naming a database of theirs for rank 1) is not believed: job warns, and
// the rank it claimed is missing. Before, job listed the planted rank and
// summary read the file it named.
func TestJobRefusesAnotherUsersManifest(t *testing.T) {
	uid, gid := testsys.SecondUser(t)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, os.ModeSticky|0o777))
	require.NoError(t, jobgen.Write(dir, jobgen.Job{Ranks: 2, Dispatches: 4, Kernels: 1, SlowRank: -1, ROCpd: true}))
	writeRanks(t, dir, "2", "0", "1")
	planted := filepath.Join(dir, jobdir.OwnName())
	require.NoError(t, filepath.Walk(planted, func(p string, _ os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, "rank-1.json") {
			err = os.Chown(p, uid, gid)
		}
		return err
	}))

	r := runCLI(t, nil, "job", dir)
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "rank-1.json belongs to uid ")
	require.Contains(t, r.stdout, "1 ranks of 2 on 1 hosts, 0 failed, 1 missing (rank 1)")
	r = runCLI(t, nil, "summary", "-i", dir)
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "a rank's manifest was refused: ")
}
