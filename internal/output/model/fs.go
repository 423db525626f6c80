package model

import (
	"io"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
)

// FileSystem creates output files; tests substitute one that fails (ENOSPC).
type FileSystem interface {
	MkdirAll(path string) error
	Create(path string) (OutputFile, error)
}

// OutputFile is a file being written: it appears under its name at Commit,
// complete, and Abort leaves nothing there.
type OutputFile interface {
	io.Writer
	Commit() error
	Abort()
}

// OSFS writes through internal/atomicfile: a temporary file beside the
// final name, renamed onto it when complete.
type OSFS struct{}

func (OSFS) MkdirAll(path string) error { return atomicfile.MkdirAll(path, 0o755) }

func (OSFS) Create(path string) (OutputFile, error) {
	return atomicfile.Create(path, atomicfile.Public)
}
