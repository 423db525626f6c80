package launch

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/rocprof-go/rocprof-go/internal/securedir"
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
	// Warning, when set, says why the libraries are not in the user's
	// cache this time (the CLI prints it).
	Warning string
	// Note, when set, says which places for the cache were passed over and
	// why (a noexec mount: the libraries could not be mapped executable
	// there); the CLI prints it.
	Note string
}

// Path returns the absolute path of one library, or an error saying how to
// get it. The library is checked as it is about to be injected (Prepare
// calls Path right before the app starts): a regular file that only root
// or this user can change, on a path only they control
// (internal/securedir), since every process of the app loads it by path.
func (l *Libraries) Path(name string) (string, error) {
	p, err := filepath.Abs(filepath.Join(l.Dir, name))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("library %s is missing from %s: rebuild rocprof-go with `make build` (or set %s to a directory holding it)", name, l.Dir, LibDirEnv)
	}
	if _, err := securedir.CheckFile(p); err != nil {
		return "", fmt.Errorf("library %s will not be injected: %w: another user could replace it; take others' write permission from what is named (chmod go-w), or put the libraries in a directory only you (or root) can change and set %s to it", p, err, LibDirEnv)
	}
	return p, nil
}

var (
	unpackOnce sync.Once
	unpacked   *Libraries
	unpackErr  error
	fallback   string // a per-process directory used when the cache is unsafe
)

// EmbeddedLibraries unpacks the libraries embedded in the CLI into a per-user
// cache directory named after their content hash, once per process, and
// checks them before they are used: every directory on the way must be
// private to this user or the system (cache.go), and every library must be
// byte for byte the embedded one, or it is replaced. Concurrent first runs
// are safe: each unpacks into a private temporary directory and renames it
// into place; the loser of the race uses the winner's copy. When the cache
// cannot be trusted (another user owns it, a symlink on the way), the
// libraries go to a new private directory of this process instead, removed
// by Cleanup, and Libraries.Warning says why; that directory passes the
// same checks (unpackPrivate), or the run stops.
func EmbeddedLibraries() (*Libraries, error) {
	if dir := os.Getenv(LibDirEnv); dir != "" {
		return libDirLibraries(dir)
	}
	unpackOnce.Do(func() {
		if names, err := payloadFiles(payload); err == nil && len(names) == 0 {
			// A program built against this module outside the repository:
			// `make build` embeds the libraries only into its own build.
			unpacked, unpackErr = librariesOfCommand()
			return
		}
		root, note, err := cacheRoot()
		if err != nil {
			unpackErr = err
			return
		}
		unpacked, unpackErr = unpack(payload, root)
		if unpacked != nil {
			unpacked.Note = note
		}
		var ue *UnsafeCacheError
		if errors.As(unpackErr, &ue) {
			unpacked, unpackErr = unpackPrivate(payload)
			if unpackErr != nil {
				unpackErr = fmt.Errorf("%w; %w", ue, unpackErr)
			}
			if unpacked != nil {
				fallback = unpacked.Dir
				unpacked.Warning = ue.Error() + "; using a private copy in " + unpacked.Dir + " for this run"
			}
		}
	})
	return unpacked, unpackErr
}

// libDirLibraries is ROCPROF_GO_LIBDIR's directory, made absolute (a
// relative LD_PRELOAD would be looked up again in whatever directory each
// of the app's processes runs in) and checked like the cache: a directory
// on a path only root and this user control.
func libDirLibraries(dir string) (*Libraries, error) {
	d, err := securedir.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w: another user could put their libraries there; point it at a directory only you (or root) can change, or take others' write permission from the directory named (chmod go-w)", LibDirEnv, dir, err)
	}
	defer d.Close()
	if noexec, mnt := noexecAt(d.Path()); noexec {
		return nil, fmt.Errorf("%s=%s: the directory is on a file system mounted noexec (%s): the app's processes could not map the libraries executable; point it at a directory on a file system mounted without noexec", LibDirEnv, dir, mnt)
	}
	return &Libraries{Dir: d.Path()}, nil
}

// LibDirCommand is the hidden subcommand of the rocprof-go CLI that
// unpacks its embedded libraries and prints their directory.
const LibDirCommand = "libdir"

// librariesOfCommand asks the rocprof-go command on PATH for its unpacked
// libraries: a Go program using pkg/rocprof outside this repository has
// none embedded, and the installed CLI holds the ones that match it.
func librariesOfCommand() (*Libraries, error) {
	exe, err := exec.LookPath("rocprof-go")
	if err != nil {
		return nil, fmt.Errorf("this program embeds no rocprof-go libraries (it was not built by rocprof-go's make) and no rocprof-go command is on PATH: "+
			"install the rocprof-go binary on PATH, or set %s to a directory holding %s, %s and %s (a rocprof-go build's build/lib and build/vgpu)",
			LibDirEnv, PreloadLib, ShimLib, VGPULib)
	}
	out, err := exec.Command(exe, LibDirCommand).Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w: set %s to a directory holding rocprof-go's libraries", exe, LibDirCommand, err, LibDirEnv)
	}
	dir := strings.TrimSpace(string(out))
	l := &Libraries{Dir: dir}
	for _, n := range []string{PreloadLib, ShimLib} {
		if _, err := l.Path(n); err != nil {
			return nil, fmt.Errorf("%s %s printed %q, which does not hold %s: set %s", exe, LibDirCommand, dir, n, LibDirEnv)
		}
	}
	return l, nil
}

// Cleanup removes the per-process library directory EmbeddedLibraries may
// have had to use; the CLI calls it before exiting.
func Cleanup() {
	if fallback != "" {
		os.RemoveAll(fallback)
	}
}

// cacheRoot is where the libraries are unpacked once per node and user:
// the user's cache directory ($XDG_CACHE_HOME or ~/.cache), unless that is
// on a file system shared between nodes. On a cluster the home directory
// usually is (NFS, Lustre, GPFS...), and every rank of a job would read
// the libraries from it: rocprof-go checks its copy byte for byte before
// each run, and every process of the app maps them. Then, and without
// HOME, the cache is node-local: $XDG_RUNTIME_DIR (a tmpfs of the user's)
// when set and local, else the temporary directory
// (rocprof-go-<uid> in TMPDIR or /tmp). The checks are the same anywhere
// (privateDir, verifyUnpacked).
//
// A place on a file system mounted noexec (/tmp on many clusters) is
// passed over whatever else it is: the app's processes could not map the
// libraries executable there, and the loader's error would look like the
// app's. note says which were passed over; with none left, the error says
// what to set.
func cacheRoot() (root, note string, err error) {
	var noexec []string
	usable := func(dir string) bool {
		if ne, mnt := noexecAt(dir); ne {
			noexec = append(noexec, fmt.Sprintf("%s (on %s, mounted noexec)", dir, mnt))
			return false
		}
		return true
	}
	pick := func(r string) (string, string, error) {
		if len(noexec) > 0 {
			note = fmt.Sprintf("the library cache is in %s: passed over %s, where the app's processes could not map the injected libraries executable",
				r, strings.Join(noexec, ", "))
		}
		return r, note, nil
	}
	if d, err := os.UserCacheDir(); err == nil {
		root := filepath.Join(d, "rocprof-go")
		if _, shared := sharedFileSystemAt(root); !shared && usable(root) {
			return pick(root)
		}
	}
	candidates := nodeLocalCacheRoots()
	for _, r := range candidates {
		if _, shared := sharedFileSystemAt(r); !shared && usable(r) {
			return pick(r)
		}
	}
	// Only shared file systems left: the last one whatever it is on, as
	// long as it is not noexec.
	last := candidates[len(candidates)-1]
	if ne, _ := noexecAt(last); !ne {
		return pick(last)
	}
	return "", "", &NoExecCacheError{Passed: noexec}
}

// NoExecCacheError is a run with nowhere to unpack the injected libraries
// but file systems mounted noexec.
type NoExecCacheError struct {
	Passed []string
}

func (e *NoExecCacheError) Error() string {
	return fmt.Sprintf("the injected libraries cannot be unpacked where the app could run them: %s: every place for the library cache is on a file system mounted noexec; "+
		"set XDG_CACHE_HOME to a directory on a file system mounted without noexec (the cache goes to $XDG_CACHE_HOME/rocprof-go), "+
		"or %s to a directory holding rocprof-go's libraries (`rocprof-go libdir` prints where a run unpacked them)",
		strings.Join(e.Passed, ", "), LibDirEnv)
}

// nodeLocalCacheRoots are $XDG_RUNTIME_DIR/rocprof-go (when set),
// $TMPDIR/rocprof-go-<uid> and /tmp/rocprof-go-<uid>, in that order.
func nodeLocalCacheRoots() []string {
	perUser := fmt.Sprintf("rocprof-go-%d", os.Getuid())
	var roots []string
	if d := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			roots = append(roots, filepath.Join(d, "rocprof-go"))
		}
	}
	for _, r := range []string{filepath.Join(os.TempDir(), perUser), filepath.Join("/tmp", perUser)} {
		if !slices.Contains(roots, r) {
			roots = append(roots, r)
		}
	}
	return roots
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

// payloadContent is the embedded libraries by name, and the hash naming
// their cache directory.
func payloadContent(fsys fs.FS) (map[string][]byte, []string, string, error) {
	names, err := payloadFiles(fsys)
	if err != nil {
		return nil, nil, "", err
	}
	content := make(map[string][]byte, len(names))
	h := sha256.New()
	for _, n := range names {
		data, err := fs.ReadFile(fsys, "payload/"+n)
		if err != nil {
			return nil, nil, "", err
		}
		content[n] = data
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(data))
		h.Write(data)
	}
	return content, names, hex.EncodeToString(h.Sum(nil))[:16], nil
}

func unpack(fsys fs.FS, root string) (*Libraries, error) {
	content, names, sum, err := payloadContent(fsys)
	if err != nil {
		return nil, err
	}
	rd, err := privateDir(root)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	dir := filepath.Join(rd.Path(), sum)
	if _, err := os.Lstat(dir); err == nil {
		if verifyUnpacked(dir, names, content) == nil {
			return &Libraries{Dir: dir}, nil
		}
		// Damaged (truncated, edited, half-removed): set aside and replace.
		// Only this user can have written it (the root is private).
		aside, err := rd.MkdirTemp(".damaged-")
		if err != nil {
			return nil, fmt.Errorf("cannot replace the damaged library cache %s: %w", dir, err)
		}
		err = rd.Rename(sum, filepath.Join(filepath.Base(aside.Path()), "old"))
		aside.Close()
		os.RemoveAll(aside.Path())
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("cannot replace the damaged library cache %s: %w", dir, err)
		}
	}
	tmp, err := rd.MkdirTemp(".unpack-")
	if err != nil {
		return nil, fmt.Errorf("cannot unpack libraries into %s: %w", rd.Path(), err)
	}
	defer os.RemoveAll(tmp.Path())
	defer tmp.Close()
	if err := writeLibraries(tmp, names, content); err != nil {
		return nil, err
	}
	if err := rd.Rename(filepath.Base(tmp.Path()), sum); err != nil {
		// Another process won the race; its copy has the same content.
		if verr := verifyUnpacked(dir, names, content); verr == nil {
			return &Libraries{Dir: dir}, nil
		}
		return nil, errors.Join(fmt.Errorf("cannot install libraries into %s", dir), err)
	}
	return &Libraries{Dir: dir}, nil
}

// privateRoots are where a run whose cache cannot be trusted may put its
// private copy: the temporary directory, then the system's.
func privateRoots() []string {
	var roots []string
	for _, r := range []string{os.TempDir(), "/tmp", "/var/tmp"} {
		if !slices.Contains(roots, r) {
			roots = append(roots, r)
		}
	}
	return roots
}

// unpackPrivate unpacks into a new directory of this process (0700, a
// random name), for a run whose cache cannot be trusted. It goes only
// where the cache would have been allowed to: the first of privateRoots on
// a path only root and this user control (a TMPDIR that others can write
// without the sticky bit is passed over). With none, the run stops.
func unpackPrivate(fsys fs.FS) (*Libraries, error) {
	content, names, _, err := payloadContent(fsys)
	if err != nil {
		return nil, err
	}
	var refused []string
	for _, r := range privateRoots() {
		if ne, mnt := noexecAt(r); ne {
			refused = append(refused, fmt.Sprintf("%s is on %s, mounted noexec", r, mnt))
			continue
		}
		root, err := securedir.Open(r)
		if err != nil {
			refused = append(refused, err.Error())
			continue
		}
		d, err := root.MkdirTemp("rocprof-go-libs-")
		root.Close()
		if err != nil {
			refused = append(refused, err.Error())
			continue
		}
		defer d.Close()
		if err := writeLibraries(d, names, content); err != nil {
			os.RemoveAll(d.Path())
			return nil, err
		}
		return &Libraries{Dir: d.Path()}, nil
	}
	return nil, fmt.Errorf("no private copy of the injected libraries can be made either: %s", strings.Join(refused, "; "))
}

func writeLibraries(d *securedir.Dir, names []string, content map[string][]byte) error {
	for _, n := range names {
		if err := d.WriteFile(n, content[n], 0o700); err != nil {
			return fmt.Errorf("cannot unpack %s: %w", n, err)
		}
	}
	return nil
}
