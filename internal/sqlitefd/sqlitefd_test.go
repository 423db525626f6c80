//go:build cgo

package sqlitefd

import (
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// A database opened by a /proc/self/fd path after its directory was
// renamed away and a link to another directory put in its place is written
// into the held directory, and NOFOLLOW (which the ROCpd writer asks for)
// does not refuse the path.
func TestSQLiteOpensThroughTheDescriptor(t *testing.T) {
	require.NoError(t, Install())
	base := t.TempDir()
	out := filepath.Join(base, "out")
	require.NoError(t, os.Mkdir(out, 0o755))
	dir, err := os.Open(out)
	require.NoError(t, err)
	defer dir.Close()
	moved, elsewhere := filepath.Join(base, "moved"), t.TempDir()
	require.NoError(t, os.Rename(out, moved))
	require.NoError(t, os.Symlink(elsewhere, out))

	path := "/proc/self/fd/" + strconv.Itoa(int(dir.Fd())) + "/t.db"
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=rwc&_journal_mode=OFF")
	require.NoError(t, err)
	_, err = db.Exec("CREATE TABLE t(x); INSERT INTO t VALUES (42)")
	require.NoError(t, err)
	// The name SQLite opened: the descriptor's, not the directory's path
	// as text (which another user could change between SQLite's readlink
	// and its open, and which NOFOLLOW refuses).
	var seq int
	var name, file string
	require.NoError(t, db.QueryRow("PRAGMA database_list").Scan(&seq, &name, &file))
	require.Equal(t, path, file)
	require.NoError(t, db.Close())

	entries, err := os.ReadDir(elsewhere)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing through the link")
	st, err := os.Stat(filepath.Join(moved, "t.db"))
	require.NoError(t, err)
	require.NotZero(t, st.Size())
}
