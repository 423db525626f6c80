package pipeline

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// An output directory removed during the run (rm -rf by the user, a
// cleanup job, another run's script). Outputs are created through
// descriptors (internal/atomicfile), so a file written into a directory
// removed meanwhile is renamed into a directory that no longer exists and
// is gone without an error of its own. The pass's output directory (its
// fixed part, as Check created it) is held open from before the app
// starts and again right before the outputs are written: removed while
// the app ran, the outputs are written into the directory created again
// and the run says so; removed (or moved away) while they were written,
// the outputs are lost, and the run fails as any output error does: the
// spools are kept and the error says where and how to convert them.

// dirWatch is a directory held open, by the path the user gave.
type dirWatch struct {
	path string
	f    *os.File
}

// watchDir holds path's directory open; nil when it cannot be opened.
func watchDir(path string) *dirWatch {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil
	}
	return &dirWatch{path: path, f: f}
}

// gone reports whether the held directory was removed, or its path now
// names another directory (or none): moved away, or removed and created
// again.
func (w *dirWatch) gone() bool {
	if w == nil {
		return false
	}
	var held, now unix.Stat_t
	if unix.Fstat(int(w.f.Fd()), &held) != nil {
		return false
	}
	if held.Nlink == 0 {
		return true
	}
	if err := unix.Stat(w.path, &now); err != nil {
		return true
	}
	return now.Dev != held.Dev || now.Ino != held.Ino
}

func (w *dirWatch) close() {
	if w != nil {
		w.f.Close()
	}
}

// OutputDirRemovedError is a pass whose output directory was removed (or
// moved away) while its outputs were written: what was written into it is
// gone with it.
type OutputDirRemovedError struct {
	Dir string // as the user gave it (-d), up to its first placeholder
	Err error  // the error writing met, if any
}

func (e *OutputDirRemovedError) Error() string {
	msg := fmt.Sprintf("the output directory %s was removed (or moved away) by another process while the outputs were written into it: what was written there is gone with it", e.Dir)
	if e.Err != nil {
		msg += " (" + e.Err.Error() + ")"
	}
	return msg
}

func (e *OutputDirRemovedError) Unwrap() error { return e.Err }
