// Package spill holds what the output writers must know about every record
// of a trace (an order, a numbering) on disk instead of in the CLI's
// memory: an external merge sort of fixed-size values and file-backed
// arrays. Its files are created in a private directory (internal/securedir)
// under a root on disk and unlinked at once: they live only as long as their
// descriptors and mappings, so nothing is left behind, even by a process
// killed while writing. Their pages are the file system's cache, which the
// kernel writes back and drops under pressure, not the process's anonymous
// memory.
package spill

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rocprof-go/rocprof-go/internal/securedir"
)

// DefaultRoot is the directory spill files go under when the caller names
// none: $TMPDIR, else /tmp (os.TempDir).
func DefaultRoot() string { return os.TempDir() }

// Dir is where one user of spill files creates them: a root on a trusted
// path. The zero value uses DefaultRoot.
type Dir struct {
	Root string
}

// create makes a new unlinked file under the root, in a private directory
// made for it and removed at once.
func (d *Dir) create() (*os.File, error) {
	root := d.Root
	if root == "" {
		root = DefaultRoot()
	}
	top, err := securedir.Open(root)
	if err != nil {
		return nil, fmt.Errorf("spill directory: %w (set TMPDIR to a directory of yours on a local disk)", err)
	}
	defer top.Close()
	priv, err := top.MkdirTemp("rocprof-go-spill-")
	if err != nil {
		return nil, fmt.Errorf("spill directory: %w (set TMPDIR to a writable directory on a local disk)", err)
	}
	name := priv.Path()
	f, err := priv.Create("data", 0o600)
	if err == nil {
		err = priv.Remove("data")
	}
	priv.Close()
	if rerr := top.RemoveDir(baseName(name)); err == nil {
		err = rerr
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		return nil, fmt.Errorf("spill file: %w", err)
	}
	return f, nil
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// Array is a file-backed array of n values of a fixed-size type without
// pointers, mapped shared: its pages are the file's, not the heap's.
type Array[T any] struct {
	Values []T
	mem    []byte
}

// NewArray maps a zeroed array of n values in a new spill file.
func NewArray[T any](d *Dir, n int) (*Array[T], error) {
	a := &Array[T]{}
	if n == 0 {
		return a, nil
	}
	var zero T
	size := int(unsafe.Sizeof(zero)) * n
	f, err := d.create()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := f.Truncate(int64(size)); err != nil {
		return nil, fmt.Errorf("spill file of %d bytes: %w", size, err)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mapping a spill file of %d bytes: %w", size, err)
	}
	a.mem = mem
	a.Values = unsafe.Slice((*T)(unsafe.Pointer(&mem[0])), n)
	return a, nil
}

// Close unmaps the array; its values must no longer be used.
func (a *Array[T]) Close() error {
	if a == nil || a.mem == nil {
		return nil
	}
	err := unix.Munmap(a.mem)
	a.mem, a.Values = nil, nil
	return err
}

// bytesOf is the memory of a slice of pointer-free values.
func bytesOf[T any](v []T) []byte {
	if len(v) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*int(unsafe.Sizeof(zero)))
}
