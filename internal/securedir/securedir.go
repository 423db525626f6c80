// Package securedir is the one place rocprof-go decides whether a directory
// can be trusted with what a run puts in it or loads from it: the injected
// libraries, the spools, the run and pass directories.
//
// The injected code reaches those places by path (LD_PRELOAD,
// HSA_TOOLS_LIB, the spool directory's variable), in processes rocprof-go
// does not control. A path is only as safe as every directory on it: if
// another user can rename or replace one of them, they choose what the path
// names. So a directory is trusted when every directory from / down to it,
// and every symbolic link followed on the way, is owned by root or by this
// user, and no directory on the way is writable by others unless it has the
// sticky bit (/tmp, /dev/shm: others may add entries there but not rename
// or remove ours). The checks are made on file descriptors opened one
// component at a time with O_NOFOLLOW (what was checked is what is used),
// and what a run creates is created through them (mkdirat, openat with
// O_EXCL|O_NOFOLLOW) and checked again (owner, mode) after it is opened.
// Once a directory is trusted its path names the same directory for as
// long as the run lasts, and the injected code may use it.
package securedir

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// UntrustedError is a directory (or library, or link) another user could
// change, or one that is not what it should be.
type UntrustedError struct {
	Path   string
	Reason string
}

func (e *UntrustedError) Error() string {
	return fmt.Sprintf("%s cannot be trusted (%s)", e.Path, e.Reason)
}

// maxLinks bounds the symbolic links followed in one path (as Linux does).
const maxLinks = 40

func uid() uint32 { return uint32(os.Geteuid()) }

// byUs reports whether a file's owner is root or this user.
func byUs(st *unix.Stat_t) bool { return st.Uid == 0 || st.Uid == uid() }

// dirReason says why a directory on a trusted path cannot be trusted, or "".
func dirReason(st *unix.Stat_t) string {
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return "not a directory"
	case !byUs(st):
		return fmt.Sprintf("owned by uid %d, not by you (uid %d) or root", st.Uid, uid())
	case st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0:
		return fmt.Sprintf("writable by others (mode %04o) without the sticky bit", st.Mode&0o7777)
	}
	return ""
}

// Dir is a directory on a trusted path, held open.
type Dir struct {
	f    *os.File
	path string // absolute, without symbolic links
}

// Path is the directory's absolute path, free of symbolic links: the name
// to give the injected code.
func (d *Dir) Path() string { return d.path }

// Close releases the directory's descriptor.
func (d *Dir) Close() error { return d.f.Close() }

func (d *Dir) fd() int { return int(d.f.Fd()) }

func (d *Dir) stat() (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstat(d.fd(), &st)
	return st, err
}

// Open opens an existing directory whose whole path is trusted.
func Open(path string) (*Dir, error) {
	fd, real, err := walk(path, true)
	if err != nil {
		return nil, err
	}
	return &Dir{f: os.NewFile(uintptr(fd), real), path: real}, nil
}

// CheckFile checks that a file (a library about to be injected) is a
// regular file on a trusted path, owned by root or this user and writable
// by no one else, and returns its path without symbolic links.
func CheckFile(path string) (string, error) {
	fd, real, err := walk(path, false)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", &os.PathError{Op: "stat", Path: real, Err: err}
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return "", &UntrustedError{real, "not a regular file"}
	case !byUs(&st):
		return "", &UntrustedError{real, fmt.Sprintf("owned by uid %d, not by you (uid %d) or root", st.Uid, uid())}
	case st.Mode&0o022 != 0:
		return "", &UntrustedError{real, fmt.Sprintf("writable by others (mode %04o)", st.Mode&0o7777)}
	}
	return real, nil
}

// walk resolves path from / one component at a time, each opened with
// O_NOFOLLOW relative to its verified parent; a symbolic link is followed
// only when root or this user owns it (its directory is verified already).
// It returns an O_PATH descriptor of the last component and its real path.
// With wantDir the last component must be a trusted directory too.
func walk(path string, wantDir bool) (int, string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return -1, "", err
	}
	root, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", &os.PathError{Op: "open", Path: "/", Err: err}
	}
	type level struct {
		fd   int
		name string
	}
	stack := []level{{root, ""}}
	closeAll := func() {
		for _, l := range stack {
			unix.Close(l.fd)
		}
	}
	realPath := func() string {
		var b strings.Builder
		for _, l := range stack[1:] {
			b.WriteString("/" + l.name)
		}
		if b.Len() == 0 {
			return "/"
		}
		return b.String()
	}
	check := func(fd int, p string, dir bool) error {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return &os.PathError{Op: "stat", Path: p, Err: err}
		}
		if !dir {
			return nil
		}
		if r := dirReason(&st); r != "" {
			return &UntrustedError{p, r}
		}
		return nil
	}
	if err := check(root, "/", true); err != nil {
		closeAll()
		return -1, "", err
	}
	queue := strings.Split(abs, "/")
	links := 0
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(stack) > 1 {
				unix.Close(stack[len(stack)-1].fd)
				stack = stack[:len(stack)-1]
			}
			continue
		}
		top := stack[len(stack)-1].fd
		p := filepath.Join(realPath(), c)
		var st unix.Stat_t
		if err := unix.Fstatat(top, c, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			closeAll()
			return -1, "", &os.PathError{Op: "stat", Path: p, Err: err}
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			if !byUs(&st) {
				closeAll()
				return -1, "", &UntrustedError{p, fmt.Sprintf("a symbolic link owned by uid %d, not by you (uid %d) or root", st.Uid, uid())}
			}
			if links++; links > maxLinks {
				closeAll()
				return -1, "", &os.PathError{Op: "open", Path: abs, Err: unix.ELOOP}
			}
			buf := make([]byte, unix.PathMax)
			n, err := unix.Readlinkat(top, c, buf)
			if err != nil {
				closeAll()
				return -1, "", &os.PathError{Op: "readlink", Path: p, Err: err}
			}
			target := string(buf[:n])
			if strings.HasPrefix(target, "/") {
				for _, l := range stack[1:] {
					unix.Close(l.fd)
				}
				stack = stack[:1]
			}
			queue = append(strings.Split(target, "/"), queue...)
			continue
		}
		last := len(strings.Join(queue, "")) == 0
		isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
		if !isDir && !last {
			closeAll()
			return -1, "", &os.PathError{Op: "open", Path: p, Err: unix.ENOTDIR}
		}
		flags := unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if isDir {
			flags |= unix.O_DIRECTORY
		}
		fd, err := unix.Openat(top, c, flags, 0)
		if err != nil {
			closeAll()
			return -1, "", &os.PathError{Op: "open", Path: p, Err: err}
		}
		stack = append(stack, level{fd, c})
		// Checked on the descriptor: what was checked is what is used.
		if err := check(fd, p, isDir && (wantDir || !last)); err != nil {
			closeAll()
			return -1, "", err
		}
	}
	if wantDir {
		var st unix.Stat_t
		if err := unix.Fstat(stack[len(stack)-1].fd, &st); err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			p := realPath()
			closeAll()
			return -1, "", &UntrustedError{p, "not a directory"}
		}
	}
	fd, real := stack[len(stack)-1].fd, realPath()
	for _, l := range stack[:len(stack)-1] {
		unix.Close(l.fd)
	}
	return fd, real, nil
}

// Mkdir creates a new private directory (0700) in d and opens it.
func (d *Dir) Mkdir(name string) (*Dir, error) {
	if err := unix.Mkdirat(d.fd(), name, 0o700); err != nil {
		return nil, &os.PathError{Op: "mkdir", Path: filepath.Join(d.path, name), Err: err}
	}
	return d.OpenPrivate(name)
}

// MkdirTemp creates a new private directory named prefix + random
// characters in d and opens it.
func (d *Dir) MkdirTemp(prefix string) (*Dir, error) {
	for range 100 {
		name := prefix + strconv.FormatUint(rand.Uint64(), 36)
		err := unix.Mkdirat(d.fd(), name, 0o700)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "mkdir", Path: filepath.Join(d.path, name), Err: err}
		}
		return d.OpenPrivate(name)
	}
	return nil, &os.PathError{Op: "mkdir", Path: filepath.Join(d.path, prefix+"*"), Err: unix.EEXIST}
}

// MkdirPrivate opens d's directory name, creating it when missing, and
// makes it private: it must be this user's own directory (not a link),
// and its mode becomes 0700.
func (d *Dir) MkdirPrivate(name string) (*Dir, error) {
	if err := unix.Mkdirat(d.fd(), name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, &os.PathError{Op: "mkdir", Path: filepath.Join(d.path, name), Err: err}
	}
	sub, err := d.open(name)
	if err != nil {
		return nil, err
	}
	st, err := sub.stat()
	if err == nil && st.Mode&0o077 != 0 {
		err = unix.Fchmod(sub.fd(), 0o700)
	}
	if err != nil {
		sub.Close()
		return nil, &os.PathError{Op: "chmod", Path: sub.path, Err: err}
	}
	return sub, nil
}

// OpenPrivate opens d's directory name, which must be this user's own
// directory (not a link) that no one else can read or write.
func (d *Dir) OpenPrivate(name string) (*Dir, error) {
	sub, err := d.open(name)
	if err != nil {
		return nil, err
	}
	if st, err := sub.stat(); err != nil || st.Mode&0o077 != 0 {
		sub.Close()
		if err != nil {
			return nil, &os.PathError{Op: "stat", Path: sub.path, Err: err}
		}
		return nil, &UntrustedError{sub.path, fmt.Sprintf("open to others (mode %04o)", st.Mode&0o7777)}
	}
	return sub, nil
}

// open opens d's sub-directory name, refusing a link and one that is not
// this user's.
func (d *Dir) open(name string) (*Dir, error) {
	p := filepath.Join(d.path, name)
	fd, err := unix.Openat(d.fd(), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		var st unix.Stat_t
		if unix.Fstatat(d.fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFLNK:
				return nil, &UntrustedError{p, "a symbolic link"}
			case unix.S_IFDIR:
			default:
				return nil, &UntrustedError{p, "not a directory"}
			}
		}
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	sub := &Dir{f: os.NewFile(uintptr(fd), p), path: p}
	st, err := sub.stat()
	if err != nil {
		sub.Close()
		return nil, &os.PathError{Op: "stat", Path: p, Err: err}
	}
	if st.Uid != uid() {
		sub.Close()
		return nil, &UntrustedError{p, fmt.Sprintf("owned by uid %d, not by you (uid %d)", st.Uid, uid())}
	}
	return sub, nil
}

// Create creates the new file name in d (O_EXCL|O_NOFOLLOW: never an
// existing file, never through a link), for writing.
func (d *Dir) Create(name string, perm os.FileMode) (*os.File, error) {
	p := filepath.Join(d.path, name)
	fd, err := unix.Openat(d.fd(), name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, &os.PathError{Op: "create", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// WriteFile creates the new file name in d (see Create) holding data.
func (d *Dir) WriteFile(name string, data []byte, perm os.FileMode) error {
	f, err := d.Create(name, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Open opens d's file name for reading, not through a link.
func (d *Dir) Open(name string) (*os.File, error) {
	p := filepath.Join(d.path, name)
	fd, err := unix.Openat(d.fd(), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// Rename renames d's entry from to to (in d).
func (d *Dir) Rename(from, to string) error {
	if err := unix.Renameat(d.fd(), from, d.fd(), to); err != nil {
		return &os.LinkError{Op: "rename", Old: filepath.Join(d.path, from), New: filepath.Join(d.path, to), Err: err}
	}
	return nil
}

// Verify checks, right before the path is handed to the injected code,
// that d's path is still trusted and still names d.
func (d *Dir) Verify() error {
	fd, _, err := walk(d.path, true)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil {
		return &os.PathError{Op: "stat", Path: d.path, Err: err}
	}
	held, err := d.stat()
	if err != nil {
		return &os.PathError{Op: "stat", Path: d.path, Err: err}
	}
	if now.Dev != held.Dev || now.Ino != held.Ino {
		return &UntrustedError{d.path, "replaced by another directory since it was created"}
	}
	return nil
}
