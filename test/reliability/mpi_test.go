package reliability

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
)

// batchStep is the environment an sbatch script hands its commands: the
// batch step's SLURM_PROCID=0, which mpirun's ranks inherit.
var batchStep = []string{"SLURM_JOB_ID=4242", "SLURM_PROCID=0", "SLURM_STEPID=batch", "SLURM_NTASKS=4", "SLURM_NNODES=1"}

// mpirun runs `mpirun -np N rocprof-go --virtual-gpu -d dir OPTS -- app`
// (Debian's Open MPI) in a faked sbatch batch step, as an HPC user's job
// script does (docs/mpi.md).
func mpirun(t *testing.T, np string, dir string, opts ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	// Every rank runs to its end, even after one failed (mpirun would kill
	// the others, which would leave their spools behind).
	args := []string{"--allow-run-as-root", "--oversubscribe", "--mca", "orte_abort_on_non_zero_status", "0", "-np", np}
	for _, kv := range batchStep {
		args = append(args, "-x", strings.SplitN(kv, "=", 2)[0])
	}
	// Each rank's exit status, which mpirun does not pass on.
	args = append(args, "sh", "-c", `"$@"; echo "rank exit status $?" >&2`, "sh", cli(t), "--virtual-gpu", "-d", dir)
	args = append(append(args, opts...), "--", app(t, "multistream"), "1", "1")
	cmd := exec.CommandContext(ctx, "mpirun", args...)
	cmd.Env = append(os.Environ(), batchStep...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := result{exit: exitCode(t, err), stdout: out.String(), stderr: errb.String(), dir: dir}
	require.NoError(t, ctx.Err(), "mpirun did not finish: %s", res.stderr)
	// Spools a failed rank kept for `convert`: this test's to remove.
	for _, m := range regexp.MustCompile(`data is kept in (/\S+)/pass_1`).FindAllStringSubmatch(res.stderr, -1) {
		_ = os.RemoveAll(m[1])
	}
	return res
}

// Issue 33: in an sbatch script, `mpirun -np 4 rocprof-go -o
// '%rank%_results'` gave every rank SLURM_PROCID=0's rank: all four wrote
// 0_results, one survived, exit 0. The MPI rank wins (the launcher that
// started the process), and ranks that resolve -o to the same file fail
// loudly instead of replacing each other's.
func TestMPIRanksInABatchStep(t *testing.T) {
	t.Parallel()
	_, err := exec.LookPath("mpirun")
	require.NoError(t, err, "mpirun is missing: apt-get install openmpi-bin (the Makefile's APT_PACKAGES)")

	dir := t.TempDir()
	res := mpirun(t, "4", dir, "--kernel-trace", "-o", "%rank%_results")
	require.Equal(t, 0, res.exit, "stderr:\n%s", res.stderr)
	require.Equal(t, 4, strings.Count(res.stderr, "rank exit status 0"), "stderr:\n%s", res.stderr)
	dbs, err := filepath.Glob(filepath.Join(dir, "*.db"))
	require.NoError(t, err)
	var names []string
	for _, db := range dbs {
		names = append(names, filepath.Base(db))
	}
	sort.Strings(names)
	require.Equal(t, []string{"0_results_results.db", "1_results_results.db", "2_results_results.db", "3_results_results.db"}, names)
	for i, path := range dbs {
		db, err := rocpdread.Open(path)
		require.NoError(t, err)
		require.Len(t, db.Images, 1)
		in, err := db.LoadInfo(db.Images[0])
		require.NoError(t, err)
		require.Len(t, in.Processes, 1)
		for _, p := range in.Processes {
			require.Equal(t, i, p.Rank, "%s: the rank stored with the process", path)
		}
		require.NoError(t, db.Close())
	}

	// Every rank resolves -o to one file: one rank writes it, the others
	// fail naming both ranks and the fix, and keep their data.
	dir = t.TempDir()
	res = mpirun(t, "4", dir, "--kernel-trace", "-o", "results")
	require.Equal(t, 1, strings.Count(res.stderr, "rank exit status 0"), "stderr:\n%s", res.stderr)
	require.Equal(t, 3, strings.Count(res.stderr, "rank exit status 1"), "stderr:\n%s", res.stderr)
	require.NotContains(t, res.stderr, "nothing was recorded")
	require.Equal(t, 3, strings.Count(res.stderr, "output clash: "+filepath.Join(dir, "results")), "stderr:\n%s", res.stderr)
	require.Regexp(t, `rank \d \(pid \d+ on [^,]+, OMPI_COMM_WORLD_RANK=\d\) wrote it, and rank \d \(pid \d+ on [^,]+, OMPI_COMM_WORLD_RANK=\d\) would replace its files`, res.stderr)
	require.Contains(t, res.stderr, "put %rank% (or %pid%) in -o or -d")
	require.Equal(t, 3, strings.Count(res.stderr, "once the cause is fixed, `rocprof-go convert -i "), "each failed rank says how to write its kept data")
	dbs, err = filepath.Glob(filepath.Join(dir, "*.db"))
	require.NoError(t, err)
	require.Len(t, dbs, 1)
	report(t, "mpirun -np 4 in a batch step: %v; -o results: 1 file, 3 ranks failed with the clash", names)
}
