package atomicfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// OpenInput opens a file the user named as an input (-i, -E, --config, a
// batch file, a file run.json lists) for reading. It must be a regular
// file: a FIFO, device or socket is refused, naming the file and what it
// is, instead of blocking the run forever on it (the open is O_NONBLOCK, so
// a FIFO with no writer does not block it either). Symbolic links are
// followed: the user's inputs may be links.
func OpenInput(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: path, Err: fmt.Errorf("it is %s, not a regular file: give the path of a file", kind(st.Mode()))}
	}
	// Reads of a regular file never block; back to blocking mode anyway.
	if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// CheckRegular checks, without opening it, that path names a regular file
// (links followed): the error names it and what it is.
func CheckRegular(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return &os.PathError{Op: "open", Path: path, Err: fmt.Errorf("it is %s, not a regular file: give the path of a file", kind(st.Mode()))}
	}
	return nil
}

// ReadInput reads a whole input file (OpenInput's rules), at most limit
// bytes (limit+1 are read, so that the caller can tell a larger file).
func ReadInput(path string, limit int64) ([]byte, error) {
	f, err := OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit+1))
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeDir != 0:
		return "a directory"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "a " + m.Type().String() + " file"
}
