package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// killedRun runs rocprof-go with its spools under spoolRoot and SIGKILLs
// it once its app has started, before the app records anything; it
// returns the run directory the killed rocprof-go left.
func killedRun(t *testing.T, libs, spoolRoot string) string {
	t.Helper()
	before, err := filepath.Glob(filepath.Join(spoolRoot, "rocprof-go-run-*"))
	require.NoError(t, err)
	cmd, app := startRunOfASleeper(t, libs, spoolRoot)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	require.True(t, ended(app, time.Second), "the app (pid %d) ended with rocprof-go", app)
	after, err := filepath.Glob(filepath.Join(spoolRoot, "rocprof-go-run-*"))
	require.NoError(t, err)
	require.Len(t, after, len(before)+1, "the killed rocprof-go left its run directory")
	for _, d := range after {
		if !slices.Contains(before, d) {
			require.FileExists(t, filepath.Join(d, "owner"))
			require.FileExists(t, filepath.Join(d, "pass_1", "notes"))
			return d
		}
	}
	return ""
}

// Nothing of ours outlives a run: the run directory a SIGKILLed rocprof-go
// left before its app recorded (its owner file, pass_1/notes, no spool) is
// removed by this user's next run, with one line at --log-level info. One
// that holds a spool stays and is noted once (by the next run, which marks
// it listed), and another user's is left alone and not mentioned.
func TestNextRunRemovesAKilledRunsEmptyDirectory(t *testing.T) {
	libs := builtLibs(t)
	spoolRoot := t.TempDir()
	// Each killed run is itself a next run of the ones before it: the
	// empty one is made last.
	spooled := killedRun(t, libs, spoolRoot)
	require.NoError(t, os.WriteFile(filepath.Join(spooled, "pass_1", "rpg-1-1-0.spool"), []byte("recorded"), 0o600))
	others := killedRun(t, libs, spoolRoot)
	uid, gid := testsys.SecondUser(t)
	require.NoError(t, filepath.Walk(others, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	}))
	empty := killedRun(t, libs, spoolRoot)

	cmd := exec.Command(cliBinary, "--log-level", "info", "--hip-runtime-trace", "-d", filepath.Join(t.TempDir(), "out"), "--", "true")
	cmd.Env = append(os.Environ(), libs, "ROCPROF_GO_SPOOL_ROOT="+spoolRoot)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NoDirExists(t, empty)
	require.Contains(t, string(out), "removed "+empty+", left empty by a rocprof-go that was killed")
	require.FileExists(t, filepath.Join(spooled, "pass_1", "rpg-1-1-0.spool"))
	require.FileExists(t, filepath.Join(spooled, "owner"))
	// The run with a spool was named by the first run after it (the second
	// killed one), which marked it listed: this run does not repeat it.
	require.FileExists(t, filepath.Join(spooled, "listed"))
	require.NotContains(t, string(out), spooled+" holds", "named once, by the run after it")
	require.FileExists(t, filepath.Join(others, "owner"))
	require.FileExists(t, filepath.Join(others, "pass_1", "notes"))
	require.NotContains(t, string(out), others)
	left, err := filepath.Glob(filepath.Join(spoolRoot, "rocprof-go-run-*"))
	require.NoError(t, err)
	require.ElementsMatch(t, []string{spooled, others}, left, "the second run removed its own directory")
}
