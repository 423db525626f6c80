package launch

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// payload holds the injected libraries that `make build` copies into
// payload/ before building the CLI. A CLI built without them embeds only the
// README and reports which library is missing when it needs one.
//
//go:embed payload
var payload embed.FS

// Library file names inside the payload and the unpacked directory.
const (
	PreloadLib = "librocprof-go-preload.so"
	ShimLib    = "librocprof-go-shim.so"
	VGPULib    = "librocprof-go-vgpu.so"
	ROCTxLib   = "libroctx64.so"
)

// LibDirEnv overrides where the injected libraries are taken from (a
// development build directory, or a system-wide installation).
const LibDirEnv = "ROCPROF_GO_LIBDIR"

// Libraries locates the injected libraries on disk.
type Libraries struct {
	Dir string
}

// Path returns the absolute path of one library, or an error saying how to
// get it.
func (l *Libraries) Path(name string) (string, error) {
	p := filepath.Join(l.Dir, name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("library %s is missing from %s: rebuild rocprof-go with `make build` (or set %s to a directory holding it)", name, l.Dir, LibDirEnv)
	}
	return p, nil
}

var (
	unpackOnce sync.Once
	unpacked   *Libraries
	unpackErr  error
)

// EmbeddedLibraries unpacks the libraries embedded in the CLI into a per-user
// cache directory named after their content hash, once per process. Concurrent
// first runs are safe: each unpacks into a private temporary directory and
// renames it into place; the loser of the race uses the winner's copy.
func EmbeddedLibraries() (*Libraries, error) {
	if dir := os.Getenv(LibDirEnv); dir != "" {
		return &Libraries{Dir: dir}, nil
	}
	unpackOnce.Do(func() {
		unpacked, unpackErr = unpack(payload, cacheRoot())
	})
	return unpacked, unpackErr
}

func cacheRoot() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "rocprof-go")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("rocprof-go-%d", os.Getuid()))
}

// payloadFiles lists the embedded libraries (everything but the README).
func payloadFiles(fsys fs.FS) ([]string, error) {
	entries, err := fs.ReadDir(fsys, "payload")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name() != "README.md" {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

func unpack(fsys fs.FS, root string) (*Libraries, error) {
	names, err := payloadFiles(fsys)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	for _, n := range names {
		data, err := fs.ReadFile(fsys, "payload/"+n)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(data))
		h.Write(data)
	}
	dir := filepath.Join(root, hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return &Libraries{Dir: dir}, nil
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the library cache %s: %w", root, err)
	}
	tmp, err := os.MkdirTemp(root, ".unpack-")
	if err != nil {
		return nil, fmt.Errorf("cannot unpack libraries into %s: %w", root, err)
	}
	defer os.RemoveAll(tmp)
	for _, n := range names {
		data, _ := fs.ReadFile(fsys, "payload/"+n)
		if err := os.WriteFile(filepath.Join(tmp, n), data, 0o755); err != nil {
			return nil, fmt.Errorf("cannot unpack %s: %w", n, err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return nil, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process won the race; its copy has the same content.
		if _, serr := os.Stat(filepath.Join(dir, ".complete")); serr == nil {
			return &Libraries{Dir: dir}, nil
		}
		return nil, errors.Join(fmt.Errorf("cannot install libraries into %s", dir), err)
	}
	return &Libraries{Dir: dir}, nil
}
