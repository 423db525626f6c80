package pipeline

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/options"
)

func manifestAt(pid int, started, finished time.Time, files ...string) *Manifest {
	m := &Manifest{Version: Version, PID: pid, Started: started, Finished: finished}
	for _, f := range files {
		m.Files = append(m.Files, ManifestFile{Path: f, Format: "csv", Domain: "kernel_dispatch", Records: 1})
	}
	return m
}

// A run that finished after this one started overlapped it: run.json keeps
// both. One that finished before this one started is simply replaced.
func TestManifestKeepsOverlappingRuns(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	early := manifestAt(10, t0, t0.Add(time.Second), "h/10_kernel_trace.csv")
	require.NoError(t, WriteManifest(dir, early))

	// Starts after early finished: early is gone.
	a := manifestAt(11, t0.Add(2*time.Second), t0.Add(5*time.Second), "h/11_kernel_trace.csv")
	require.NoError(t, WriteManifest(dir, a))
	m, err := LoadManifest(dir)
	require.NoError(t, err)
	require.Equal(t, 11, m.PID)
	require.Empty(t, m.Concurrent)

	// b ran alongside a (started before a finished) and c alongside both.
	b := manifestAt(12, t0.Add(3*time.Second), t0.Add(6*time.Second), "h/12_kernel_trace.csv")
	require.NoError(t, WriteManifest(dir, b))
	c := manifestAt(13, t0.Add(4*time.Second), t0.Add(7*time.Second), "h/13_kernel_trace.csv")
	require.NoError(t, WriteManifest(dir, c))
	m, err = LoadManifest(dir)
	require.NoError(t, err)
	require.Equal(t, 13, m.PID)
	var pids []int
	for _, r := range m.Concurrent {
		pids = append(pids, r.PID)
		require.Empty(t, r.Concurrent, "nested manifests are flattened")
	}
	require.Equal(t, []int{12, 11}, pids)

	// A later run that overwrote one of b's files drops b (its counts no
	// longer describe the file) but keeps c.
	d := manifestAt(14, t0.Add(6500*time.Millisecond), t0.Add(8*time.Second), "h/12_kernel_trace.csv")
	require.NoError(t, WriteManifest(dir, d))
	m, err = LoadManifest(dir)
	require.NoError(t, err)
	pids = nil
	for _, r := range m.Concurrent {
		pids = append(pids, r.PID)
	}
	require.Equal(t, []int{13}, pids)
}

// Another user holding the output directory's lock (any reader of a 0755
// directory can flock it) delays run.json by at most manifestLockWait; a
// run.json that is a FIFO or huge is not read.
func TestManifestNeverHangsOnOthersLocksOrFiles(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Open(dir)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
	start := time.Now()
	m := &Manifest{Version: "t", Started: time.Now(), Finished: time.Now()}
	require.NoError(t, WriteManifest(dir, m))
	require.Less(t, time.Since(start), manifestLockWait+2*time.Second)
	_, err = LoadManifest(dir)
	require.NoError(t, err)

	fifoDir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(fifoDir, ManifestName), 0o644))
	_, err = LoadManifest(fifoDir)
	require.ErrorContains(t, err, "is not a regular file")
	require.NoError(t, WriteManifest(fifoDir, m), "a FIFO in run.json's place is replaced, not waited on")

	bigDir := t.TempDir()
	big, err := os.Create(filepath.Join(bigDir, ManifestName))
	require.NoError(t, err)
	require.NoError(t, big.Truncate(maxManifestBytes+1))
	big.Close()
	_, err = LoadManifest(bigDir)
	require.ErrorContains(t, err, "more than a run manifest holds")
}

// The ranks of a job write into one directory at once: each writes its own
// manifest into the job's directory without taking the directory's lock
// (held here by another process for longer than the wait: a non-rank run
// would wait manifestLockWait for it) and without reading the others'.
// LoadJob gives them back in rank order, the newest job only.
func TestRankManifestsTakeNoLock(t *testing.T) {
	dir := t.TempDir()
	d, err := os.Open(dir)
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, syscall.Flock(int(d.Fd()), syscall.LOCK_EX))
	t0 := time.Now()
	shared := true
	for _, r := range []string{"10", "2", "0"} {
		m := manifestAt(100, t0, t0, "r"+r+"_results.db")
		m.Host = "node" + r
		m.Rank = &ManifestRank{Launcher: "Open MPI", Job: "PMIX_NAMESPACE=j", Rank: r, Size: "11", SharedDir: &shared}
		require.NoError(t, WriteManifest(dir, m))
	}
	require.Less(t, time.Since(t0), manifestLockWait/2, "a rank waited for the directory's lock")
	j, err := LoadJob(dir)
	require.NoError(t, err)
	require.Len(t, j.Ranks, 3)
	// Ranks 1 and 3-9 of the job's 11 wrote no manifest: named.
	require.Equal(t, 11, j.Size)
	require.Equal(t, []int{1, 3, 4, 5, 6, 7, 8, 9}, j.Missing)
	for i, r := range []string{"0", "2", "10"} {
		require.Equal(t, r, j.Ranks[i].Rank.Rank)
		require.Equal(t, "node"+r, j.Ranks[i].Host)
		require.Empty(t, j.Ranks[i].Concurrent)
	}
	last, err := LoadManifest(dir)
	require.NoError(t, err)
	require.Equal(t, "0", last.Rank.Rank, "run.json is the last rank's own")

	none, err := LoadJob(t.TempDir())
	require.NoError(t, err)
	require.Nil(t, none)
}

// A rank tells whether the job's other ranks write into its output
// directory: not when -d depends on the rank, host, pid or a variable.
func TestRanksShareDir(t *testing.T) {
	t.Setenv("OMPI_COMM_WORLD_RANK", "3")
	t.Setenv("OMPI_COMM_WORLD_SIZE", "8")
	t.Setenv("PMIX_NAMESPACE", "j")
	base := t.TempDir()
	for _, c := range []struct {
		dir    string
		shared bool
	}{
		{"", true},
		{base + "/prof", true},
		{base + "/prof/%pid%", true}, // per process: below the shared part
		{base + "/prof/%rank%", false},
		{base + "/prof_%hostname%", false},
		{base + "/%env{OMPI_COMM_WORLD_RANK}%", false},
	} {
		cfg := &options.Config{OutputDirectory: c.dir}
		require.Equal(t, c.shared, ranksShareDir(cfg, topDir(cfg)), c.dir)
	}
}
