package att

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// A dispatch's directory and stats CSV are renamed into place when
// complete: symlinks planted at both names are replaced, not followed, and
// no temporary entry is left. On a full file system neither appears.
func TestDispatchWriteReplacesSymlinksAndLeavesNothingOnFailure(t *testing.T) {
	out := t.TempDir()
	victims := t.TempDir()
	d := &Dispatch{Dir: filepath.Join(out, "ui_output_agent_1_dispatch_1")}
	require.NoError(t, os.WriteFile(filepath.Join(victims, "stats"), []byte("victim\n"), 0o600))
	require.NoError(t, os.Symlink(filepath.Join(victims, "stats"), StatsName(d.Dir)))
	require.NoError(t, os.Symlink(victims, d.Dir))
	require.NoError(t, d.Write())

	st, err := os.Lstat(d.Dir)
	require.NoError(t, err)
	require.True(t, st.IsDir(), "the dispatch directory replaced the link")
	require.FileExists(t, filepath.Join(d.Dir, "code.json"))
	st, err = os.Lstat(StatsName(d.Dir))
	require.NoError(t, err)
	require.True(t, st.Mode().IsRegular())
	data, err := os.ReadFile(filepath.Join(victims, "stats"))
	require.NoError(t, err)
	require.Equal(t, "victim\n", string(data))
	ents, err := os.ReadDir(victims)
	require.NoError(t, err)
	require.Len(t, ents, 1, "nothing was written into the linked directory")
	ents, err = os.ReadDir(out)
	require.NoError(t, err)
	require.Len(t, ents, 2, "the directory and the CSV, no temporary entry")

	// A 4 KiB tmpfs: filenames.json, which lists 4096 counter names,
	// does not fit.
	mnt := testsys.SmallTmpfs(t, "4k")
	d = &Dispatch{Dir: filepath.Join(mnt, "ui_output_agent_1_dispatch_2"), Counters: make([]string, 4096)}
	for i := range d.Counters {
		d.Counters[i] = "SQ_WAVES_COUNTER_WITH_A_LONG_NAME"
	}
	err = d.Write()
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.Contains(t, err.Error(), d.Dir, "the error names the final path")
	ents, err = os.ReadDir(mnt)
	require.NoError(t, err)
	require.Empty(t, ents, "neither the directory, the CSV nor a temporary entry is left")
}
