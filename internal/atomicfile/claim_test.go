package atomicfile

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// Two ranks of one job that resolve an output prefix alike: the second
// fails, naming both; a rank run again, or another job, claims anew.
func TestClaimDetectsTwoRanksOfOneJob(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "out", "results")
	host, _ := os.Hostname()
	// A process that has exited: a rank whose rocprof-go already ended.
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	dead := cmd.Process.Pid

	job := "PMIX_NAMESPACE=11"
	r0 := Owner{Host: host, PID: dead, Rank: "0", RankVar: "OMPI_COMM_WORLD_RANK", Job: job}
	require.NoError(t, Claim(prefix, r0))
	r1 := Owner{Host: host, PID: os.Getpid(), Rank: "1", RankVar: "OMPI_COMM_WORLD_RANK", Job: job}
	err := Claim(prefix, r1)
	var clash *ClashError
	require.True(t, errors.As(err, &clash), "%v", err)
	require.Equal(t, r0, clash.First)
	require.Contains(t, err.Error(), "rank 0 (pid")
	require.Contains(t, err.Error(), "rank 1 (pid")
	require.Contains(t, err.Error(), "%rank%")
	// On another node too.
	require.Error(t, Claim(prefix, Owner{Host: "elsewhere", PID: 5, Rank: "2", Job: job}))

	// Rank 0 run again (its first rocprof-go has ended): its claim.
	require.NoError(t, Claim(prefix, Owner{Host: host, PID: os.Getpid(), Rank: "0", Job: job}))
	// Rank 0 twice at once on this host (both alive): a clash.
	sleeper := exec.Command("sleep", "30")
	require.NoError(t, sleeper.Start())
	defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
	other := filepath.Join(dir, "other")
	require.NoError(t, Claim(other, Owner{Host: host, PID: sleeper.Process.Pid, Rank: "0", Job: job}))
	require.Error(t, Claim(other, Owner{Host: host, PID: os.Getpid(), Rank: "0", Job: job}))

	// Another job (the next mpirun) writes the same names with its own ranks.
	require.NoError(t, Claim(prefix, Owner{Host: host, PID: os.Getpid(), Rank: "1", Job: "PMIX_NAMESPACE=12"}))
	// The claims live in one hidden directory beside the outputs.
	entries, err := os.ReadDir(filepath.Join(dir, "out", ClaimsDir))
	require.NoError(t, err)
	require.Len(t, entries, 2)
}

// Under umask 000 the claims directory, made for every rank (0777), used
// to be writable by all without the sticky bit and then refused by the
// output rule: every rank failed "output claim: ... cannot be trusted".
// It gets the sticky bit, and the claims work.
func TestClaimUnderUmaskZero(t *testing.T) {
	dir := t.TempDir() // 0700, made before the umask changes
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	prefix := filepath.Join(dir, "results")
	host, _ := os.Hostname()
	o := Owner{Host: host, PID: os.Getpid(), Rank: "0", Job: "umask-test"}
	require.NoError(t, Claim(prefix, o))
	st, err := os.Stat(filepath.Join(dir, ClaimsDir))
	require.NoError(t, err)
	require.True(t, st.Mode().Perm()&0o002 == 0 || st.Mode()&os.ModeSticky != 0,
		"no directory every user can write without the sticky bit: %v", st.Mode())
	err = Claim(prefix, Owner{Host: host, PID: os.Getpid(), Rank: "1", Job: "umask-test"})
	var clash *ClashError
	require.True(t, errors.As(err, &clash), "the claim holds: %v", err)
	Release(prefix, o)
	_, err = os.Stat(filepath.Join(dir, ClaimsDir))
	require.True(t, os.IsNotExist(err), "released: %v", err)
}
