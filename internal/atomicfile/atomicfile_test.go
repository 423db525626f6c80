package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// plant puts a symlink at name pointing to a victim file and returns the
// victim's path.
func plant(t *testing.T, dir, name string) string {
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("secret\n"), 0o600))
	require.NoError(t, os.Symlink(victim, filepath.Join(dir, name)))
	return victim
}

// entries lists a directory's names.
func entries(t *testing.T, dir string) []string {
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestCommitReplacesASymlinkNotItsTarget(t *testing.T) {
	dir := t.TempDir()
	victim := plant(t, dir, "out.csv")
	require.NoError(t, WriteFile(filepath.Join(dir, "out.csv"), []byte("a,b\n"), Public))
	data, err := os.ReadFile(victim)
	require.NoError(t, err)
	require.Equal(t, "secret\n", string(data), "the symlink's target is untouched")
	st, err := os.Lstat(filepath.Join(dir, "out.csv"))
	require.NoError(t, err)
	require.True(t, st.Mode().IsRegular(), "the final name is a regular file now")
	require.Equal(t, []string{"out.csv"}, entries(t, dir), "no temporary file is left")
}

func TestModeFollowsTheUmask(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	dir := t.TempDir()
	require.NoError(t, WriteFile(filepath.Join(dir, "pub"), nil, Public))
	require.NoError(t, WriteFile(filepath.Join(dir, "priv"), nil, Private))
	st, err := os.Stat(filepath.Join(dir, "pub"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), st.Mode().Perm(), "0666 less the umask, as os.Create")
	st, err = os.Stat(filepath.Join(dir, "priv"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	final := filepath.Join(dir, "results.json")
	boom := errors.New("boom")
	err := Write(final, Public, func(w io.Writer) error {
		_, _ = w.Write([]byte("{half"))
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.Empty(t, entries(t, dir), "a failed writer leaves nothing")
	f, err := Create(final, Public)
	require.NoError(t, err)
	require.True(t, IsTemp(f.TempPath()))
	sameDir(t, filepath.Dir(final), filepath.Dir(f.TempPath()), "the temporary file is beside its final name")
	_, err = f.Write([]byte("{half"))
	require.NoError(t, err)
	f.Abort()
	require.NoError(t, f.Commit(), "Commit after Abort does nothing")
	require.Empty(t, entries(t, dir))
}

func TestWriteErrorNamesTheFinalFile(t *testing.T) {
	// /dev/full fails every write with ENOSPC; the file is made elsewhere,
	// so write through a File whose descriptor is /dev/full's.
	dir := t.TempDir()
	final := filepath.Join(dir, "o_kernel_trace.csv")
	f, err := Create(final, Public)
	require.NoError(t, err)
	tmp := f.TempPath()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	require.NoError(t, err)
	real := f.f
	f.f = full
	_, err = f.Write([]byte("x"))
	require.True(t, errors.Is(err, syscall.ENOSPC))
	require.EqualError(t, err, "write "+final+": no space left on device")
	f.f = real
	f.Abort()
	full.Close()
	_, err = os.Stat(tmp)
	require.True(t, os.IsNotExist(err))
	require.Empty(t, entries(t, dir))
}

func TestTempNamesMatchNoOutputGlob(t *testing.T) {
	for _, base := range []string{"a.csv", "x_results.db", string(make([]byte, 300))} {
		n := tempName(base)
		require.True(t, IsTemp(n))
		require.LessOrEqual(t, len(n), maxName)
		for _, ext := range []string{".csv", ".db", ".json", ".parquet", ".pftrace", ".otf2"} {
			ok, _ := filepath.Match("*"+ext, n)
			require.False(t, ok, "%s matches *%s", n, ext)
		}
	}
}

func TestStageReplacesDirectoriesAndSymlinks(t *testing.T) {
	dir := t.TempDir()
	// An earlier archive: a directory with a file, and a symlinked anchor.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "results", "old"), 0o755))
	victim := plant(t, dir, "results.otf2")
	victimDir := t.TempDir()
	require.NoError(t, os.Symlink(victimDir, filepath.Join(dir, "results.def")))

	s, err := NewStage(dir)
	require.NoError(t, err)
	require.Len(t, entries(t, dir), 4)
	for _, e := range entries(t, dir) {
		if e != "results" && e != "results.otf2" && e != "results.def" {
			require.True(t, IsTemp(e), e)
		}
	}
	require.NoError(t, os.Mkdir(filepath.Join(s.Dir(), "results"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), "results", "0.evt"), []byte("e"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), "results.def"), []byte("d"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), "results.otf2"), []byte("a"), 0o644))
	require.NoError(t, s.Commit("results", "results.def", "results.otf2"))

	require.ElementsMatch(t, []string{"results", "results.def", "results.otf2"}, entries(t, dir))
	require.Equal(t, []string{"0.evt"}, entries(t, filepath.Join(dir, "results")))
	for _, n := range []string{"results.def", "results.otf2"} {
		st, err := os.Lstat(filepath.Join(dir, n))
		require.NoError(t, err)
		require.True(t, st.Mode().IsRegular(), n)
	}
	data, _ := os.ReadFile(victim)
	require.Equal(t, "secret\n", string(data))
	require.Empty(t, entries(t, victimDir))
}

func TestStageAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	s, err := NewStage(dir)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), "x"), nil, 0o644))
	s.Abort()
	require.Empty(t, entries(t, dir))
	err = func() error { s2, _ := NewStage(dir); return s2.Commit("missing") }()
	require.Error(t, err)
	require.Empty(t, entries(t, dir), "a failed commit removes the stage")
}

// BenchmarkCreateCommit measures what the temporary file and rename add
// to writing a file, and what an fsync before the rename would add.
func BenchmarkCreateCommit(b *testing.B) {
	dir := os.Getenv("ATOMICFILE_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	for _, size := range []int{4 << 10, 64 << 20} {
		data := make([]byte, size)
		name := strconv.Itoa(size>>10) + "KiB"
		b.Run("os.Create/"+name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				require.NoError(b, os.WriteFile(filepath.Join(dir, "plain"), data, 0o644))
			}
		})
		b.Run("temp+rename/"+name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				require.NoError(b, WriteFile(filepath.Join(dir, "atomic"), data, Public))
			}
		})
		b.Run("temp+fsync+rename/"+name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				f, err := Create(filepath.Join(dir, "synced"), Public)
				require.NoError(b, err)
				_, err = f.Write(data)
				require.NoError(b, err)
				require.NoError(b, f.f.Sync())
				require.NoError(b, f.Commit())
			}
		})
	}
}

// A symlink another user planted where an output sub-directory goes is not
// followed; the user's own (or root's) links are.
func TestMkdirAllRefusesOthersSymlinks(t *testing.T) {
	base := t.TempDir()
	victim := filepath.Join(base, "victim")
	require.NoError(t, os.Mkdir(victim, 0o700))
	own := filepath.Join(base, "own")
	require.NoError(t, os.Symlink(victim, own))
	require.NoError(t, MkdirAll(filepath.Join(own, "sub"), 0o755), "the user's own link is followed")
	require.DirExists(t, filepath.Join(victim, "sub"))

	planted := filepath.Join(base, "node01")
	require.NoError(t, os.Symlink(victim, planted))
	require.NoError(t, os.Lchown(planted, 4242, 4242))
	err := MkdirAll(filepath.Join(planted, "run"), 0o755)
	require.ErrorContains(t, err, planted+" cannot be trusted with outputs (a symbolic link owned by uid 4242, not by you")
	require.NoDirExists(t, filepath.Join(victim, "run"))
}

// OpenRegular refuses a link and a FIFO (without blocking on it) and opens
// a regular file.
func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "run.json")
	require.NoError(t, os.WriteFile(reg, []byte("{}"), 0o644))
	f, st, err := OpenRegular(reg)
	require.NoError(t, err)
	require.EqualValues(t, 2, st.Size())
	f.Close()
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(reg, link))
	_, _, err = OpenRegular(link)
	require.Error(t, err)
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	_, _, err = OpenRegular(fifo)
	require.ErrorContains(t, err, "not a regular file")
}

func sameDir(t *testing.T, a, b string, msg string) {
	t.Helper()
	sa, err := os.Stat(a)
	require.NoError(t, err)
	sb, err := os.Stat(b)
	require.NoError(t, err)
	require.True(t, os.SameFile(sa, sb), "%s: %s and %s", msg, a, b)
}

// The output directory is renamed away and a link to another directory
// put in its place while a file and a stage are being written (what the
// owner of a shared directory, or a member of a group-writable project
// directory, can do to another user's run): the outputs still land in the
// directory that was verified, and nothing is written through the link.
// Before, the temporary file was renamed by path, into the link's target.
func TestOutputsStayInTheVerifiedDirectory(t *testing.T) {
	base := t.TempDir()
	out := filepath.Join(base, "out")
	require.NoError(t, os.Mkdir(out, 0o755))
	elsewhere := t.TempDir()

	f, err := Create(filepath.Join(out, "run_results.db"), Public)
	require.NoError(t, err)
	_, err = f.Write([]byte("db"))
	require.NoError(t, err)
	s, err := NewStage(out)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), "run.otf2"), []byte("anchor"), 0o644))

	moved := filepath.Join(base, "moved")
	require.NoError(t, os.Rename(out, moved))
	require.NoError(t, os.Symlink(elsewhere, out))

	// A library that opens the file by path (SQLite) reaches Create's file.
	lib, err := os.OpenFile(f.TempPath(), os.O_RDWR|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = lib.Write([]byte("+pages"))
	require.NoError(t, err)
	require.NoError(t, lib.Close())

	require.NoError(t, f.Commit())
	require.NoError(t, s.Commit("run.otf2"))
	require.Empty(t, entries(t, elsewhere), "nothing is written through the planted link")
	require.ElementsMatch(t, []string{"run_results.db", "run.otf2"}, entries(t, moved))
	b, err := os.ReadFile(filepath.Join(moved, "run_results.db"))
	require.NoError(t, err)
	require.Equal(t, "db+pages", string(b))
}
