//go:build cgo

package rocpd

// The ROCpd writer drives SQLite from C: go-sqlite3 links the SQLite
// library into the binary, and these helpers call it directly. SQLite
// writes the schema and the small tables; the bulk rows bypass it
// (rocpd_btree.go), since its INSERTs cost about 1 µs a row.

/*
#include <stdint.h>
#include <stdlib.h>

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
int sqlite3_open_v2(const char *, sqlite3 **, int, const char *);
int sqlite3_close_v2(sqlite3 *);
int sqlite3_exec(sqlite3 *, const char *, void *, void *, char **);
int sqlite3_prepare_v2(sqlite3 *, const char *, int, sqlite3_stmt **, const char **);
int sqlite3_bind_int64(sqlite3_stmt *, int, long long);
int sqlite3_bind_text(sqlite3_stmt *, int, const char *, int, void (*)(void *));
int sqlite3_step(sqlite3_stmt *);
int sqlite3_reset(sqlite3_stmt *);
int sqlite3_finalize(sqlite3_stmt *);
const char *sqlite3_errmsg(sqlite3 *);
long long sqlite3_column_int64(sqlite3_stmt *, int);
void sqlite3_free(void *);

#define RPG_SQLITE_OPEN_RW_CREATE 0x00000006
#define RPG_SQLITE_OPEN_NOFOLLOW 0x01000000
#define RPG_SQLITE_DONE 101
#define RPG_TRANSIENT ((void (*)(void *))-1)

static int rpg_open(const char *path, sqlite3 **db) {
	// NOFOLLOW: the path (the writer's own temporary file) must not be a
	// symlink, or SQLite would write wherever it points.
	return sqlite3_open_v2(path, db, RPG_SQLITE_OPEN_RW_CREATE | RPG_SQLITE_OPEN_NOFOLLOW, 0);
}

static int rpg_exec(sqlite3 *db, const char *sql) {
	char *err = 0;
	int rc = sqlite3_exec(db, sql, 0, 0, &err);
	if (err) sqlite3_free(err);
	return rc;
}

#define RPG_SQLITE_ROW 100

// rpg_query_int runs a query and returns its first row's first column in
// *out; a query without rows is an error.
static int rpg_query_int(sqlite3 *db, const char *sql, long long *out) {
	sqlite3_stmt *st = 0;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, 0);
	if (rc) return rc;
	rc = sqlite3_step(st);
	if (rc == RPG_SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		rc = 0;
	} else if (rc == RPG_SQLITE_DONE) {
		rc = -1;
	}
	sqlite3_finalize(st);
	return rc;
}

// rpg_insert_strings inserts (id, text) rows; text i is buf[off[i]:off[i+1]].
static int rpg_insert_strings(sqlite3_stmt *st, const int64_t *ids, const char *buf,
                              const int64_t *off, int n) {
	for (int i = 0; i < n; i++) {
		sqlite3_bind_int64(st, 1, ids[i]);
		sqlite3_bind_text(st, 2, buf + off[i], (int)(off[i + 1] - off[i]), RPG_TRANSIENT);
		int rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc != RPG_SQLITE_DONE) return rc;
	}
	return 0;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/rocprof-go/rocprof-go/internal/sqlitefd"

	// The SQLite library itself.
	_ "github.com/mattn/go-sqlite3"
)

// sqlNull is the integer that stands for NULL in row buffers.
const sqlNull = math.MinInt64

type sqliteDB struct{ db *C.sqlite3 }

type sqliteStmt struct {
	st *C.sqlite3_stmt
	db *sqliteDB
}

func openSQLite(path string) (*sqliteDB, error) {
	// path is the temporary file through its directory's descriptor
	// (atomicfile's TempPath): SQLite must open that, not re-resolve it.
	if err := sqlitefd.Install(); err != nil {
		return nil, err
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var db *C.sqlite3
	if rc := C.rpg_open(cpath, &db); rc != 0 {
		if db != nil {
			C.sqlite3_close_v2(db)
		}
		return nil, fmt.Errorf("open %s: sqlite error %d", path, int(rc))
	}
	return &sqliteDB{db: db}, nil
}

func (d *sqliteDB) errorf(rc C.int, what string) error {
	return fmt.Errorf("%s: sqlite error %d: %s", what, int(rc), C.GoString(C.sqlite3_errmsg(d.db)))
}

func (d *sqliteDB) exec(sql string) error {
	c := C.CString(sql)
	defer C.free(unsafe.Pointer(c))
	if rc := C.rpg_exec(d.db, c); rc != 0 {
		return d.errorf(rc, "exec "+abbrev(sql))
	}
	return nil
}

// queryInt returns the first column of a query's first row.
func (d *sqliteDB) queryInt(sql string) (int64, error) {
	c := C.CString(sql)
	defer C.free(unsafe.Pointer(c))
	var v C.longlong
	switch rc := C.rpg_query_int(d.db, c, &v); rc {
	case 0:
		return int64(v), nil
	case -1:
		return 0, errors.New("rocpd: no row for " + abbrev(sql))
	default:
		return 0, d.errorf(rc, "query "+abbrev(sql))
	}
}

func (d *sqliteDB) prepare(sql string) (*sqliteStmt, error) {
	c := C.CString(sql)
	defer C.free(unsafe.Pointer(c))
	var st *C.sqlite3_stmt
	if rc := C.sqlite3_prepare_v2(d.db, c, -1, &st, nil); rc != 0 {
		return nil, d.errorf(rc, "prepare "+abbrev(sql))
	}
	return &sqliteStmt{st: st, db: d}, nil
}

// insertStrings runs a two-parameter (id, text) statement for each string.
func (s *sqliteStmt) insertStrings(ids []int64, texts []string) error {
	if len(ids) == 0 {
		return nil
	}
	var buf []byte
	off := make([]int64, 0, len(texts)+1)
	for _, t := range texts {
		off = append(off, int64(len(buf)))
		buf = append(buf, t...)
	}
	off = append(off, int64(len(buf)))
	buf = append(buf, 0) // never empty, so &buf[0] is valid
	rc := C.rpg_insert_strings(s.st, (*C.int64_t)(unsafe.Pointer(&ids[0])),
		(*C.char)(unsafe.Pointer(&buf[0])), (*C.int64_t)(unsafe.Pointer(&off[0])), C.int(len(ids)))
	if rc != 0 {
		return s.db.errorf(rc, "insert strings")
	}
	return nil
}

func (s *sqliteStmt) close() { C.sqlite3_finalize(s.st) }

func (d *sqliteDB) close() error {
	if rc := C.sqlite3_close_v2(d.db); rc != 0 {
		return d.errorf(rc, "close")
	}
	return nil
}

func abbrev(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
