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

	"github.com/rocprof-go/rocprof-go/internal/securedir"
)

// A rocprof-go killed while attached (docs/attach.md) leaves its run
// directory with the attach's configuration and socket: the next run
// removes it when nothing was recorded, and names it with the command
// that converts it when a process recorded.
func TestTidyEarlierRunsAfterAKilledAttach(t *testing.T) {
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	owner := strconv.Itoa(dead.ProcessState.Pid()) + " 1\n"
	root := t.TempDir()
	plant := func(name string, spool bool) string {
		d := filepath.Join(root, runDirPrefix+name)
		require.NoError(t, os.MkdirAll(filepath.Join(d, "pass_1"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(d, runOwnerFile), []byte(owner), 0o600))
		for _, f := range AttachFiles {
			require.NoError(t, os.WriteFile(filepath.Join(d, f), []byte("x"), 0o600))
		}
		if spool {
			require.NoError(t, os.WriteFile(filepath.Join(d, "pass_1", "rpg-1-1-0.spool"), []byte("x"), 0o600))
		}
		return d
	}
	empty := plant("attachempty", false)
	spooled := plant("attachspooled", true)
	sr, err := securedir.Open(root)
	require.NoError(t, err)
	defer sr.Close()
	var note, log bytes.Buffer
	tidyEarlierRuns(&note, zerolog.New(&log), sr)
	require.NoDirExists(t, empty)
	require.DirExists(t, spooled)
	require.Equal(t, "rocprof-go: note: "+spooled+" holds 1 spools of an earlier run (left by a rocprof-go that was killed): `rocprof-go convert -i "+spooled+" -f csv` writes them out; delete the directory when done (this is said once)\n", note.String())
}
