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

// The output directory (-d) has its own rule, looser than the one for what
// the injected code loads or records into: outputs are data rocprof-go
// writes, each file created under a new name with O_EXCL|O_NOFOLLOW and
// renamed into place (internal/atomicfile), and nothing runs them. What
// must not happen is that a user nobody chose to trust decides where they
// go: a directory on the path that every user can write without the sticky
// bit lets any of them rename it away and put a link to a directory of
// theirs choosing in its place (root's outputs written into /etc, one
// user's results into another's directory, or onto a file system they
// fill). So a directory writable by others (o+w) without the sticky bit is
// refused, on the whole path, with the fix.
//
// A directory its group can write stays allowed: HPC projects share
// results in group-writable (often setgid) project directories owned by
// the project's lead, and refusing them would break that practice for
// nothing a member could not do anyway (they can write the results
// themselves). The group is trusted as its owner is; likewise a directory
// on the path owned by another user, who chose to share it. A symbolic
// link is followed when root, this user or the owner of the directory
// holding it owns it (that owner could replace it anyway); another user's
// link in a shared directory is refused, as the kernel's
// protected_symlinks does in /tmp.

// OutputError is an output directory (or a directory on its path) that
// will not be used, with the fix.
type OutputError struct {
	Path   string // the directory that fails
	Reason string
	Fix    string
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("%s cannot be trusted with outputs (%s): %s", e.Path, e.Reason, e.Fix)
}

// outputReason says why a directory on an output path cannot be used, and
// the fix, or "".
func outputReason(st *unix.Stat_t) (reason, fix string) {
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return "not a directory", "remove it or choose another output directory with -d"
	case st.Mode&0o002 != 0 && st.Mode&unix.S_ISVTX == 0:
		return fmt.Sprintf("writable by every user (mode %04o) without the sticky bit: any of them could replace it", st.Mode&0o7777),
			"give it the sticky bit as /tmp has (chmod +t), or take others' write permission away (chmod o-w; a group-writable project directory is fine), or choose another output directory with -d"
	}
	return "", ""
}

// MkdirOutput opens the output directory path, creating it and its missing
// parents with mode perm (mkdirat through each verified parent). Every
// directory on the path is opened one component at a time with O_NOFOLLOW
// and checked on its descriptor (see the package's output rule); each one
// created is opened again and must be this user's directory.
func MkdirOutput(path string, perm os.FileMode) (*Dir, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: "/", Err: err}
	}
	cur, curPath := fd, "/"
	fail := func(err error) (*Dir, error) {
		unix.Close(cur)
		return nil, err
	}
	check := func() error {
		var st unix.Stat_t
		if err := unix.Fstat(cur, &st); err != nil {
			return &os.PathError{Op: "stat", Path: curPath, Err: err}
		}
		if r, fix := outputReason(&st); r != "" {
			return &OutputError{curPath, r, fix}
		}
		return nil
	}
	if err := check(); err != nil {
		return fail(err)
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
			// Lexical, as filepath.Abs already made the path: only a
			// link's target can hold "..", resolved from its directory.
			next, err := unix.Openat(cur, "..", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				return fail(&os.PathError{Op: "open", Path: filepath.Dir(curPath), Err: err})
			}
			unix.Close(cur)
			cur, curPath = next, filepath.Dir(curPath)
			if err := check(); err != nil {
				return fail(err)
			}
			continue
		}
		p := filepath.Join(curPath, c)
		var st unix.Stat_t
		err := unix.Fstatat(cur, c, &st, unix.AT_SYMLINK_NOFOLLOW)
		created := false
		if errors.Is(err, unix.ENOENT) {
			if err := unix.Mkdirat(cur, c, uint32(perm.Perm())); err != nil && !errors.Is(err, unix.EEXIST) {
				return fail(&os.PathError{Op: "mkdir", Path: p, Err: err})
			}
			created = true
			err = unix.Fstatat(cur, c, &st, unix.AT_SYMLINK_NOFOLLOW)
		}
		if err != nil {
			return fail(&os.PathError{Op: "stat", Path: p, Err: err})
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			var dirSt unix.Stat_t
			if err := unix.Fstat(cur, &dirSt); err != nil {
				return fail(&os.PathError{Op: "stat", Path: curPath, Err: err})
			}
			if !byUs(&st) && st.Uid != dirSt.Uid {
				return fail(&OutputError{p, fmt.Sprintf("a symbolic link owned by uid %d, not by you (uid %d), root or the owner of %s: another user may have planted it", st.Uid, uid(), curPath),
					"remove it, or choose another output directory with -d"})
			}
			if links++; links > maxLinks {
				return fail(&os.PathError{Op: "open", Path: abs, Err: unix.ELOOP})
			}
			buf := make([]byte, unix.PathMax)
			n, err := unix.Readlinkat(cur, c, buf)
			if err != nil {
				return fail(&os.PathError{Op: "readlink", Path: p, Err: err})
			}
			target := string(buf[:n])
			if strings.HasPrefix(target, "/") {
				root, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
				if err != nil {
					return fail(&os.PathError{Op: "open", Path: "/", Err: err})
				}
				unix.Close(cur)
				cur, curPath = root, "/"
				if err := check(); err != nil {
					return fail(err)
				}
			}
			queue = append(strings.Split(target, "/"), queue...)
			continue
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return fail(&os.PathError{Op: "mkdir", Path: p, Err: unix.ENOTDIR})
		}
		next, err := unix.Openat(cur, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return fail(&os.PathError{Op: "open", Path: p, Err: err})
		}
		unix.Close(cur)
		cur, curPath = next, p
		if created {
			// What the umask made of perm: under umask 000 a directory
			// made for every user (perm 0777) would be writable by all
			// without the sticky bit, and refused below. It gets the
			// sticky bit, as /tmp has: the others may still add entries,
			// not remove or rename this user's.
			var st unix.Stat_t
			if err := unix.Fstat(cur, &st); err == nil && st.Uid == uid() && st.Mode&0o002 != 0 && st.Mode&unix.S_ISVTX == 0 {
				if err := unix.Fchmod(cur, (st.Mode&0o7777)|unix.S_ISVTX); err != nil {
					return fail(&os.PathError{Op: "chmod", Path: p, Err: err})
				}
			}
		}
		// Checked on the descriptor: what was checked is what is used.
		if err := check(); err != nil {
			return fail(err)
		}
		if created {
			var st unix.Stat_t
			if err := unix.Fstat(cur, &st); err != nil {
				return fail(&os.PathError{Op: "stat", Path: p, Err: err})
			}
			if st.Uid != uid() {
				return fail(&OutputError{p, fmt.Sprintf("created by uid %d in a race, not by you (uid %d)", st.Uid, uid()),
					"remove it, or choose another output directory with -d"})
			}
		}
	}
	return &Dir{f: os.NewFile(uintptr(cur), curPath), path: curPath}, nil
}

// CheckWritable creates and removes a new file in d (O_EXCL|O_NOFOLLOW):
// that outputs can be created there.
func (d *Dir) CheckWritable() error {
	f, err := d.Create(".rocprof-go-write-check-"+strconv.FormatUint(rand.Uint64(), 36), 0o600)
	if err != nil {
		return err
	}
	name := filepath.Base(f.Name())
	f.Close()
	return unix.Unlinkat(d.fd(), name, 0)
}
