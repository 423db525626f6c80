//go:build !cgo

package rocpdread

// isNotADatabase: without cgo the SQLite driver opens nothing, so no
// error is SQLite's.
func isNotADatabase(error) bool { return false }
