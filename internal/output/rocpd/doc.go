// Package rocpd writes rocprofv3's ROCpd SQLite database, schema 3 (-f
// rocpd): the tables and views of sql/ (rocprofv3's own scripts), one
// process's rows after another. Bulk rows are laid out as SQLite b-tree
// pages directly (btree.go, rows.go); the schema, metadata and indexes go
// through SQLite itself (cgo, sqlite.go), and sqlite_nocgo.go is the stub a
// build without cgo gets.
package rocpd
