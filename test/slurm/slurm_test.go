package slurm

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// The command lines the tests run, in the work directory (where build is
// the build directory and rocprof-go is first in PATH). docs/mpi.md shows
// them as they are here ("Slurm"). --overcommit: the test node may have
// fewer CPUs than ranks.
const (
	// Four ranks started by srun, each its own -d: its own run.json.
	srunLine = `srun -n 4 --overcommit --label rocprof-go --virtual-gpu --kernel-trace -d 'prof/%rank%' -o out -- build/testdata/tiny_kernels 100`
	// An sbatch job whose script starts the ranks with Open MPI.
	sbatchLine = `sbatch --wait --output=job.log job.sh`
	jobScript  = `#!/bin/sh
#SBATCH --ntasks=4 --overcommit
mpirun --allow-run-as-root -np 4 rocprof-go --virtual-gpu --kernel-trace -d 'prof/%rank%' -o out -- build/testdata/tiny_kernels 100
`
	// Rank 2's app exits 3 (having launched 70 kernels, 50 of them
	// completed); the others run as in srunLine.
	failingLine = `srun -n 4 --overcommit --label rocprof-go --virtual-gpu --kernel-trace -d 'prof/%rank%' -o out -- ` +
		`sh -c 'if [ "$SLURM_PROCID" = 2 ]; then exec build/testdata/fault_exit 50 3; fi; exec build/testdata/tiny_kernels 100'`
)

// rankRun is what one rank left in prof/RANK.
type rankRun struct {
	manifest   *rocprof.Manifest
	dispatches int               // kernel dispatches in its ROCpd database
	env        map[string]string // the launcher variables stored with its process
	storedRank int
}

// readRank reads prof/RANK: run.json, which must list exactly the ROCpd
// database with its record count, and the database, which must hold one
// process (the rank's app) with those records.
func readRank(t *testing.T, c *cluster, rank int) rankRun {
	t.Helper()
	dir := filepath.Join(c.work, "prof", strconv.Itoa(rank))
	m, err := rocprof.LoadManifest(dir)
	require.NoError(t, err, "rank %d's run.json", rank)
	require.Empty(t, m.Concurrent, "rank %d: its -d is its own", rank)
	require.Len(t, m.Files, 1, "rank %d's run.json: %+v", rank, m.Files)
	require.Equal(t, "out_results.db", m.Files[0].Path)
	db, err := rocpdread.Open(filepath.Join(dir, "out_results.db"))
	require.NoError(t, err)
	defer db.Close()
	require.Len(t, db.Images, 1)
	in, err := db.LoadInfo(db.Images[0])
	require.NoError(t, err)
	require.Len(t, in.Processes, 1, "rank %d: one process", rank)
	r := rankRun{manifest: m}
	for _, p := range in.Processes {
		r.storedRank = p.Rank
		require.NoError(t, json.Unmarshal([]byte(p.Environment), &r.env), "rank %d's stored environment", rank)
	}
	require.NoError(t, db.Dispatches(func(*rocpdread.Info, *rocpdread.Dispatch) error { r.dispatches++; return nil }))
	require.Equal(t, int64(r.dispatches), m.Files[0].Records, "rank %d: run.json's count is the database's", rank)
	require.Equal(t, int64(r.dispatches), m.DomainRecords["KERNEL_DISPATCH"], "rank %d", rank)
	return r
}

// requireRanks checks that prof holds the directories of ranks 0-3 and
// nothing else, and that no run kept its spools (every output written).
func requireRanks(t *testing.T, c *cluster, n int) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(c.work, "prof"))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	var want []string
	for rank := 0; rank < n; rank++ {
		want = append(want, strconv.Itoa(rank))
	}
	require.Equal(t, want, names, "one directory per rank")
	kept, err := os.ReadDir(c.spools)
	require.NoError(t, err)
	require.Empty(t, kept, "a run kept its spools")
}

// appLines are the app's "dispatches=" lines by rank (srun --label
// prefixes each line with its task's rank).
func appLines(t *testing.T, stdout string) map[int]string {
	t.Helper()
	lines := map[int]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s*(\d+): (dispatches=.*)$`).FindAllStringSubmatch(stdout, -1) {
		rank, _ := strconv.Atoi(m[1])
		require.NotContains(t, lines, rank, "rank %d printed twice:\n%s", rank, stdout)
		lines[rank] = m[2]
	}
	return lines
}

// Issue 33: srun starts four ranks of rocprof-go; each takes its rank from
// Slurm's SLURM_PROCID (a task of step 0), writes prof/RANK with its own
// run.json, and records its app's 100 kernels.
func TestSrunRanks(t *testing.T) {
	c := startCluster(t)
	res := c.sh(srunLine)
	require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	lines := appLines(t, res.stdout)
	requireRanks(t, c, 4)
	var counts []int
	for rank := 0; rank < 4; rank++ {
		require.Contains(t, lines[rank], "dispatches=100 ", "rank %d's app; stdout:\n%s", rank, res.stdout)
		r := readRank(t, c, rank)
		require.Equal(t, 0, r.manifest.ExitStatus, "rank %d", rank)
		require.Empty(t, r.manifest.Error, "rank %d", rank)
		require.Equal(t, 100, r.dispatches, "rank %d", rank)
		require.Equal(t, rank, r.storedRank, "rank %d: the rank stored with its process", rank)
		require.Equal(t, strconv.Itoa(rank), r.env["SLURM_PROCID"], "rank %d: %v", rank, r.env)
		require.Equal(t, "0", r.env["SLURM_STEP_ID"], "rank %d: a task of step 0: %v", rank, r.env)
		require.Equal(t, "4", r.env["SLURM_STEP_NUM_TASKS"], "rank %d: %v", rank, r.env)
		require.NotContains(t, r.env, "OMPI_COMM_WORLD_RANK", "rank %d", rank)
		counts = append(counts, r.dispatches)
	}
	t.Logf("RESULT %s: srun -n 4: exit 0, prof/{0,1,2,3} with SLURM_PROCID 0-3, dispatches %v, %.1fs",
		t.Name(), counts, res.duration.Seconds())
}

// Issue 33: an sbatch job runs `mpirun -np 4 rocprof-go ...`. Every rank
// inherits the batch step's SLURM_PROCID=0 and gets Open MPI's
// OMPI_COMM_WORLD_RANK: the launcher that started the process (mpirun)
// names the rank, so prof/0-3 hold one rank each (with SLURM_PROCID the
// four would all have been rank 0).
func TestSbatchMpirunRanks(t *testing.T) {
	c := startCluster(t)
	require.NoError(t, os.WriteFile(filepath.Join(c.work, "job.sh"), []byte(jobScript), 0o755))
	res := c.sh(sbatchLine)
	log, _ := os.ReadFile(filepath.Join(c.work, "job.log"))
	require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s\njob.log:\n%s", res.stdout, res.stderr, log)
	m := regexp.MustCompile(`Submitted batch job (\d+)`).FindStringSubmatch(res.stdout)
	require.NotNil(t, m, "sbatch printed: %s", res.stdout)
	job := m[1]
	require.Equal(t, 4, strings.Count(string(log), "dispatches=100 "), "job.log:\n%s", log)
	requireRanks(t, c, 4)
	for rank := 0; rank < 4; rank++ {
		r := readRank(t, c, rank)
		require.Equal(t, 0, r.manifest.ExitStatus, "rank %d", rank)
		require.Empty(t, r.manifest.Error, "rank %d", rank)
		require.Equal(t, 100, r.dispatches, "rank %d", rank)
		require.Equal(t, rank, r.storedRank, "rank %d: the rank stored with its process", rank)
		require.Equal(t, strconv.Itoa(rank), r.env["OMPI_COMM_WORLD_RANK"], "rank %d: %v", rank, r.env)
		require.Equal(t, "0", r.env["SLURM_PROCID"], "rank %d: the batch step's, which every rank inherits: %v", rank, r.env)
		require.Equal(t, job, r.env["SLURM_JOB_ID"], "rank %d: %v", rank, r.env)
	}
	t.Logf("RESULT %s: sbatch job %s, mpirun -np 4: exit 0, prof/{0,1,2,3} named by OMPI_COMM_WORLD_RANK (SLURM_PROCID 0 in all four), 100 dispatches each, %.1fs",
		t.Name(), job, res.duration.Seconds())
}

// Issue 33: one rank's app fails (exit 3) under srun. srun exits with it;
// the other ranks' outputs are complete; the failed rank's run.json records
// its app's status and everything it recorded (what completed before its
// _exit).
func TestSrunFailingRank(t *testing.T) {
	c := startCluster(t)
	res := c.sh(failingLine)
	require.Equal(t, 3, res.exit, "srun returns its tasks' highest exit status; stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	require.Regexp(t, `task 2: Exited with exit code 3`, res.stderr)
	lines := appLines(t, res.stdout)
	requireRanks(t, c, 4)
	var summary []string
	for rank := 0; rank < 4; rank++ {
		r := readRank(t, c, rank)
		require.Empty(t, r.manifest.Error, "rank %d", rank)
		require.Equal(t, rank, r.storedRank, "rank %d", rank)
		require.Equal(t, strconv.Itoa(rank), r.env["SLURM_PROCID"], "rank %d: %v", rank, r.env)
		if rank != 2 {
			require.Contains(t, lines[rank], "dispatches=100 ", "rank %d's app; stdout:\n%s", rank, res.stdout)
			require.Equal(t, 0, r.manifest.ExitStatus, "rank %d", rank)
			require.Equal(t, 100, r.dispatches, "rank %d", rank)
		} else {
			require.Equal(t, "dispatches=50 completed launches=70 copies=0 _exit=3", lines[rank], "stdout:\n%s", res.stdout)
			require.Equal(t, 3, r.manifest.ExitStatus, "rank 2's run.json: its app's status")
			require.Len(t, r.manifest.Passes, 1)
			require.Equal(t, 3, r.manifest.Passes[0].ExitStatus)
			require.GreaterOrEqual(t, r.dispatches, 50, "rank 2: the kernels completed before _exit")
			require.LessOrEqual(t, r.dispatches, 70, "rank 2: no more than it launched")
		}
		summary = append(summary, fmt.Sprintf("rank %d exit %d, %d dispatches", rank, r.manifest.ExitStatus, r.dispatches))
	}
	t.Logf("RESULT %s: srun exit 3; %s; %.1fs", t.Name(), strings.Join(summary, "; "), res.duration.Seconds())
}

// docs/mpi.md shows, in its Slurm section, the command lines and the job
// script these tests run, as they run them (a line wrapped with a
// backslash counts as one).
func TestDocShowsTheCommandsAsTested(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testsys.RepoRoot(t), "docs", "mpi.md"))
	require.NoError(t, err)
	doc := string(data)
	i := strings.Index(doc, "\n## Slurm")
	require.GreaterOrEqual(t, i, 0, "docs/mpi.md has a Slurm section")
	section := doc[i+1:]
	if j := strings.Index(section, "\n## "); j >= 0 {
		section = section[:j]
	}
	joined := regexp.MustCompile(`\\\n\s*`).ReplaceAllString(section, "")
	for _, line := range []string{srunLine, sbatchLine, failingLine, scancelLine} {
		require.Contains(t, joined, line, "docs/mpi.md's Slurm section shows the command as tested")
	}
	require.Contains(t, section, jobScript, "docs/mpi.md's Slurm section shows job.sh as tested")
	require.Contains(t, section, scancelScript, "docs/mpi.md's Slurm section shows long.sh as tested")
	for _, name := range []string{"TestSrunRanks", "TestSbatchMpirunRanks", "TestSrunFailingRank", "TestScancelRanks"} {
		require.Contains(t, section, name, "docs/mpi.md names the test that runs the commands")
	}
}

// scancelScript is a job whose step runs until cancelled: two ranks whose
// apps launch kernels of 1 ms (the virtual GPU's duration model) and print
// their count every 100.
const scancelScript = `#!/bin/sh
#SBATCH --ntasks=2 --overcommit
ROCPROF_VGPU_KERNEL_BASE_NS=1000000 srun --label rocprof-go --virtual-gpu --kernel-trace -d 'prof/%rank%' -o out -- build/testdata/fault_progress 100 600
`

const scancelLine = `sbatch --output=long.log long.sh`

// Issue 33: scancel of a running job: Slurm sends SIGTERM to every process
// of the step (rocprof-go and its app alike), SIGKILL after KillWait.
func TestScancelRanks(t *testing.T) {
	c := startCluster(t)
	require.NoError(t, os.WriteFile(filepath.Join(c.work, "long.sh"), []byte(scancelScript), 0o755))
	res := c.sh(scancelLine)
	require.Equal(t, 0, res.exit, "%s%s", res.stdout, res.stderr)
	job := regexp.MustCompile(`Submitted batch job (\d+)`).FindStringSubmatch(res.stdout)[1]
	progress := regexp.MustCompile(`(?m)^(\d+): progress dispatches=(\d+)$`)
	last := func() map[int]int {
		log, _ := os.ReadFile(filepath.Join(c.work, "long.log"))
		m := map[int]int{}
		for _, l := range progress.FindAllStringSubmatch(string(log), -1) {
			r, _ := strconv.Atoi(l[1])
			n, _ := strconv.Atoi(l[2])
			m[r] = n
		}
		return m
	}
	c.poll("both ranks to report 300 dispatches", func() (bool, string) {
		m := last()
		return m[0] >= 300 && m[1] >= 300, fmt.Sprint(m)
	})
	start := time.Now()
	out, err := c.output("scancel", job)
	require.NoError(t, err, out)
	c.poll("the job to end", func() (bool, string) {
		out, err := c.output("squeue", "-h", "-o", "%i %T")
		return err == nil && strings.TrimSpace(out) == "", out
	})
	took := time.Since(start)
	log, _ := os.ReadFile(filepath.Join(c.work, "long.log"))
	seen := last()
	var summary []string
	requireRanks(t, c, 2)
	for rank := 0; rank < 2; rank++ {
		r := readRank(t, c, rank)
		require.Equal(t, 143, r.manifest.ExitStatus, "rank %d: its app's status (SIGTERM)", rank)
		require.Empty(t, r.manifest.Error, "rank %d", rank)
		require.GreaterOrEqual(t, r.dispatches, seen[rank], "rank %d: every dispatch its app saw complete; long.log:\n%s", rank, log)
		summary = append(summary, fmt.Sprintf("rank %d: exit %d, %d dispatches (app saw %d), error %q", rank, r.manifest.ExitStatus, r.dispatches, seen[rank], r.manifest.Error))
	}
	t.Logf("RESULT %s: scancel: job over in %.1fs; %s\nlong.log's end:\n%s", t.Name(), took.Seconds(), strings.Join(summary, "; "), tail(filepath.Join(c.work, "long.log"), 12))
}
