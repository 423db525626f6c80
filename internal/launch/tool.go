package launch

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// EmbeddedTool unpacks an executable the CLI embeds gzip-compressed (the
// DuckDB engine) into the library cache, as the injected libraries are
// (the same directory rule, node-local when the home is shared), and
// returns its path. A copy already there is used when its content hashes
// to what was embedded; a damaged one is replaced.
func EmbeddedTool(name string, gz []byte) (string, error) {
	data, err := gunzip(gz)
	if err != nil {
		return "", fmt.Errorf("embedded %s: %w", name, err)
	}
	sum := sha256.Sum256(data)
	tag := "tool-" + hex.EncodeToString(sum[:8])
	root, _, err := cacheRoot() // a noexec place is passed over, as for the libraries
	if err != nil {
		return "", err
	}
	rd, err := privateDir(root)
	if err != nil {
		return "", err
	}
	defer rd.Close()
	dir := filepath.Join(rd.Path(), tag)
	path := filepath.Join(dir, name)
	if sameContent(path, sum) {
		return path, nil
	}
	tmp, err := rd.MkdirTemp(".unpack-")
	if err != nil {
		return "", fmt.Errorf("cannot unpack %s into %s: %w", name, rd.Path(), err)
	}
	defer os.RemoveAll(tmp.Path())
	defer tmp.Close()
	if err := tmp.WriteFile(name, data, 0o700); err != nil {
		return "", fmt.Errorf("cannot unpack %s: %w", name, err)
	}
	// A damaged copy is moved aside first (only this user can have made
	// it: the cache is private); a racing process's good copy is kept.
	if _, err := os.Lstat(dir); err == nil {
		_ = rd.Rename(tag, filepath.Join(filepath.Base(tmp.Path()), "old"))
	}
	if err := rd.Rename(filepath.Base(tmp.Path()), tag); err != nil && !sameContent(path, sum) {
		return "", fmt.Errorf("cannot install %s into %s: %w", name, dir, err)
	}
	if !sameContent(path, sum) {
		return "", fmt.Errorf("%s: the unpacked copy does not match the embedded one", path)
	}
	return path, nil
}

func gunzip(gz []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

// sameContent reports whether path is a regular file of this user's,
// writable by no one else, whose content hashes to sum.
func sameContent(path string, sum [32]byte) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || owner(fi) != uint32(os.Geteuid()) || fi.Mode().Perm()&0o022 != 0 {
		return false
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false
	}
	return bytes.Equal(h.Sum(nil), sum[:])
}
