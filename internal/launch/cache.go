package launch

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The library cache is code that every profiled process loads, so on a
// shared machine nobody else may be able to put anything there: not by
// owning a directory on the way (/tmp/rocprof-go-<uid> made first by
// someone else), not by a symlink, not by editing a library. These checks
// are the ones a careful setuid-free tool makes (OpenSSH's for
// authorized_keys): every directory from / to the cache is owned by root
// or this user, and none is writable by others unless it is sticky (/tmp).

// UnsafeCacheError is a cache directory that another user could have
// written into. EmbeddedLibraries then uses a private directory instead.
type UnsafeCacheError struct {
	Path   string
	Reason string
}

func (e *UnsafeCacheError) Error() string {
	return fmt.Sprintf("the library cache %s cannot be trusted (%s): remove it, or set XDG_CACHE_HOME to a directory only you can write", e.Path, e.Reason)
}

// owner returns a file's owner from its stat.
func owner(fi fs.FileInfo) uint32 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Uid
	}
	return ^uint32(0)
}

// trustedAncestor checks one directory above the cache.
func trustedAncestor(path string, fi fs.FileInfo, uid uint32) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return &UnsafeCacheError{path, "a symbolic link"}
	case !fi.IsDir():
		return &UnsafeCacheError{path, "not a directory"}
	case owner(fi) != 0 && owner(fi) != uid:
		return &UnsafeCacheError{path, fmt.Sprintf("owned by uid %d", owner(fi))}
	case fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0:
		return &UnsafeCacheError{path, fmt.Sprintf("writable by others (mode %04o)", fi.Mode().Perm())}
	}
	return nil
}

// privateDir makes sure root is a directory only this user can write, on a
// path only root and this user control, creating it (and, inside a
// directory of this user's, its parents) when missing. It returns root with
// its parent's symbolic links resolved, which is where everything is then
// read and written.
func privateDir(root string) (string, error) {
	uid := uint32(os.Geteuid())
	root, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	parent := filepath.Dir(root)
	if _, err := os.Stat(parent); os.IsNotExist(err) {
		// e.g. ~/.cache on a fresh account; created as this user.
		if err := os.MkdirAll(parent, 0o700); err != nil {
			return "", fmt.Errorf("cannot create the library cache %s: %w", root, err)
		}
	}
	real, err := filepath.EvalSymlinks(parent)
	if err != nil {
		return "", fmt.Errorf("cannot create the library cache %s: %w", root, err)
	}
	// Every directory from / down: links are resolved above, and each of
	// these is owned by root or us, so nobody else can re-point them now.
	p := "/"
	for _, c := range append([]string{""}, strings.Split(strings.TrimPrefix(real, "/"), "/")...) {
		p = filepath.Join(p, c)
		fi, err := os.Lstat(p)
		if err != nil {
			return "", fmt.Errorf("cannot check the library cache's directory %s: %w", p, err)
		}
		if err := trustedAncestor(p, fi, uid); err != nil {
			return "", err
		}
	}
	root = filepath.Join(real, filepath.Base(root))
	if err := os.Mkdir(root, 0o700); err != nil && !os.IsExist(err) {
		return "", fmt.Errorf("cannot create the library cache %s: %w", root, err)
	}
	fi, err := os.Lstat(root)
	if err != nil {
		return "", fmt.Errorf("cannot check the library cache %s: %w", root, err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return "", &UnsafeCacheError{root, "a symbolic link"}
	case !fi.IsDir():
		return "", &UnsafeCacheError{root, "not a directory"}
	case owner(fi) != uid:
		return "", &UnsafeCacheError{root, fmt.Sprintf("owned by uid %d, not by you (uid %d)", owner(fi), uid)}
	}
	if fi.Mode().Perm() != 0o700 {
		// Ours but open to others: close it; what others may have put in
		// it is caught by verifyUnpacked (owner and content of each file).
		if err := os.Chmod(root, 0o700); err != nil {
			return "", fmt.Errorf("cannot make the library cache %s private: %w", root, err)
		}
	}
	return root, nil
}

// verifyUnpacked checks an unpacked library directory before its libraries
// are injected: a directory of this user's, not writable by others, holding
// each embedded library byte for byte, each a regular file of this user's.
func verifyUnpacked(dir string, names []string, content map[string][]byte) error {
	uid := uint32(os.Geteuid())
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() || owner(fi) != uid || fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s: not a private directory of yours", dir)
	}
	for _, n := range names {
		if err := verifyLibrary(filepath.Join(dir, n), content[n], uid); err != nil {
			return err
		}
	}
	return nil
}

func verifyLibrary(path string, want []byte, uid uint32) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || owner(fi) != uid || fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s: not a private file of yours", path)
	}
	if fi.Size() != int64(len(want)) {
		return fmt.Errorf("%s: %d bytes, the embedded library has %d", path, fi.Size(), len(want))
	}
	got := make([]byte, len(want))
	if _, err := io.ReadFull(f, got); err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%s: differs from the embedded library", path)
	}
	return nil
}
