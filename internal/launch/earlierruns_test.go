package launch

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/rocprof-go/rocprof-go/internal/securedir"
)

// A run directory whose rocprof-go is gone and that holds only what a run
// makes before its app records (owner, pass_N/notes) is removed by the
// next run; one with a spool, a kept marker, an unknown file, a live
// owner, or a notes file still locked by a process of its app stays.
func TestTidyEarlierRunsRemovesOnlyDeadEmptyRuns(t *testing.T) {
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	deadOwner := strconv.Itoa(dead.ProcessState.Pid()) + " 1\n"
	root := t.TempDir()
	plant := func(name, owner string, extra ...string) string {
		d := filepath.Join(root, runDirPrefix+name)
		require.NoError(t, os.MkdirAll(filepath.Join(d, "pass_1"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(d, runOwnerFile), []byte(owner), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(d, "pass_1", notesFile), nil, 0o600))
		for _, e := range extra {
			require.NoError(t, os.WriteFile(filepath.Join(d, e), []byte("x"), 0o600))
		}
		return d
	}
	empty := plant("empty", deadOwner)
	require.NoError(t, os.Mkdir(filepath.Join(empty, "pass_2"), 0o700))
	spooled := plant("spooled", deadOwner, "pass_1/rpg-1-1-0.spool")
	kept := plant("kept", deadOwner, runKeptFile)
	unknown := plant("unknown", deadOwner, "pass_1/something")
	live := plant("live", thisRunOwner())
	held := plant("held", deadOwner)
	f, err := os.Open(filepath.Join(held, "pass_1", notesFile))
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, unix.Flock(int(f.Fd()), unix.LOCK_SH)) // as a process of its app still holds it

	sr, err := securedir.Open(root)
	require.NoError(t, err)
	defer sr.Close()
	var note, log bytes.Buffer
	tidyEarlierRuns(&note, zerolog.New(&log), sr)
	require.NoDirExists(t, empty)
	require.Contains(t, log.String(), "removed "+empty+", left empty by a rocprof-go that was killed")
	for _, d := range []string{spooled, kept, unknown, live, held} {
		require.DirExists(t, d)
		require.FileExists(t, filepath.Join(d, runOwnerFile))
		require.FileExists(t, filepath.Join(d, "pass_1", notesFile))
	}
	require.Equal(t, "rocprof-go: note: "+spooled+" holds 1 spools of an earlier run (left by a rocprof-go that was killed): `rocprof-go convert -i "+spooled+" -f csv` writes them out; delete the directory when done (this is said once)\n", note.String())
	require.NotContains(t, log.String(), "rocprof-go-run-spooled")
	// Named once: the next run says nothing of it (issue 43).
	note.Reset()
	tidyEarlierRuns(&note, zerolog.New(&log), sr)
	require.Empty(t, note.String())
	require.DirExists(t, spooled)
}
