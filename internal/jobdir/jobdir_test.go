package jobdir

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

func paths(f Found) []string {
	var out []string
	for _, m := range f.Manifests {
		out = append(out, m.Path)
	}
	return out
}

func writeRank(t *testing.T, dir, job, rank string, at time.Time) string {
	t.Helper()
	p := Path(dir, job, rank)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(`{"rank":"`+rank+`"}`), 0o644))
	require.NoError(t, os.Chtimes(p, at, at))
	return p
}

func TestPathsAndNewestJob(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, filepath.Join(dir, NameOf(os.Geteuid()), Key("j1"), "rank-3.json"), Path(dir, "j1", "3"))
	require.Equal(t, "rank-a_b.json", filepath.Base(Path(dir, "j1", "a/b")))
	require.NotEqual(t, Key("j1"), Key("j2"))
	require.Empty(t, Newest(dir).Manifests)
	require.Empty(t, Newest(dir).Refused)

	now := time.Now()
	old0 := writeRank(t, dir, "old", "0", now.Add(-time.Hour))
	writeRank(t, dir, "old", "1", now.Add(-time.Hour))
	a := writeRank(t, dir, "new", "0", now)
	b := writeRank(t, dir, "new", "1", now.Add(-2*time.Hour))
	f := Newest(dir)
	require.ElementsMatch(t, []string{a, b}, paths(f), "the job written last, all its ranks")
	require.Equal(t, `{"rank":"0"}`, string(f.Manifests[0].Data))
	require.Empty(t, f.Refused)
	// A link planted among the ranks is not a manifest: refused, said.
	require.NoError(t, os.Symlink(old0, filepath.Join(filepath.Dir(a), "rank-9.json")))
	f = Newest(dir)
	require.ElementsMatch(t, []string{a, b}, paths(f))
	require.Len(t, f.Refused, 1)
	require.Contains(t, f.Refused[0], "rank-9.json is a symbolic link")
	// A file refused in another job's directory is not the newest job's
	// problem (it is said when no job is believed at all).
	require.NoError(t, syscall.Mkfifo(filepath.Join(filepath.Dir(old0), "rank-5.json"), 0o644))
	f = Newest(dir)
	require.Len(t, f.Refused, 1)
	only := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(only, OwnName(), Key("j")), 0o755))
	require.NoError(t, syscall.Mkfifo(Path(only, "j", "0"), 0o644))
	f = Newest(only)
	require.Empty(t, f.Manifests)
	require.Len(t, f.Refused, 1)
}

func TestOfListsOneJobsRanks(t *testing.T) {
	dir := t.TempDir()
	for _, r := range []string{"0", "1"} {
		writeRank(t, dir, "j", r, time.Now())
	}
	require.Len(t, Of(dir, "j").Manifests, 2)
	require.Empty(t, Of(dir, "other").Manifests)
}

// An output directory whose path holds glob characters (`[`, `\`) has its
// job's manifests read: the names come from the open directory. Before,
// Of and Newest globbed the joined path: out[1] had no job, and could
// take a sibling out1's.
func TestJobInADirectoryNamedLikeAPattern(t *testing.T) {
	for _, name := range []string{"out[1]", `back\slash`} {
		root := t.TempDir()
		dir := filepath.Join(root, name)
		writeRank(t, dir, "j", "0", time.Now())
		writeRank(t, filepath.Join(root, "out1"), "j", "5", time.Now())
		require.Equal(t, []string{Path(dir, "j", "0")}, paths(Of(dir, "j")), name)
		require.Equal(t, []string{Path(dir, "j", "0")}, paths(Newest(dir)), name)
	}
}

// Manifests planted in a shared output directory by another user are not
// believed: another user's file, a hard link, a FIFO, a file too big, a
// job directory that is a link; each is refused with the reason, the rank
// manifests of the user's own are read. Before, every regular file named
// rank-*.json was read (the job's readers believed another user's ranks).
func TestPlantedManifestsAreRefused(t *testing.T) {
	uid, gid := testsys.SecondUser(t)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, os.ModeSticky|0o777)) // a shared output directory
	mine := writeRank(t, dir, "j", "0", time.Now())
	jd := filepath.Dir(mine)

	theirs := writeRank(t, dir, "j", "1", time.Now())
	require.NoError(t, os.Chown(theirs, uid, gid))
	require.NoError(t, os.Link(mine, filepath.Join(jd, "rank-2.json")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(jd, "rank-3.json"), 0o644))
	big := filepath.Join(jd, "rank-4.json")
	require.NoError(t, os.WriteFile(big, nil, 0o644))
	require.NoError(t, os.Truncate(big, MaxBytes+1))

	f := Of(dir, "j")
	require.Empty(t, paths(f), "the hard link makes rank-0.json two-linked too: neither is believed")
	require.NoError(t, os.Remove(filepath.Join(jd, "rank-2.json")))
	f = Of(dir, "j")
	require.Equal(t, []string{mine}, paths(f))
	require.Len(t, f.Refused, 3)
	require.Contains(t, f.Refused[0], "rank-1.json belongs to uid ")
	require.Contains(t, f.Refused[0], "not to you (uid 0)")
	require.Contains(t, f.Refused[1], "rank-3.json is not a regular file")
	require.Contains(t, f.Refused[2], "rank-4.json is 67108865 bytes")

	// The job directory itself replaced by a link to another directory.
	other := t.TempDir()
	writeRank(t, other, "j", "7", time.Now())
	require.NoError(t, os.RemoveAll(filepath.Join(dir, OwnName())))
	require.NoError(t, os.Symlink(filepath.Join(other, OwnName()), filepath.Join(dir, OwnName())))
	f = Newest(dir)
	require.Empty(t, f.Manifests)
	require.Empty(t, f.Refused)
	require.Len(t, f.Warnings, 1)
	require.Contains(t, f.Warnings[0], OwnName()+" is a symbolic link: not followed")
	// A job's directory inside it replaced by a link.
	require.NoError(t, os.Remove(filepath.Join(dir, OwnName())))
	require.NoError(t, os.Mkdir(filepath.Join(dir, OwnName()), 0o700))
	require.NoError(t, os.Symlink(filepath.Join(other, OwnName(), Key("j")), filepath.Join(dir, OwnName(), Key("j"))))
	f = Newest(dir)
	require.Empty(t, f.Manifests)
	require.Len(t, f.Refused, 1)
	require.Contains(t, f.Refused[0], "is not a directory (a symbolic link or a file)")
}

// Each user's job manifests go to a directory of their own name
// (.rocprof-go-job-<uid>): another user's .rocprof-go-job (the name every
// user shared before) is not read and not written; when another user
// holds this user's name too (a directory of theirs, or a link), Write
// makes one of this user's beside it, says so, and the next rank reuses
// it; the readers read both, and a directory of the old name that is the
// user's own. Before, every user's ranks wrote into .rocprof-go-job,
// whoever owned it.
func TestJobDirectoryIsPerUser(t *testing.T) {
	uid, gid := testsys.SecondUser(t)
	for _, plant := range []string{"directory", "link"} {
		dir := filepath.Join(t.TempDir(), "shared")
		require.NoError(t, os.Mkdir(dir, 0o777))
		require.NoError(t, os.Chmod(dir, os.ModeSticky|0o777))
		theirs := t.TempDir()
		require.NoError(t, os.Chown(theirs, uid, gid))
		for _, name := range []string{Name, OwnName()} {
			p := filepath.Join(dir, name)
			if plant == "link" {
				require.NoError(t, os.Symlink(theirs, p))
				require.NoError(t, os.Lchown(p, uid, gid))
				continue
			}
			require.NoError(t, os.MkdirAll(filepath.Join(p, Key("j")), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(p, Key("j"), "rank-1.json"), []byte(`{"theirs":1}`), 0o644))
			require.NoError(t, filepath.Walk(p, func(q string, _ os.FileInfo, err error) error {
				if err == nil {
					err = os.Lchown(q, uid, gid)
				}
				return err
			}))
		}
		var warn bytes.Buffer
		p0, err := Write(dir, "j", "0", []byte(`{"rank":"0"}`), &warn)
		require.NoError(t, err, plant)
		require.Contains(t, warn.String(), "this rank's job manifest goes to "+filepath.Join(dir, OwnName())+"-", plant)
		warn.Reset()
		p1, err := Write(dir, "j", "1", []byte(`{"rank":"1"}`), &warn)
		require.NoError(t, err, plant)
		require.Equal(t, filepath.Dir(p0), filepath.Dir(p1), "%s: the second rank reuses the directory made beside the name", plant)
		st, err := os.Stat(filepath.Dir(filepath.Dir(p0)))
		require.NoError(t, err)
		require.Equal(t, os.ModeDir|0o700, st.Mode(), plant)
		entries, err := os.ReadDir(theirs)
		require.NoError(t, err)
		require.Empty(t, entries, plant)

		for _, f := range []Found{Newest(dir), Of(dir, "j")} {
			require.Equal(t, []string{p0, p1}, paths(f), plant)
			require.Empty(t, f.Refused, plant)
			require.Len(t, f.Warnings, 1, plant)
			require.Contains(t, f.Warnings[0], filepath.Join(dir, OwnName()), plant)
			require.Len(t, f.Others, 1, plant)
			require.Contains(t, f.Others[0], filepath.Join(dir, Name)+" (uid "+strconv.Itoa(uid)+")", plant)
		}
	}

	// The old name, the user's own: read, with the per-user name's ranks.
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, Name, Key("j")), 0o755))
	old := filepath.Join(dir, Name, Key("j"), "rank-0.json")
	require.NoError(t, os.WriteFile(old, []byte(`{"rank":"0"}`), 0o644))
	p1, err := Write(dir, "j", "1", []byte(`{"rank":"1"}`), nil)
	require.NoError(t, err)
	require.Equal(t, Path(dir, "j", "1"), p1)
	f := Newest(dir)
	require.Equal(t, []string{old, p1}, paths(f))
	require.Empty(t, f.Warnings)
	require.Empty(t, f.Others)
}

func TestMissingRanks(t *testing.T) {
	require.Equal(t, []int{1}, Missing("2", []string{"0"}))
	require.Equal(t, []int{0, 2, 3, 4, 7}, Missing("8", []string{"1", "5", "6"}))
	require.Nil(t, Missing("2", []string{"0", "1"}))
	require.Nil(t, Missing("", []string{"0"}), "no size: nothing can be said")
	require.Nil(t, Missing("3", []string{"a", "b"}), "ranks that are no numbers cannot be counted")
	require.Equal(t, "0, 2-4, 7", Ranges([]int{0, 2, 3, 4, 7}))
}
