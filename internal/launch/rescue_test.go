package launch

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// A run directory in OUTDIR/.rocprof-go-unconverted whose rocprof-go was
// killed (no rescue) is listed as an orphan, named from its spool's
// header; one a rescue holds, one whose rocprof-go still runs here, and a
// symbolic link named like one are not.
func TestRescueFindsOrphanedRunDirectories(t *testing.T) {
	out := t.TempDir()
	top := filepath.Join(out, UnconvertedDir)
	host, _ := os.Hostname()
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	run := func(name, h string, owner int) string {
		d := filepath.Join(top, runDirPrefix+name)
		require.NoError(t, os.MkdirAll(filepath.Join(d, "pass_1"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(d, runOwnerFile), []byte(strconv.Itoa(owner)), 0o600))
		hdr, err := tracing.EncodeHeader(&tracing.ProcessInfo{PID: 4321, Hostname: h,
			Environ: []string{"OMPI_COMM_WORLD_RANK=5", "OMPI_COMM_WORLD_SIZE=8"}}, 1)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(d, "pass_1", "rpg-4321-1-0.spool"), hdr, 0o600))
		return d
	}
	orphan := run("killed", host, dead.Process.Pid)
	run("live", host, os.Getpid())
	held := run("held", "elsewhere", 1)
	require.NoError(t, os.Symlink(orphan, filepath.Join(top, runDirPrefix+"link")))
	rescue := filepath.Join(top, "rank5-elsewhere-1")
	require.NoError(t, os.Mkdir(rescue, 0o700))
	sd, err := securedir.Open(rescue)
	require.NoError(t, err)
	require.NoError(t, writeRescueManifest(sd, &UnconvertedManifest{State: RescueComplete, Rank: "5", Host: "elsewhere", PID: 1, RunDir: held}))
	sd.Close()

	for _, in := range []string{out, top} {
		us, ok, err := FindUnconverted(in)
		require.NoError(t, err)
		require.True(t, ok)
		require.Len(t, us, 2, "the rescue and the orphan: %+v", us)
		require.False(t, us[0].Orphan)
		u := us[1]
		require.True(t, u.Orphan)
		require.Equal(t, orphan, u.Dir)
		require.True(t, u.Complete())
		require.False(t, u.AppRunning)
		require.Equal(t, fmt.Sprintf("rank 5 (%s, pid %d)", host, dead.Process.Pid), u.Label())
		require.Equal(t, 4321, u.Manifest.AppPID)
		require.Equal(t, "8", u.Manifest.Size)
		require.Contains(t, u.Manifest.Reason, "killed before its app ended")
		require.Equal(t, []string{filepath.Join(orphan, "pass_1", "rpg-4321-1-0.spool")}, u.Spools)
	}
}
