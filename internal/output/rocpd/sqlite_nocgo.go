//go:build !cgo

package rocpd

import (
	"errors"
	"math"
)

const sqlNull = math.MinInt64

var errNoCgoSQLite = errors.New("the ROCpd (SQLite) output needs a cgo build of rocprof-go: rebuild with CGO_ENABLED=1, or choose another format with -f")

type sqliteDB struct{}

type sqliteStmt struct{}

func openSQLite(string) (*sqliteDB, error)                { return nil, errNoCgoSQLite }
func (*sqliteDB) exec(string) error                       { return errNoCgoSQLite }
func (*sqliteDB) queryInt(string) (int64, error)          { return 0, errNoCgoSQLite }
func (*sqliteDB) prepare(string) (*sqliteStmt, error)     { return nil, errNoCgoSQLite }
func (*sqliteStmt) insertStrings([]int64, []string) error { return errNoCgoSQLite }
func (*sqliteStmt) close()                                {}
func (*sqliteDB) close() error                            { return nil }
