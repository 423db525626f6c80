package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// publishedDispatches counts the dispatch records a (live) spool has
// published so far; 0 if it cannot be read yet.
func publishedDispatches(path string) uint64 {
	r, err := tracing.Open(path)
	if err != nil {
		return 0
	}
	defer r.Close()
	for r.Next() {
	}
	st := r.Stats()
	return st.Count(tracing.KindKernelDispatch)
}

// Outputs that could not be written (a full disk) leave the spools kept;
// the error says how to convert them, the next run lists them, and
// convert writes every record from them.
func TestKeptSpoolIsListedAndConverts(t *testing.T) {
	app, err := filepath.Abs(filepath.Join("..", "..", "build", "testdata", "tiny_kernels"))
	require.NoError(t, err)
	spoolRoot := t.TempDir()
	env := []string{builtLibs(t), "ROCPROF_GO_SPOOL_ROOT=" + spoolRoot}
	full := testsys.SmallTmpfs(t, "64k")
	r := runCLI(t, env, "--virtual-gpu", "--kernel-trace", "-f", "csv", "-d", full, "-o", "run", "--", app, "2000")
	require.Equal(t, 1, r.code, "stderr: %s", r.stderr)
	m := regexp.MustCompile("once the cause is fixed, `rocprof-go convert -i (\\S+) -f csv -d \\S+` writes the outputs from it").FindStringSubmatch(r.stderr)
	require.NotNil(t, m, "the error says how to convert the kept spools: %s", r.stderr)
	kept := m[1]

	// The next run (any) names it.
	r2 := runCLI(t, env, "--hip-runtime-trace", "-d", t.TempDir(), "--", "true")
	require.Equal(t, 0, r2.code, "stderr: %s", r2.stderr)
	require.Contains(t, r2.stderr, "rocprof-go: note: "+filepath.Dir(kept)+" holds 1 spools of an earlier run (kept when its outputs could not be written): `rocprof-go convert -i "+filepath.Dir(kept)+" -f csv` writes them out")

	// convert recovers every dispatch, from the pass directory or the run directory.
	for _, in := range []string{kept, filepath.Dir(kept)} {
		out := t.TempDir()
		c := runCLI(t, nil, "convert", "-i", in, "-f", "csv", "-d", out, "-o", "run")
		require.Equal(t, 0, c.code, "stderr: %s", c.stderr)
		names, _ := kernelNames(t, filepath.Join(out, "run_kernel_trace.csv"))
		require.Equal(t, 2000, names["tiny(int*)"], "%v", names)
	}
	require.NoError(t, os.RemoveAll(filepath.Dir(kept)))
	r3 := runCLI(t, env, "--hip-runtime-trace", "-d", t.TempDir(), "--", "true")
	require.NotContains(t, r3.stderr, "spools of an earlier run", "deleted: no longer listed")
}

// A rocprof-go killed mid-run leaves its spools; the next run lists them as
// left by a killed run, and convert writes what the app had published.
func TestSpoolsOfAKilledRunConvert(t *testing.T) {
	app, err := filepath.Abs(filepath.Join("..", "..", "build", "testdata", "tiny_kernels"))
	require.NoError(t, err)
	spoolRoot := t.TempDir()
	env := append(os.Environ(), builtLibs(t), "ROCPROF_GO_SPOOL_ROOT="+spoolRoot)
	cmd := exec.Command(cliBinary, "--virtual-gpu", "--kernel-trace", "-d", t.TempDir(), "--", app, "100000000")
	cmd.Env = env
	require.NoError(t, cmd.Start())
	// Wait until the app has published more than 1000 dispatches (read
	// from the live spool: its size says nothing, the file grows by whole
	// segments).
	var spool string
	var published uint64
	for i := 0; i < 3000 && published <= 1000; i++ {
		s, _ := filepath.Glob(filepath.Join(spoolRoot, "rocprof-go-run-*", "pass_1", "*.spool"))
		if len(s) == 1 {
			spool = s[0]
			published = publishedDispatches(spool)
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.Greater(t, published, uint64(1000), "the app recorded")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	time.Sleep(200 * time.Millisecond) // the app dies with it (PDEATHSIG)
	runDir := filepath.Dir(filepath.Dir(spool))

	r := runCLI(t, []string{builtLibs(t), "ROCPROF_GO_SPOOL_ROOT=" + spoolRoot}, "--hip-runtime-trace", "-d", t.TempDir(), "--", "true")
	require.Contains(t, r.stderr, "rocprof-go: note: "+runDir+" holds 1 spools of an earlier run (left by a rocprof-go that was killed)")

	out := t.TempDir()
	c := runCLI(t, nil, "convert", "-i", runDir, "-f", "csv", "json", "-d", out, "-o", "run")
	require.Equal(t, 0, c.code, "stderr: %s", c.stderr)
	names, rows := kernelNames(t, filepath.Join(out, "run_kernel_trace.csv"))
	require.GreaterOrEqual(t, uint64(names["tiny(int*)"]), published, "every dispatch published before the kill: %v", names)
	require.FileExists(t, filepath.Join(out, "run_results.json"))
	t.Logf("%d dispatches recovered from the killed run's spool", rows)
}
