package output

import (
	"io"
	"os"
)

// FileSystem creates output files; tests substitute one that fails (ENOSPC).
type FileSystem interface {
	MkdirAll(path string) error
	Create(path string) (io.WriteCloser, error)
}

type osFS struct{}

func (osFS) MkdirAll(path string) error { return os.MkdirAll(path, 0o755) }

func (osFS) Create(path string) (io.WriteCloser, error) { return os.Create(path) }

// Remove deletes a file that could not be written at all.
func (osFS) Remove(path string) error { return os.Remove(path) }
