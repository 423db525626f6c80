package rocpdread

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	_ "github.com/mattn/go-sqlite3" // the database/sql driver for ROCpd files
)

// SchemaVersion is the ROCpd schema version this package reads.
const SchemaVersion = "3"

// Image is one process image in a database: one uuid, one table suffix.
type Image struct {
	Suffix string // "_" + uuid with underscores; "" for bare table names
	GUID   string // dashed uuid, the value of every row's guid column
}

// Table returns the image's name for a base table, e.g. rocpd_region_0000….
func (im Image) Table(base string) string { return base + im.Suffix }

// DB is an open ROCpd database.
type DB struct {
	Path   string
	SQL    *sql.DB
	Images []Image
}

// openURI builds a go-sqlite3 DSN for a path; mode is "ro" or "rwc".
func openURI(path, mode string) string {
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: path}).EscapedPath()}
	q := url.Values{}
	q.Set("mode", mode)
	q.Set("_foreign_keys", "off")
	u.RawQuery = q.Encode()
	return u.String()
}

// Open opens a ROCpd database read-only and finds its process images.
func Open(path string) (*DB, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open ROCpd database: %w", err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("open ROCpd database %s: is a directory, expected a .db file", path)
	}
	sdb, err := sql.Open("sqlite3", openURI(path, "ro"))
	if err != nil {
		return nil, fmt.Errorf("open ROCpd database %s: %w", path, err)
	}
	// Two connections: Regions reads two tables side by side.
	sdb.SetMaxOpenConns(2)
	db := &DB{Path: path, SQL: sdb}
	if err := db.findImages(); err != nil {
		sdb.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// Its connection holds the parsed schema (ROCpd's many views: a few
	// hundred KiB) until the database is read: a job's 2,000 open at once
	// would hold them all.
	db.Release()
	return db, nil
}

// Close closes the database.
func (db *DB) Close() error { return db.SQL.Close() }

// Release closes the database's idle connections, and with them their
// page caches (a few MiB each): a reader of thousands of databases (a
// job's ranks) holds one database's at a time. Later queries open new
// connections.
func (db *DB) Release() {
	db.SQL.SetMaxIdleConns(0)
	db.SQL.SetMaxIdleConns(2)
}

// ErrNotROCpd is returned for SQLite files without ROCpd metadata.
var ErrNotROCpd = errors.New("not a ROCpd database (no rocpd_metadata table); " +
	"give a results.db written by rocprof-go or rocprofv3 with -f rocpd")

// findImages reads the uuid suffixes the way rocpd does: the metadata rows
// tagged "uuid". A merged database lists one per image.
func (db *DB) findImages() error {
	var n int
	err := db.SQL.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name = 'rocpd_metadata'`).Scan(&n)
	if err != nil {
		if isNotADatabase(err) {
			return ErrNotROCpd
		}
		return fmt.Errorf("%s: %w", db.Path, err)
	}
	if n == 0 {
		return ErrNotROCpd
	}
	rows, err := db.SQL.Query(`SELECT tag, value FROM rocpd_metadata WHERE tag IN ('uuid', 'schema_version')`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var versions []string
	for rows.Next() {
		var tag, value string
		if err := rows.Scan(&tag, &value); err != nil {
			return err
		}
		switch tag {
		case "uuid":
			db.Images = append(db.Images, Image{Suffix: value})
		case "schema_version":
			versions = append(versions, value)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, v := range versions {
		if v != SchemaVersion {
			return fmt.Errorf("ROCpd schema version %s is not supported (this tool reads version %s)", v, SchemaVersion)
		}
	}
	if len(db.Images) == 0 {
		return errors.New("rocpd_metadata has no uuid row: not a complete ROCpd database")
	}
	for i := range db.Images {
		im := &db.Images[i]
		// The suffix is the uuid with "_" for "-" (uuids hold no "_"), so
		// the guid follows from it; the metadata's guid rows carry no image
		// key once several images are stitched into one view.
		im.GUID = strings.ReplaceAll(strings.TrimPrefix(im.Suffix, "_"), "_", "-")
		if !db.hasTable(im.Table("rocpd_region")) {
			return fmt.Errorf("uuid %q has no %s table: the database is incomplete", im.Suffix, im.Table("rocpd_region"))
		}
	}
	return nil
}

func (db *DB) hasTable(name string) bool {
	var n int
	_ = db.SQL.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&n)
	return n > 0
}

// quote returns an SQL identifier in double quotes.
func quote(id string) string { return `"` + strings.ReplaceAll(id, `"`, `""`) + `"` }

// Only returns a view of the database restricted to one image; it shares
// the connection (do not Close it).
func (db *DB) Only(im Image) *DB { return &DB{Path: db.Path, SQL: db.SQL, Images: []Image{im}} }
