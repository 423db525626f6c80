package launch

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/securedir"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
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
	top := filepath.Join(out, UnconvertedDirOf(os.Geteuid()))
	require.Equal(t, filepath.Join(top, "rank3-node_1-42"), res.Dir)

	rec, ok, err := FindUnconverted(out)
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, rec.Found, 1)
	u := rec.Found[0]
	require.True(t, u.Complete())
	require.True(t, u.Manifest.Synced)
	require.Equal(t, "rank 3 (node/1, pid 42)", u.Label())
	require.Equal(t, "received SIGTERM after the app exited", u.Manifest.Reason)
	require.Equal(t, 139, u.Manifest.AppExitStatus)
	require.Equal(t, res.Dir, u.Dir)
	require.Equal(t, top, u.Top)
	require.Equal(t, out, u.OutputDir)
	require.Len(t, u.Spools, 1)
	require.Equal(t, "rpg-7-1-0.spool", filepath.Base(u.Spools[0]))
	got, err := os.ReadFile(u.Spools[0])
	require.NoError(t, err)
	require.Equal(t, data, got)
	rec.Close()
	st, err := os.Stat(res.Dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())

	rs.discard()
	_, err = os.Stat(top)
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

// A planted link named like the rescue directory is not followed: the
// rescue goes to a new directory of its own beside it.
func TestRescueRefusesALinkedUnconvertedDir(t *testing.T) {
	base := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(base, "rpg-1-1-0.spool"), []byte("spool"), 0o600))
	pd, err := securedir.Open(base)
	require.NoError(t, err)
	out, elsewhere := t.TempDir(), t.TempDir()
	name := UnconvertedDirOf(os.Geteuid())
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(out, name)))
	var warn bytes.Buffer
	rs := &rescuer{passDir: pd, outDir: out, done: make(chan struct{}), stderr: &warn, man: UnconvertedManifest{Host: "h", PID: 2, Pass: 1}}
	rs.start("test")
	res, err := rs.wait()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(res.Dir, filepath.Join(out, name+"-")), res.Dir)
	require.Contains(t, warn.String(), "a symbolic link")
	rs.close()
	entries, _ := os.ReadDir(elsewhere)
	require.Empty(t, entries)
	rec, ok, _ := FindUnconverted(out)
	require.True(t, ok)
	require.Len(t, rec.Found, 1)
	require.Contains(t, strings.Join(rec.Warnings, "\n"), "is a symbolic link: not followed")
	rec.Close()
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

// A run directory in OUTDIR/.rocprof-go-unconverted-<uid> whose
// rocprof-go was killed (no rescue) is listed as an orphan, named from its
// spool's header; one a rescue holds, one whose rocprof-go still runs
// here, and a symbolic link named like one are not. The output directory's
// path holds '[' and '\\' (no glob pattern is made of it). An owner file
// whose pid is now another process (pid reuse: a start time that differs,
// or an older owner file naming a process that is no rocprof-go) does not
// hide the orphan.
func TestRescueFindsOrphanedRunDirectories(t *testing.T) {
	out := filepath.Join(t.TempDir(), `out[1]\x`)
	for _, name := range []string{UnconvertedDirOf(os.Geteuid()), UnconvertedDir} {
		t.Run(name, func(t *testing.T) {
			top := filepath.Join(out, name)
			host, _ := os.Hostname()
			dead := exec.Command("true")
			require.NoError(t, dead.Run())
			run := func(name, h, owner string) string {
				d := filepath.Join(top, runDirPrefix+name)
				require.NoError(t, os.MkdirAll(filepath.Join(d, "pass_1"), 0o700))
				require.NoError(t, os.WriteFile(filepath.Join(d, runOwnerFile), []byte(owner), 0o600))
				hdr, err := tracing.EncodeHeader(&tracing.ProcessInfo{PID: 4321, Hostname: h,
					Environ: []string{"OMPI_COMM_WORLD_RANK=5", "OMPI_COMM_WORLD_SIZE=8"}}, 1)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(d, "pass_1", "rpg-4321-1-0.spool"), hdr, 0o600))
				return d
			}
			orphan := run("killed", host, strconv.Itoa(dead.Process.Pid))
			run("live", host, thisRunOwner())
			// This test's pid, reused: the start time differs.
			reused := run("reused", host, fmt.Sprintf("%d 1", os.Getpid()))
			// An older owner file (the pid alone) naming a live process
			// that is no rocprof-go.
			older := run("older", host, strconv.Itoa(os.Getpid()))
			held := run("held", "elsewhere", "1")
			require.NoError(t, os.Symlink(orphan, filepath.Join(top, runDirPrefix+"link")))
			rescue := filepath.Join(top, "rank5-elsewhere-1")
			require.NoError(t, os.Mkdir(rescue, 0o700))
			sd, err := securedir.Open(rescue)
			require.NoError(t, err)
			require.NoError(t, writeRescueManifest(sd, &UnconvertedManifest{State: RescueComplete, Rank: "5", Host: "elsewhere", PID: 1, RunDir: held}))
			sd.Close()
			t.Cleanup(func() { os.RemoveAll(top) })

			for _, in := range []string{out, top} {
				rec, ok, err := FindUnconverted(in)
				require.NoError(t, err)
				require.True(t, ok)
				us := rec.Found
				require.Len(t, us, 4, "the rescue and the orphans: %+v", us)
				require.False(t, us[0].Orphan)
				var dirs []string
				for _, u := range us[1:] {
					require.True(t, u.Orphan)
					dirs = append(dirs, u.Dir)
				}
				require.Equal(t, []string{orphan, older, reused}, dirs)
				u := us[1]
				require.True(t, u.Complete())
				require.False(t, u.AppRunning)
				require.Equal(t, fmt.Sprintf("rank 5 (%s, pid %d)", host, dead.Process.Pid), u.Label())
				require.Equal(t, 4321, u.Manifest.AppPID)
				require.Equal(t, "8", u.Manifest.Size)
				require.Contains(t, u.Manifest.Reason, "killed before its app ended")
				require.Len(t, u.Spools, 1)
				data, err := os.ReadFile(u.Spools[0])
				require.NoError(t, err)
				want, _ := os.ReadFile(filepath.Join(orphan, "pass_1", "rpg-4321-1-0.spool"))
				require.Equal(t, want, data)
				require.Contains(t, strings.Join(rec.Warnings, "\n"), runDirPrefix+"link is a symbolic link: not followed")
				rec.Close()
			}
		})
	}
}

// A rescue reached through a symbolic link is not read: a link to another
// rescue of the directory would count its records twice, one to a rescue
// elsewhere (a private one of this user's) would bring it where whoever
// planted the link reads the outputs.
func TestFindUnconvertedFollowsNoLink(t *testing.T) {
	out, private := t.TempDir(), t.TempDir()
	mk := func(top, name string) string {
		d := filepath.Join(top, name)
		require.NoError(t, os.MkdirAll(filepath.Join(d, "pass_1"), 0o700))
		sd, err := securedir.Open(d)
		require.NoError(t, err)
		require.NoError(t, writeRescueManifest(sd, &UnconvertedManifest{State: RescueComplete, Rank: name, Host: "h", PID: 1}))
		sd.Close()
		require.NoError(t, os.WriteFile(filepath.Join(d, "pass_1", "rpg-1-1-0.spool"), []byte("x"), 0o600))
		return d
	}
	top := filepath.Join(out, UnconvertedDir)
	a := mk(top, "0")
	elsewhere := mk(filepath.Join(private, UnconvertedDir), "9")
	require.NoError(t, os.Symlink(a, filepath.Join(top, "1")))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(top, "2")))
	require.NoError(t, os.Symlink(filepath.Join(private, UnconvertedDir), filepath.Join(out, UnconvertedDirOf(os.Geteuid()))))
	rec, ok, err := FindUnconverted(out)
	require.NoError(t, err)
	require.True(t, ok)
	defer rec.Close()
	require.Len(t, rec.Found, 1, "%+v", rec.Found)
	require.Equal(t, a, rec.Found[0].Dir)
	require.Len(t, rec.Warnings, 3, "%q", rec.Warnings)
}

// A rescue whose manifest cannot be read is passed over, named, and the
// others are read; a manifest's control characters never reach a label.
func TestFindUnconvertedSkipsABadManifest(t *testing.T) {
	out := t.TempDir()
	top := filepath.Join(out, UnconvertedDirOf(os.Geteuid()))
	for _, name := range []string{"0", "1", "2"} {
		require.NoError(t, os.MkdirAll(filepath.Join(top, name), 0o700))
	}
	require.NoError(t, os.WriteFile(filepath.Join(top, "0", UnconvertedManifestName), []byte("{not json"), 0o600))
	sd, err := securedir.Open(filepath.Join(top, "1"))
	require.NoError(t, err)
	require.NoError(t, writeRescueManifest(sd, &UnconvertedManifest{State: RescueComplete, Rank: "1\x1b[2J", Host: "h\x1b]0;x\x07", PID: 1}))
	sd.Close()
	require.NoError(t, os.WriteFile(filepath.Join(top, "2", UnconvertedManifestName), bytes.Repeat([]byte(" "), rescueManifestLimit+1), 0o600))
	rec, ok, err := FindUnconverted(out)
	require.NoError(t, err)
	require.True(t, ok)
	defer rec.Close()
	require.Len(t, rec.Found, 1)
	require.Equal(t, `rank 1\x1b[2J (h\x1b]0;x\a, pid 1)`, rec.Found[0].Label())
	require.Len(t, rec.Unread, 2)
	require.Contains(t, rec.Unread[0], filepath.Join(top, "0", UnconvertedManifestName)+": not a rescue manifest")
	require.Contains(t, rec.Unread[1], "more than the")
}

// Another run of this user removing the (empty) hidden directory between
// its opening and the creation of a rescue in it does not fail the rescue.
func TestRescueSurvivesItsDirectoryRemovedMeanwhile(t *testing.T) {
	base := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(base, "rpg-1-1-0.spool"), []byte("spool"), 0o600))
	pd, err := securedir.Open(base)
	require.NoError(t, err)
	out := t.TempDir()
	removed := 0
	afterTopOpened = func(top *securedir.Dir) {
		if removed == 0 {
			removed++
			require.NoError(t, os.Remove(top.Path()))
		}
	}
	defer func() { afterTopOpened = func(*securedir.Dir) {} }()
	rs := &rescuer{passDir: pd, outDir: out, done: make(chan struct{}), man: UnconvertedManifest{Host: "h", PID: 3, Pass: 1}}
	rs.start("test")
	res, err := rs.wait()
	require.NoError(t, err)
	require.Equal(t, 1, removed)
	require.Equal(t, 1, res.Spools)
	rec, ok, _ := FindUnconverted(out)
	require.True(t, ok)
	require.Len(t, rec.Found, 1)
	rec.Close()
	rs.close()
}

// A run directory kept under a spool root whose path holds '[' is listed
// (it was no glob pattern's match).
func TestNoteKeptSpoolsUnderABracketPath(t *testing.T) {
	root := filepath.Join(t.TempDir(), "spools[a")
	d := filepath.Join(root, runDirPrefix+"x")
	require.NoError(t, os.MkdirAll(filepath.Join(d, "pass_1"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(d, runKeptFile), []byte("disk full\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(d, "pass_1", "rpg-1-1-0.spool"), []byte("x"), 0o600))
	sr, err := securedir.Open(root)
	require.NoError(t, err)
	defer sr.Close()
	var b bytes.Buffer
	tidyEarlierRuns(&b, zerolog.Nop(), sr)
	require.Contains(t, b.String(), "rocprof-go: note: "+d+" holds 1 spools of an earlier run (kept when its outputs could not be written)")
}

// Another user's hidden rescue directory in a shared output directory (the
// name of older versions, or this user's own per-user name taken first)
// does not stop the rescue: it goes to a directory of this user's beside
// them, which FindUnconverted reads, and theirs is not read.
func TestRescueBesideAnotherUsersHiddenDirectory(t *testing.T) {
	uid, gid := testsys.SecondUser(t)
	out := testsys.SharedDir(t)
	for _, name := range []string{UnconvertedDir, UnconvertedDirOf(os.Geteuid())} {
		testsys.AsUser(t, uid, gid, nil, "mkdir", "-m", "0777", filepath.Join(out, name))
		testsys.AsUser(t, uid, gid, nil, "mkdir", filepath.Join(out, name, "planted"))
		testsys.AsUser(t, uid, gid, nil, "sh", "-c", `echo '{"state":"complete","host":"evil","pid":1}' > "$1"`, "sh", filepath.Join(out, name, "planted", UnconvertedManifestName))
	}
	base := t.TempDir()
	data := bytes.Repeat([]byte("spool"), 1000)
	require.NoError(t, os.WriteFile(filepath.Join(base, "rpg-1-1-0.spool"), data, 0o600))
	pd, err := securedir.Open(base)
	require.NoError(t, err)
	var warn bytes.Buffer
	rs := &rescuer{passDir: pd, outDir: out, done: make(chan struct{}), stderr: &warn,
		man: UnconvertedManifest{Rank: "0", Host: "h", PID: 5, Pass: 1}}
	rs.start("test")
	res, err := rs.wait()
	require.NoError(t, err, "the rescue is made in spite of the other user's directories")
	require.Equal(t, 1, res.Spools)
	require.Contains(t, warn.String(), fmt.Sprintf("owned by uid %d", uid))
	rs.close()

	rec, ok, err := FindUnconverted(out)
	require.NoError(t, err)
	require.True(t, ok)
	defer rec.Close()
	require.Len(t, rec.Found, 1, "%+v", rec.Found)
	require.Equal(t, "rank 0 (h, pid 5)", rec.Found[0].Label())
	got, err := os.ReadFile(rec.Found[0].Spools[0])
	require.NoError(t, err)
	require.Equal(t, data, got)
	require.Len(t, rec.Warnings, 2, "%q", rec.Warnings)
	for _, w := range rec.Warnings {
		require.Contains(t, w, fmt.Sprintf("belongs to uid %d, not to you", uid))
	}
}

// A rescue in one hidden directory of this user's whose run directory is
// in another (the spool root and the rescue each made their own beside a
// name another user holds) holds that run directory's spools: it is not
// listed again as an orphan.
func TestRescueHoldsItsRunDirectoryInAnotherHiddenDirectory(t *testing.T) {
	out := t.TempDir()
	own := UnconvertedDirOf(os.Geteuid())
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	runDir := filepath.Join(out, own+"-a", runDirPrefix+"x")
	require.NoError(t, os.MkdirAll(filepath.Join(runDir, "pass_1"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(runDir, runOwnerFile), []byte(strconv.Itoa(dead.Process.Pid)), 0o600))
	hdr, err := tracing.EncodeHeader(&tracing.ProcessInfo{PID: 4321, Hostname: "h"}, 1)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(runDir, "pass_1", "rpg-4321-1-0.spool"), hdr, 0o600))
	rescue := filepath.Join(out, own+"-b", "rank0-h-1")
	require.NoError(t, os.MkdirAll(filepath.Join(rescue, "pass_1"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(rescue, "pass_1", "rpg-4321-1-0.spool"), hdr, 0o600))
	sd, err := securedir.Open(rescue)
	require.NoError(t, err)
	require.NoError(t, writeRescueManifest(sd, &UnconvertedManifest{State: RescueComplete, Rank: "0", Host: "h", PID: 1, RunDir: runDir}))
	sd.Close()
	for _, d := range []string{own + "-a", own + "-b"} {
		require.NoError(t, os.Chmod(filepath.Join(out, d), 0o700))
	}
	rec, ok, err := FindUnconverted(out)
	require.NoError(t, err)
	require.True(t, ok)
	defer rec.Close()
	require.Len(t, rec.Found, 1, "%+v", rec.Found)
	require.False(t, rec.Found[0].Orphan)
}

// An empty hidden directory (a run killed before it put anything there)
// is no rescue: the directory is read as any other input.
func TestFindUnconvertedEmptyHiddenDirectory(t *testing.T) {
	out := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(out, UnconvertedDirOf(os.Geteuid())), 0o700))
	rec, ok, err := FindUnconverted(out)
	require.NoError(t, err)
	require.False(t, ok)
	require.Empty(t, rec.Found)
	rec.Close()

	// One holding only an orphaned run directory holds a rescue.
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	d := filepath.Join(out, UnconvertedDirOf(os.Geteuid()), runDirPrefix+"x")
	require.NoError(t, os.MkdirAll(filepath.Join(d, "pass_1"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(d, runOwnerFile), []byte(strconv.Itoa(dead.Process.Pid)), 0o600))
	hdr, err := tracing.EncodeHeader(&tracing.ProcessInfo{PID: 4321, Hostname: "h"}, 1)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(d, "pass_1", "rpg-4321-1-0.spool"), hdr, 0o600))
	rec, ok, err = FindUnconverted(out)
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, rec.Found, 1)
	require.True(t, rec.Found[0].Orphan)
	rec.Close()
}
