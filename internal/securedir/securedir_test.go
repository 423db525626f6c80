package securedir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// otherUID owns what "another user" made; chown needs root, as CI has.
const otherUID = 54321

func requireRoot(t *testing.T) {
	t.Helper()
	require.Equal(t, 0, os.Geteuid(), "this test gives files to another uid: run it as root (CI does)")
}

func untrusted(t *testing.T, err error, path, reason string) {
	t.Helper()
	var ue *UntrustedError
	require.True(t, errors.As(err, &ue), "want an UntrustedError, got %v", err)
	require.Equal(t, path, ue.Path)
	require.Contains(t, ue.Reason, reason)
}

func TestOpenTrustsPrivateAndStickyPaths(t *testing.T) {
	base := t.TempDir()
	d, err := Open(base)
	require.NoError(t, err)
	require.Equal(t, base, d.Path())
	d.Close()

	sticky := filepath.Join(base, "sticky")
	require.NoError(t, os.Mkdir(sticky, 0o755))
	require.NoError(t, os.Chmod(sticky, 0o777|os.ModeSticky))
	d, err = Open(sticky)
	require.NoError(t, err, "a sticky directory like /tmp is trusted")
	d.Close()

	// A relative path with . and .. resolves to the absolute real path.
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(base))
	t.Cleanup(func() { os.Chdir(wd) })
	d, err = Open("./sticky/../sticky")
	require.NoError(t, err)
	require.Equal(t, sticky, d.Path())
	d.Close()
}

func TestOpenRefusesWhatOthersCanChange(t *testing.T) {
	requireRoot(t)
	base := t.TempDir()
	open := filepath.Join(base, "open")
	require.NoError(t, os.Mkdir(open, 0o755))
	require.NoError(t, os.Chmod(open, 0o777))
	require.NoError(t, os.Mkdir(filepath.Join(open, "below"), 0o700))
	_, err := Open(filepath.Join(open, "below"))
	untrusted(t, err, open, "writable by others (mode 0777) without the sticky bit")

	group := filepath.Join(base, "group")
	require.NoError(t, os.Mkdir(group, 0o755))
	require.NoError(t, os.Chmod(group, 0o775))
	_, err = Open(group)
	untrusted(t, err, group, "mode 0775")

	theirs := filepath.Join(base, "theirs")
	require.NoError(t, os.Mkdir(theirs, 0o755))
	require.NoError(t, os.Chown(theirs, otherUID, otherUID))
	_, err = Open(theirs)
	untrusted(t, err, theirs, "owned by uid 54321")

	// A link of another user's (in a sticky directory, say) is not
	// followed; one of ours is, and the real path is returned.
	sticky := filepath.Join(base, "sticky")
	require.NoError(t, os.Mkdir(sticky, 0o755))
	require.NoError(t, os.Chmod(sticky, 0o777|os.ModeSticky))
	link := filepath.Join(sticky, "link")
	require.NoError(t, os.Symlink(base, link))
	d, err := Open(link)
	require.NoError(t, err)
	require.Equal(t, base, d.Path())
	d.Close()
	require.NoError(t, os.Lchown(link, otherUID, otherUID))
	_, err = Open(link)
	untrusted(t, err, link, "a symbolic link owned by uid 54321")

	// A trusted link to an untrusted place is refused at the place.
	ok := filepath.Join(base, "tolink")
	require.NoError(t, os.Symlink(open, ok))
	_, err = Open(ok)
	untrusted(t, err, open, "without the sticky bit")
}

func TestCheckFile(t *testing.T) {
	requireRoot(t)
	base := t.TempDir()
	lib := filepath.Join(base, "lib.so")
	require.NoError(t, os.WriteFile(lib, []byte("x"), 0o755))
	real, err := CheckFile(lib)
	require.NoError(t, err)
	require.Equal(t, lib, real)

	require.NoError(t, os.Chmod(lib, 0o666))
	_, err = CheckFile(lib)
	untrusted(t, err, lib, "writable by others (mode 0666)")
	require.NoError(t, os.Chmod(lib, 0o755))
	require.NoError(t, os.Chown(lib, otherUID, otherUID))
	_, err = CheckFile(lib)
	untrusted(t, err, lib, "owned by uid 54321")

	_, err = CheckFile(base)
	untrusted(t, err, base, "not a regular file")
	_, err = CheckFile(filepath.Join(base, "missing.so"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestCreatedDirectoriesAndFiles(t *testing.T) {
	requireRoot(t)
	base := t.TempDir()
	root, err := Open(base)
	require.NoError(t, err)
	defer root.Close()

	run, err := root.MkdirTemp("run-")
	require.NoError(t, err)
	fi, err := os.Lstat(run.Path())
	require.NoError(t, err)
	require.True(t, fi.IsDir())
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())

	pass, err := run.Mkdir("pass_1")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(run.Path(), "pass_1"), pass.Path())
	_, err = run.Mkdir("pass_1")
	require.ErrorIs(t, err, os.ErrExist)

	// A file is never created through a link, nor over a file.
	victim := filepath.Join(base, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("secret"), 0o600))
	require.NoError(t, os.Symlink(victim, filepath.Join(run.Path(), "owner")))
	require.ErrorIs(t, run.WriteFile("owner", []byte("1"), 0o600), os.ErrExist)
	got, err := os.ReadFile(victim)
	require.NoError(t, err)
	require.Equal(t, "secret", string(got))
	require.NoError(t, run.WriteFile("kept", []byte("why"), 0o600))
	f, err := run.Open("kept")
	require.NoError(t, err)
	f.Close()
	_, err = run.Open("owner")
	require.Error(t, err, "a link is not opened")

	// MkdirPrivate closes a directory of ours, refuses one of another user's
	// and a link.
	mine := filepath.Join(base, "mine")
	require.NoError(t, os.Mkdir(mine, 0o755))
	require.NoError(t, os.Chmod(mine, 0o777))
	d, err := root.MkdirPrivate("mine")
	require.NoError(t, err)
	d.Close()
	fi, err = os.Lstat(mine)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	require.NoError(t, os.Chown(mine, otherUID, otherUID))
	_, err = root.MkdirPrivate("mine")
	untrusted(t, err, mine, "owned by uid 54321, not by you (uid 0)")
	require.NoError(t, os.Symlink(base, filepath.Join(base, "alink")))
	_, err = root.MkdirPrivate("alink")
	untrusted(t, err, filepath.Join(base, "alink"), "a symbolic link")
	require.NoError(t, os.WriteFile(filepath.Join(base, "afile"), nil, 0o600))
	_, err = root.MkdirPrivate("afile")
	untrusted(t, err, filepath.Join(base, "afile"), "not a directory")

	// Verify notices the directory was swapped for another.
	require.NoError(t, run.Verify())
	require.NoError(t, os.Rename(run.Path(), run.Path()+".aside"))
	require.NoError(t, os.Mkdir(run.Path(), 0o700))
	untrusted(t, run.Verify(), run.Path(), "replaced")
}
