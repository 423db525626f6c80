package launch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/rocprof-go/rocprof-go/internal/securedir"
)

// The library cache is code that every profiled process loads, so on a
// shared machine nobody else may be able to put anything there: not by
// owning a directory on the way (/tmp/rocprof-go-<uid> made first by
// someone else), not by a symlink, not by editing a library. These checks
// are the ones a careful setuid-free tool makes (OpenSSH's for
// authorized_keys), made by internal/securedir: every directory from / to
// the cache is owned by root or this user, and none is writable by others
// unless it is sticky (/tmp).

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

// cacheError says which directory of the cache's path cannot be trusted
// (securedir's verdict) as an UnsafeCacheError.
func cacheError(root string, err error) error {
	var ue *securedir.UntrustedError
	if errors.As(err, &ue) {
		return &UnsafeCacheError{ue.Path, ue.Reason}
	}
	return fmt.Errorf("cannot create the library cache %s: %w", root, err)
}

// privateDir opens root, a directory only this user can write on a path
// only root and this user control (internal/securedir), creating it (and,
// when missing, its parent, as this user's) and closing it to others
// (0700). The returned directory's path has no symbolic links: it is where
// everything is then read and written.
func privateDir(root string) (*securedir.Dir, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	parent := filepath.Dir(root)
	if _, err := os.Stat(parent); os.IsNotExist(err) {
		// e.g. ~/.cache on a fresh account; created as this user.
		if err := os.MkdirAll(parent, 0o700); err != nil {
			return nil, fmt.Errorf("cannot create the library cache %s: %w", root, err)
		}
	}
	pd, err := securedir.Open(parent)
	if err != nil {
		return nil, cacheError(root, err)
	}
	defer pd.Close()
	// Ours but open to others is closed; what others may have put in it is
	// caught by verifyUnpacked (owner and content of each file).
	d, err := pd.MkdirPrivate(filepath.Base(root))
	if err != nil {
		return nil, cacheError(root, err)
	}
	return d, nil
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
