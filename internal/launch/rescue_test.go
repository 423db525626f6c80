package launch

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/securedir"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// A rescue copies (or links) the pass's spools into
// OUTDIR/.rocprof-go-unconverted/<rank-host-pid>/pass_N with a manifest
// that FindUnconverted reads back; discard removes it all.
func TestRescueMakesSpoolsDurableAndDiscardRemovesThem(t *testing.T) {
	base := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(base, "pass_1"), 0o700))
	data := bytes.Repeat([]byte("spool"), 100000)
	require.NoError(t, os.WriteFile(filepath.Join(base, "pass_1", "rpg-7-1-0.spool"), data, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(base, "pass_1", "notes"), []byte("x"), 0o600))
	pd, err := securedir.Open(filepath.Join(base, "pass_1"))
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "out")
	rs := &rescuer{passDir: pd, outDir: out, done: make(chan struct{}),
		man: UnconvertedManifest{Rank: "3", Host: "node/1", PID: 42, AppPID: 7, AppExitStatus: 139, Pass: 1, OutputFile: "%rank%_results"}}
	rs.start("received SIGTERM after the app exited")
	rs.start("again") // once
	res, err := rs.wait()
	require.NoError(t, err)
	require.Equal(t, 1, res.Spools)
	require.Equal(t, int64(len(data)), res.Bytes)
	require.Equal(t, filepath.Join(out, UnconvertedDir, "rank3-node_1-42"), res.Dir)

	us, ok, err := FindUnconverted(out)
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, us, 1)
	u := us[0]
	require.True(t, u.Complete())
	require.True(t, u.Manifest.Synced)
	require.Equal(t, "rank 3 (node/1, pid 42)", u.Label())
	require.Equal(t, "received SIGTERM after the app exited", u.Manifest.Reason)
	require.Equal(t, 139, u.Manifest.AppExitStatus)
	require.Equal(t, []string{filepath.Join(res.Dir, "pass_1", "rpg-7-1-0.spool")}, u.Spools)
	got, err := os.ReadFile(u.Spools[0])
	require.NoError(t, err)
	require.Equal(t, data, got)
	st, err := os.Stat(res.Dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())

	rs.discard()
	_, err = os.Stat(filepath.Join(out, UnconvertedDir))
	require.True(t, os.IsNotExist(err), "the rescue and its empty parent are removed: %v", err)
	_, ok, _ = FindUnconverted(out)
	require.False(t, ok)
}

// A rescuer never started is discarded without waiting.
func TestRescueNeverStartedDiscards(t *testing.T) {
	base := t.TempDir()
	pd, err := securedir.Open(base)
	require.NoError(t, err)
	rs := &rescuer{passDir: pd, outDir: t.TempDir(), done: make(chan struct{})}
	rs.discard()
	res, err := rs.wait()
	require.Nil(t, res)
	require.NoError(t, err)
}

// A planted link named like the rescue directory is refused, not followed.
func TestRescueRefusesALinkedUnconvertedDir(t *testing.T) {
	base := t.TempDir()
	pd, err := securedir.Open(base)
	require.NoError(t, err)
	out, elsewhere := t.TempDir(), t.TempDir()
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(out, UnconvertedDir)))
	rs := &rescuer{passDir: pd, outDir: out, done: make(chan struct{})}
	rs.start("test")
	_, err = rs.wait()
	require.Error(t, err)
	rs.close()
	entries, _ := os.ReadDir(elsewhere)
	require.Empty(t, entries)
}

// UsedSize is the header's reserved chunks; not a spool: not ok.
func TestUsedSize(t *testing.T) {
	h := make([]byte, 4*tracing.ChunkSize)
	copy(h, []byte("RPGSPOOL"))
	_, ok := tracing.UsedSize(bytes.NewReader(h), int64(len(h)))
	require.False(t, ok)
}

// rescueName is one path component whatever the host name says.
func TestRescueName(t *testing.T) {
	require.Equal(t, "rank2-vm-10", rescueName(UnconvertedManifest{Rank: "2", Host: "vm", PID: 10}))
	require.Equal(t, "host-10", rescueName(UnconvertedManifest{Host: "..", PID: 10}))
	require.Equal(t, "rank.._..-a_b-10", rescueName(UnconvertedManifest{Rank: "../..", Host: "a/b", PID: 10}))
}
