package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/rocprof-go/rocprof-go/internal/securedir"
)

// Prefix starts the name of every temporary file and directory.
const Prefix = ".rocprof-go-tmp-"

// Modes of a new file: Public is 0666 less the umask (what os.Create
// gives); Private is for files that hold the environment.
const (
	Public  os.FileMode = 0o666
	Private os.FileMode = 0o600
)

// maxName is the longest file name Linux file systems take.
const maxName = 255

// IsTemp reports whether a file or directory name is one of this
// package's temporary names (left behind only by a killed process).
func IsTemp(name string) bool { return strings.HasPrefix(filepath.Base(name), Prefix) }

// stopped, when set, is the error every later Create, Write and Commit of
// this package fails with (Stop).
var stopped atomic.Pointer[error]

// Stop makes every later Create, NewStage, Write and Commit fail with err,
// removing the temporary file or stage: the CLI stops writing its outputs
// (a second signal while they are written) at the next write or commit of
// whatever file is being written, and nothing is left under a temporary
// name. Resume lifts it (run.json is still written).
func Stop(err error) { stopped.Store(&err) }

// Resume undoes Stop.
func Resume() { stopped.Store(nil) }

func stopErr() error {
	if p := stopped.Load(); p != nil {
		return *p
	}
	return nil
}

// tempName is Prefix + base + "-" + random digits, within maxName bytes.
func tempName(base string) string {
	suffix := "-" + strconv.FormatUint(rand.Uint64(), 36)
	if room := maxName - len(Prefix) - len(suffix); len(base) > room {
		base = base[:room]
	}
	return Prefix + base + suffix
}

// pathError names the final path and keeps the cause (an errno stays
// visible to errors.Is).
func pathError(op, path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}

// File is an output being written under a temporary name, in its
// directory as verified when it was created (held open: the file is
// created, renamed and removed through the descriptor, never by a path
// that could have come to name another directory meanwhile).
type File struct {
	dir        *securedir.Dir
	f          *os.File
	tmp, final string
	done       bool
}

// Create starts the file that will be named final: a new temporary file in
// final's directory, opened for reading and writing. The directory is
// opened (and created when missing) by securedir's output rule, like
// MkdirAll.
func Create(final string, perm os.FileMode) (*File, error) {
	if err := stopErr(); err != nil {
		return nil, pathError("create", final, err)
	}
	dirName, base := filepath.Split(final)
	if dirName == "" {
		dirName = "."
	}
	dir, err := securedir.MkdirOutput(dirName, 0o755)
	if err != nil {
		return nil, err
	}
	for range 100 {
		tmp := tempName(base)
		f, err := dir.Create(tmp, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			dir.Close()
			return nil, pathError("create", final, err)
		}
		return &File{dir: dir, f: f, tmp: tmp, final: final}, nil
	}
	dir.Close()
	return nil, pathError("create", final, fs.ErrExist)
}

// Write writes to the temporary file; errors name the final path.
func (f *File) Write(p []byte) (int, error) {
	if err := stopErr(); err != nil {
		return 0, pathError("write", f.final, err)
	}
	n, err := f.f.Write(p)
	if err != nil {
		err = pathError("write", f.final, err)
	}
	return n, err
}

// Path is the final name. TempPath names the temporary file for a library
// that opens files by path (SQLite): through the directory's descriptor
// (securedir's ProcPath), so it is the file Create made.
func (f *File) Path() string     { return f.final }
func (f *File) TempPath() string { return f.dir.ProcPath() + "/" + f.tmp }

// Rename changes the name Commit gives the file: final must be in the same
// directory (a writer that learns late what its file is called, such as a
// trace that turns out to need parts).
func (f *File) Rename(final string) error {
	if filepath.Dir(final) != filepath.Dir(f.final) {
		return pathError("rename", final, fmt.Errorf("not in the directory of %s", f.final))
	}
	f.final = final
	return nil
}

// Commit closes the file and renames it onto its final name. On any error
// the temporary file is removed and nothing is at the final name that was
// not there before.
func (f *File) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	defer f.dir.Close()
	if err := f.f.Close(); err != nil {
		_ = f.dir.Remove(f.tmp)
		return pathError("close", f.final, err)
	}
	if err := stopErr(); err != nil {
		_ = f.dir.Remove(f.tmp)
		return pathError("commit", f.final, err)
	}
	if err := f.dir.Rename(f.tmp, filepath.Base(f.final)); err != nil {
		_ = f.dir.Remove(f.tmp)
		return pathError("rename", f.final, err)
	}
	return nil
}

// Abort closes and removes the temporary file; after Commit it does
// nothing.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	_ = f.f.Close()
	_ = f.dir.Remove(f.tmp)
	f.dir.Close()
}

// Write creates final with write's output: committed when write and the
// close succeed, removed otherwise.
func Write(final string, perm os.FileMode, write func(io.Writer) error) error {
	f, err := Create(final, perm)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// WriteFile is os.WriteFile through a temporary file.
func WriteFile(final string, data []byte, perm os.FileMode) error {
	return Write(final, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// CreatePrivate creates a new file that is not an output (a scratch file
// inside a Stage or a private directory): O_EXCL|O_NOFOLLOW, mode 0600.
func CreatePrivate(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, Private)
}

// Stage is a private temporary directory in an output directory: a writer
// fills it, and Commit renames its entries into the output directory. Both
// directories are held open and every rename goes through them.
type Stage struct {
	out, st *securedir.Dir
	name    string // the stage's name in out
	done    bool
}

// NewStage creates the stage in dir, which is opened (and created when
// missing) by securedir's output rule.
func NewStage(dir string) (*Stage, error) {
	if err := stopErr(); err != nil {
		return nil, pathError("create", dir, err)
	}
	out, err := securedir.MkdirOutput(dir, 0o755)
	if err != nil {
		return nil, err
	}
	st, err := out.MkdirTemp(Prefix + "stage-")
	if err != nil {
		out.Close()
		return nil, pathError("create", dir, err)
	}
	return &Stage{out: out, st: st, name: filepath.Base(st.Path())}, nil
}

// Dir is the stage's directory: write the entries there. It is a path
// through the stage's descriptor (securedir's ProcPath), valid in this
// process only.
func (s *Stage) Dir() string { return s.st.ProcPath() }

// Commit renames the named entries (files or directories) of the stage
// into the output directory, in the order given (so an anchor that points
// to the rest goes last), then removes the stage. An entry already at a
// name is replaced: a file or symlink by the rename itself, a directory by
// moving it into the stage first. On error the stage is removed with what
// was not committed yet.
func (s *Stage) Commit(names ...string) error {
	if s.done {
		return nil
	}
	defer s.Abort()
	if err := stopErr(); err != nil {
		return pathError("commit", s.out.Path(), err)
	}
	var old *securedir.Dir
	defer func() {
		if old != nil {
			old.Close()
		}
	}()
	for _, name := range names {
		dst := filepath.Join(s.out.Path(), name)
		src, err := s.st.Type(name)
		if err != nil {
			return pathError("commit", dst, err)
		}
		if cur, err := s.out.Type(name); err == nil && (cur.IsDir() || src.IsDir()) {
			// rename(2) replaces only an empty directory, and a directory
			// only by a directory: move what is there aside.
			if old == nil {
				if old, err = s.st.Mkdir(Prefix + "old"); err != nil {
					return pathError("commit", dst, err)
				}
			}
			if err := securedir.RenameAcross(s.out, name, old, name); err != nil {
				return pathError("replace", dst, err)
			}
		}
		if err := securedir.RenameAcross(s.st, name, s.out, name); err != nil {
			return pathError("rename", dst, err)
		}
	}
	return nil
}

// Abort removes the stage and everything still in it.
func (s *Stage) Abort() {
	if s.done {
		return
	}
	s.done = true
	s.st.Close()
	_ = s.out.RemoveAll(s.name)
	s.out.Close()
}

// OpenRegular opens a file for reading only if it is a regular file: no
// symbolic link is followed and a FIFO or device another user planted under
// the name is refused without blocking on it.
func OpenRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is not a regular file (%s)", path, st.Mode().Type())
	}
	return f, st, nil
}
