//go:build cgo

package rocpdread

import (
	"errors"

	"github.com/mattn/go-sqlite3"
)

// isNotADatabase reports SQLite's "file is not a database" by its error
// code (SQLITE_NOTADB), not by the message text.
func isNotADatabase(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrNotADB
}
