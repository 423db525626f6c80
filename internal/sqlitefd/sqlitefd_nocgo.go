//go:build !cgo

package sqlitefd

// Install does nothing without cgo: there is no SQLite in the binary.
func Install() error { return nil }
