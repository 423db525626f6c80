package securedir

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func outputRefused(t *testing.T, err error, path, reason string) {
	t.Helper()
	var oe *OutputError
	require.True(t, errors.As(err, &oe), "want an OutputError, got %v", err)
	require.Equal(t, path, oe.Path)
	require.Contains(t, oe.Reason, reason)
	require.Contains(t, err.Error(), "-d", "the message gives the fix")
}

// The output rule: a directory every user can write without the sticky
// bit is refused, on the path or as the directory itself, before anything
// is created below it; sticky shared directories, group-writable project
// directories and another user's shared directory are used; missing
// directories are created (mode as asked, owned by the user).
func TestMkdirOutputRefusesWorldWritableNonStickyDirectories(t *testing.T) {
	requireRoot(t)
	base := t.TempDir()

	open := filepath.Join(base, "open")
	require.NoError(t, os.Mkdir(open, 0o755))
	require.NoError(t, os.Chmod(open, 0o777))
	_, err := MkdirOutput(open, 0o755)
	outputRefused(t, err, open, "writable by every user (mode 0777) without the sticky bit")
	require.Contains(t, err.Error(), "chmod +t")
	_, err = MkdirOutput(filepath.Join(open, "run", "out"), 0o755)
	outputRefused(t, err, open, "without the sticky bit")
	require.NoDirExists(t, filepath.Join(open, "run"), "nothing is created below a refused directory")

	sticky := filepath.Join(base, "sticky")
	require.NoError(t, os.Mkdir(sticky, 0o755))
	require.NoError(t, os.Chmod(sticky, 0o777|os.ModeSticky))
	d, err := MkdirOutput(filepath.Join(sticky, "a", "b"), 0o750)
	require.NoError(t, err, "a sticky shared directory like /tmp is used")
	require.Equal(t, filepath.Join(sticky, "a", "b"), d.Path())
	require.NoError(t, d.CheckWritable())
	d.Close()
	for _, p := range []string{filepath.Join(sticky, "a"), filepath.Join(sticky, "a", "b")} {
		st, err := os.Lstat(p)
		require.NoError(t, err)
		require.True(t, st.IsDir())
		require.Zero(t, st.Mode().Perm()&^0o750, "%s: created with the mode asked (less the umask)", p)
		require.Equal(t, uint32(os.Geteuid()), st.Sys().(*syscall.Stat_t).Uid)
	}
	ents, err := os.ReadDir(filepath.Join(sticky, "a", "b"))
	require.NoError(t, err)
	require.Empty(t, ents, "the write check leaves nothing")

	// A project directory: another user's, group-writable (setgid).
	project := filepath.Join(base, "project")
	require.NoError(t, os.Mkdir(project, 0o755))
	require.NoError(t, os.Chmod(project, 0o775|os.ModeSetgid))
	require.NoError(t, os.Chown(project, otherUID, otherUID))
	d, err = MkdirOutput(filepath.Join(project, "results"), 0o755)
	require.NoError(t, err, "a group-writable project directory is used")
	d.Close()

	// The project lead's link in their directory is followed; another
	// user's link in a sticky shared directory is not.
	lead := filepath.Join(project, "latest")
	require.NoError(t, os.Symlink("results", lead))
	require.NoError(t, os.Lchown(lead, otherUID, otherUID))
	d, err = MkdirOutput(filepath.Join(lead, "run1"), 0o755)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(project, "results", "run1"), d.Path())
	d.Close()
	planted := filepath.Join(sticky, "node01")
	require.NoError(t, os.Symlink(project, planted))
	require.NoError(t, os.Lchown(planted, otherUID+1, otherUID+1))
	_, err = MkdirOutput(filepath.Join(planted, "run"), 0o755)
	outputRefused(t, err, planted, "a symbolic link owned by uid")

	// A world-writable non-sticky directory reached through a link is
	// refused too: the check is on what the path leads to.
	viaLink := filepath.Join(base, "via")
	require.NoError(t, os.Symlink(open, viaLink))
	_, err = MkdirOutput(filepath.Join(viaLink, "x"), 0o755)
	outputRefused(t, err, open, "without the sticky bit")

	// A file where a directory goes.
	file := filepath.Join(base, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = MkdirOutput(filepath.Join(file, "x"), 0o755)
	require.ErrorIs(t, err, syscall.ENOTDIR)
}
