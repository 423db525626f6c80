package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// MkdirAll creates dir and its missing parents like os.MkdirAll, but does
// not follow a symbolic link that someone else planted on the way: in a
// shared output directory (-d /shared/prof), another user's link named like
// a per-host or per-rank sub-directory would otherwise lead the outputs
// into a directory of theirs choosing (one of the victim's). Links owned by
// this user or by root (the user's own layout, /var/run) are followed.
func MkdirAll(dir string, perm os.FileMode) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	uid := uint32(os.Geteuid())
	p := "/"
	for _, c := range strings.Split(strings.TrimPrefix(abs, "/"), "/") {
		if c == "" {
			continue
		}
		p = filepath.Join(p, c)
		fi, err := os.Lstat(p)
		if os.IsNotExist(err) {
			if err := os.Mkdir(p, perm); err != nil && !os.IsExist(err) {
				return err
			}
			if fi, err = os.Lstat(p); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			st, ok := fi.Sys().(*syscall.Stat_t)
			if !ok || (st.Uid != uid && st.Uid != 0) {
				return &os.PathError{Op: "mkdir", Path: p, Err: fmt.Errorf(
					"a symbolic link owned by uid %d, not by you or root: another user may have planted it; remove it or choose another output directory", st.Uid)}
			}
			if fi, err = os.Stat(p); err != nil {
				return err
			}
		}
		if !fi.IsDir() {
			return &os.PathError{Op: "mkdir", Path: p, Err: syscall.ENOTDIR}
		}
	}
	return nil
}
