package securedir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"golang.org/x/sys/unix"
)

// What an output writer does inside a verified directory, all through its
// descriptor: the directory's path may name another directory by the time
// the file is written (someone who can write a directory on the path,
// such as the owner of a shared directory or a member of a project's
// group, renamed it and put a link in its place), the descriptor cannot.

// Remove removes d's file (not directory) name.
func (d *Dir) Remove(name string) error {
	if err := unix.Unlinkat(d.fd(), name, 0); err != nil {
		return &os.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

// RemoveAll removes d's entry name and, if it is a directory, everything
// in it, without following a symbolic link anywhere below d.
func (d *Dir) RemoveAll(name string) error {
	err := unix.Unlinkat(d.fd(), name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	// Opened without the owner check of open: what is removed may be an
	// older output of another user that a commit moved aside.
	fd, oerr := unix.Openat(d.fd(), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if oerr != nil {
		return &os.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: err}
	}
	sub := &Dir{f: os.NewFile(uintptr(fd), filepath.Join(d.path, name)), path: filepath.Join(d.path, name)}
	names, rerr := sub.f.Readdirnames(-1)
	for _, n := range names {
		if err := sub.RemoveAll(n); err != nil && rerr == nil {
			rerr = err
		}
	}
	sub.Close()
	if err := unix.Unlinkat(d.fd(), name, unix.AT_REMOVEDIR); err != nil && rerr == nil {
		rerr = &os.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: err}
	}
	return rerr
}

// Type is the file type of d's entry name (not following a link), or an
// error that wraps fs.ErrNotExist when there is none.
func (d *Dir) Type(name string) (fs.FileMode, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, &os.PathError{Op: "lstat", Path: filepath.Join(d.path, name), Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir, nil
	case unix.S_IFLNK:
		return fs.ModeSymlink, nil
	case unix.S_IFREG:
		return 0, nil
	}
	return fs.ModeIrregular, nil
}

// RenameAcross renames from's entry fromName to to's entry toName.
func RenameAcross(from *Dir, fromName string, to *Dir, toName string) error {
	if err := unix.Renameat(from.fd(), fromName, to.fd(), toName); err != nil {
		return &os.LinkError{Op: "rename", Old: filepath.Join(from.path, fromName), New: filepath.Join(to.path, toName), Err: err}
	}
	return nil
}

// ProcPath is a path that names d itself for code in this process that
// only takes paths (SQLite, the OTF2 library, os.WriteFile): its entry in
// /proc/self/fd, which the kernel resolves to the open directory whatever
// became of its path. Where /proc is not mounted (or shows another
// process's table) it is d's path, checked as every path here is.
func (d *Dir) ProcPath() string {
	p := "/proc/self/fd/" + strconv.Itoa(d.fd())
	var via, held unix.Stat_t
	if unix.Stat(p, &via) == nil && unix.Fstat(d.fd(), &held) == nil && via.Dev == held.Dev && via.Ino == held.Ino {
		return p
	}
	return d.path
}

// Link makes d's entry to a new hard link to d's file from (linkat: fails
// with EEXIST when to exists).
func (d *Dir) Link(from, to string) error {
	if err := unix.Linkat(d.fd(), from, d.fd(), to, 0); err != nil {
		return &os.LinkError{Op: "link", Old: filepath.Join(d.path, from), New: filepath.Join(d.path, to), Err: err}
	}
	return nil
}

// OpenRegular opens d's file name for reading if it is a regular file: no
// link is followed, and a FIFO or device planted under the name is refused
// without blocking on it.
func (d *Dir) OpenRegular(name string) (*os.File, error) {
	p := filepath.Join(d.path, name)
	fd, err := unix.Openat(d.fd(), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (%s)", p, st.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// RemoveDir removes d's empty directory name.
func (d *Dir) RemoveDir(name string) error {
	if err := unix.Unlinkat(d.fd(), name, unix.AT_REMOVEDIR); err != nil {
		return &os.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

// Names lists d's entries, sorted (read from its descriptor).
func (d *Dir) Names() ([]string, error) {
	fd, err := unix.Openat(d.fd(), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: d.path, Err: err}
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	sort.Strings(names)
	return names, err
}
