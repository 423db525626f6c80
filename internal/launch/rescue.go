package launch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/placeholder"
	"github.com/rocprof-go/rocprof-go/internal/securedir"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// A rank torn down by its launcher right after its app exited (mpirun:
// SIGTERM to the process group, SIGKILL a second later; Slurm's scancel or
// time limit) used to lose every record its outputs did not hold yet: the
// spools were in /dev/shm, node-local memory that nobody looks at and that a
// job's cleanup wipes. Now the pass's spools are first made durable in the
// output directory — "rescued" into
//
//	<output dir>/.rocprof-go-unconverted-<uid>/<rank R-|><host>-<pid>/
//	    manifest.json   who (rank, host, pid), why, the app's exit status, state
//	    pass_N/rpg-*.spool
//
// (a hard link when the spools are on the output directory's file system,
// else a copy of the spool's used part), fsynced, and the outputs are
// written on; when they are complete the directory is removed. A SIGKILL
// meanwhile leaves it: `rocprof-go convert -i <output dir>` and `rocprof-go
// summary <output dir>` find it and say which ranks they recovered.
//
// When: on the first SIGTERM/SIGINT/SIGHUP after the app exited
// (OutputGuard), at once when the app ended after such a signal was
// forwarded to it (a teardown under way), and at once under a launcher when
// the spools are larger than RescueEarlyEnv's threshold (their outputs take
// long). Everything is created with mkdirat/openat (O_EXCL|O_NOFOLLOW)
// through descriptors of the verified output directory.

// UnconvertedDir is the hidden directory of an output directory that held
// the spools of runs that could not finish their outputs, in older
// versions; each user's is now UnconvertedDirOf(uid), named after it.
const UnconvertedDir = ".rocprof-go-unconverted"

// UnconvertedManifestName is the file describing one rescued run.
const UnconvertedManifestName = "manifest.json"

// RescueEarlyEnv is the spool size in MiB from which a run started by a
// launcher (an MPI or Slurm rank) makes its spools durable in the output
// directory as soon as its app exits, before the outputs (default 256;
// 0: always; "off": only on a signal).
const RescueEarlyEnv = "ROCPROF_GO_RESCUE_EARLY_MIB"

const rescueEarlyDefaultMiB = 256

// SpoolsOnOutputEnv chooses where a run a launcher started puts its
// spools: "auto" (default) in OUTDIR/.rocprof-go-unconverted-<uid> when the
// output directory is on a local disk file system (not NFS, Lustre, GPFS,
// BeeGFS, CephFS, CIFS...) and on a path the spool rule trusts, else as
// any run (/dev/shm); "1" there on any file system; "0" never.
const SpoolsOnOutputEnv = "ROCPROF_GO_SPOOLS_ON_OUTPUT"

// outputSpoolRoot is OUTDIR/.rocprof-go-unconverted-<uid> as the spool root,
// when SpoolsOnOutputEnv and the launcher say so; nil otherwise (the
// spools go where any run's go).
func (r *Runner) outputSpoolRoot(plan *options.Plan) (*securedir.Dir, bool) {
	if r.SpoolRoot != "" || envLookup(r.Environ, SpoolRootEnv) != "" || len(plan.Passes) == 0 {
		return nil, false
	}
	mode := envLookup(r.Environ, SpoolsOnOutputEnv)
	if mode == "0" || mode == "off" {
		return nil, false
	}
	l := placeholder.LauncherOf(func(k string) (string, bool) { v := envLookup(r.Environ, k); return v, v != "" })
	if l.Name == "" && mode != "1" {
		return nil, false
	}
	dir, err := filepath.Abs(staticPrefixOrDot(PassDir(plan.Passes[0])))
	if err != nil {
		return nil, false
	}
	od, err := securedir.MkdirOutput(dir, 0o755)
	if err != nil {
		return nil, false
	}
	fs, shared, err := sharedFileSystemOf(od)
	if err != nil {
		od.Close()
		return nil, false
	}
	if shared && mode != "1" {
		r.Log.Debug().Str("dir", dir).Str("fs", fs).Msg("the output directory is on a shared file system: the spools stay node-local")
		od.Close()
		return nil, false
	}
	top, _, err := openUnconvertedTop(od, r.Stderr)
	od.Close()
	if err != nil {
		return nil, false
	}
	path := top.Path()
	top.Close()
	// The injected code gets this path: the spool root's rule applies.
	d, err := securedir.Open(path)
	if err != nil {
		r.Log.Debug().Err(err).Msg("the output directory is no trusted spool root: the spools stay node-local")
		return nil, false
	}
	d, err = spoolRoom(d)
	if err != nil {
		return nil, false
	}
	return d, true
}

// Rescue states in the manifest.
const (
	RescueCopying  = "copying"  // cut short: the spools present may be partial
	RescueComplete = "complete" // every spool is there whole
)

// UnconvertedManifest describes one rescued run (manifest.json).
type UnconvertedManifest struct {
	Format   string `json:"format"` // "rocprof-go-unconverted/1"
	State    string `json:"state"`
	Synced   bool   `json:"synced"` // fsynced: survives a crash of the node too
	Reason   string `json:"reason"`
	Rank     string `json:"rank,omitempty"` // the launcher's rank ("" without one)
	Size     string `json:"size,omitempty"`
	RankVar  string `json:"rank_var,omitempty"`
	Launcher string `json:"launcher,omitempty"`
	Job      string `json:"job,omitempty"`
	Host     string `json:"host"`
	PID      int    `json:"pid"`     // rocprof-go's
	AppPID   int    `json:"app_pid"` // the app's
	// AppExitStatus is the app's exit status (128+N: killed by signal N).
	AppExitStatus int      `json:"app_exit_status"`
	Pass          int      `json:"pass"`
	OutputDir     string   `json:"output_directory"`
	OutputFile    string   `json:"output_file,omitempty"`
	Formats       []string `json:"formats,omitempty"`
	// RunDir is where the spools were on the node (node-local memory).
	RunDir  string         `json:"run_dir"`
	Started time.Time      `json:"started"`
	Spools  []RescuedSpool `json:"spools"`
	// Milliseconds until every spool was there whole, and fsynced.
	SafeMs   float64 `json:"safe_ms"`
	SyncedMs float64 `json:"synced_ms,omitempty"`
}

// RescuedSpool is one spool of a rescue, relative to its directory.
type RescuedSpool struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	Linked bool   `json:"linked,omitempty"` // a hard link, not a copy
}

// RescueResult is what a rescue did.
type RescueResult struct {
	Dir    string // the rescue's directory
	Spools int
	Bytes  int64
	Safe   time.Duration // every spool whole in the output directory
	Synced time.Duration // and fsynced
}

// rescuer makes one pass's spools durable in its output directory, at most
// once, and removes them when the outputs are complete.
type rescuer struct {
	passDir *securedir.Dir // the run's pass directory (its spools)
	outDir  string         // the output directory (fixed part of -d)
	man     UnconvertedManifest
	stderr  io.Writer

	mu      sync.Mutex
	started bool
	done    chan struct{}
	res     *RescueResult
	err     error
	od      *securedir.Dir // outDir
	top     *securedir.Dir // outDir/.rocprof-go-unconverted-<uid>
	topName string         // its name
	entry   *securedir.Dir // its directory of this run
	name    string         // entry's name in top
}

func (r *Runner) newRescuer(passDir *securedir.Dir, pass int, cfg *options.Config, proc *ProcessResult, runDir string) *rescuer {
	lookup := func(k string) (string, bool) {
		v := envLookup(r.Environ, k)
		return v, v != ""
	}
	l := placeholder.LauncherOf(lookup)
	host, _ := os.Hostname()
	rs := &rescuer{passDir: passDir, outDir: staticPrefix(PassDir(cfg)), stderr: r.Stderr, done: make(chan struct{})}
	if rs.outDir == "" {
		rs.outDir = "."
	}
	rs.man = UnconvertedManifest{
		Format: "rocprof-go-unconverted/1", Rank: l.Rank, Size: l.Size, RankVar: l.RankVar, Launcher: l.Name, Job: l.Job,
		Host: host, PID: os.Getpid(), Pass: pass, OutputDir: PassDir(cfg), OutputFile: cfg.OutputFile,
		Formats: cfg.OutputFormat, RunDir: runDir,
	}
	if proc != nil {
		rs.man.AppPID, rs.man.AppExitStatus = proc.Pid, proc.ExitStatus
	}
	if abs, err := filepath.Abs(rs.outDir); err == nil {
		rs.outDir = abs
	}
	return rs
}

// early reports whether the spools should be made durable as soon as the
// app exits: a launcher started this run and the spools are large.
func (rs *rescuer) early(environ []string) bool {
	if rs == nil || rs.man.Launcher == "" {
		return false
	}
	limit := int64(rescueEarlyDefaultMiB)
	if v := envLookup(environ, RescueEarlyEnv); v != "" {
		if v == "off" {
			return false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return false
		}
		limit = n
	}
	var total int64
	for _, s := range rs.spools() {
		total += s.size
	}
	return total >= limit<<20
}

type spoolFile struct {
	name string
	size int64
}

// spools lists the pass directory's spools (rpg-*.spool).
func (rs *rescuer) spools() []spoolFile {
	d, err := rs.passDir.Open(".")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	sort.Strings(names)
	var out []spoolFile
	for _, n := range names {
		if !strings.HasPrefix(n, "rpg-") || !strings.HasSuffix(n, ".spool") {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(int(d.Fd()), n, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		out = append(out, spoolFile{n, st.Size})
	}
	return out
}

// start begins the rescue (once) in the background, for reason.
func (rs *rescuer) start(reason string) {
	if rs == nil {
		return
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.started {
		return
	}
	rs.started = true
	rs.man.Reason = reason
	go func() {
		defer close(rs.done)
		// The outputs' writers yield most of the CPU meanwhile: under a
		// launcher the ranks of a node compete for it, and the copy has to
		// be done before the SIGKILL (the copy itself runs in the kernel,
		// outside the Go scheduler's processors).
		prev := runtime.GOMAXPROCS(1)
		res, err := rs.run()
		runtime.GOMAXPROCS(prev)
		rs.mu.Lock()
		rs.res, rs.err = res, err
		rs.mu.Unlock()
	}()
}

// wait waits for a started rescue; nil, nil when none was started.
func (rs *rescuer) wait() (*RescueResult, error) {
	if rs == nil {
		return nil, nil
	}
	rs.mu.Lock()
	started := rs.started
	rs.mu.Unlock()
	if !started {
		return nil, nil
	}
	<-rs.done
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.res, rs.err
}

// discard removes the rescue once the outputs are complete (waiting for one
// under way), and closes the rescuer; none starts after it.
func (rs *rescuer) discard() {
	if rs == nil {
		return
	}
	rs.finish(true)
}

// close releases the rescuer's descriptors, keeping the rescue; none
// starts after it.
func (rs *rescuer) close() {
	if rs == nil {
		return
	}
	rs.finish(false)
}

func (rs *rescuer) finish(remove bool) {
	rs.mu.Lock()
	was := rs.started
	rs.started = true
	rs.mu.Unlock()
	if was {
		<-rs.done
	} else {
		close(rs.done) // none will run: wait returns at once
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.entry != nil {
		if remove {
			_ = removeTree(rs.top, rs.name)
		}
		rs.entry.Close()
		rs.entry = nil
	}
	if rs.top != nil {
		rs.top.Close()
		rs.top = nil
	}
	if rs.od != nil {
		if remove && rs.topName != "" {
			// Gone once no other run's rescue is in it.
			if f, err := rs.od.Open("."); err == nil {
				_ = unix.Unlinkat(int(f.Fd()), rs.topName, unix.AT_REMOVEDIR)
				f.Close()
			}
		}
		rs.od.Close()
		rs.od = nil
	}
	rs.passDir.Close()
}

// run makes the spools durable: the entry directory and its manifest
// (state copying), every spool linked or copied under a temporary name and
// renamed whole, the manifest's state complete; then fsync of every file
// and directory, and the manifest says so.
func (rs *rescuer) run() (*RescueResult, error) {
	t0 := time.Now()
	od, err := securedir.MkdirOutput(rs.outDir, 0o755)
	if err != nil {
		return nil, err
	}
	rs.mu.Lock()
	rs.od = od
	rs.mu.Unlock()
	name := rescueName(rs.man)
	var top, entry *securedir.Dir
	var topName string
	for attempt := 1; ; attempt++ {
		top, topName, err = openUnconvertedTop(od, rs.stderr)
		if err != nil {
			return nil, err
		}
		afterTopOpened(top)
		entry, err = top.Mkdir(name)
		if errors.Is(err, unix.EEXIST) {
			entry, err = top.MkdirTemp(name + "-")
		}
		if err == nil {
			break
		}
		top.Close()
		// Another run of this user removed the directory (empty when its
		// own rescue was discarded) between its opening and this entry's
		// creation: made again.
		if !errors.Is(err, unix.ENOENT) || attempt == 5 {
			return nil, err
		}
	}
	rs.mu.Lock()
	rs.top, rs.topName, rs.entry, rs.name = top, topName, entry, filepath.Base(entry.Path())
	rs.mu.Unlock()
	man := rs.man
	man.State, man.Started = RescueCopying, t0
	spools := rs.spools()
	passName := fmt.Sprintf("pass_%d", man.Pass)
	for _, s := range spools {
		man.Spools = append(man.Spools, RescuedSpool{Path: passName + "/" + s.name})
	}
	if err := writeRescueManifest(entry, &man); err != nil {
		return nil, err
	}
	pd, err := entry.Mkdir(passName)
	if err != nil {
		return nil, err
	}
	defer pd.Close()
	src, err := rs.passDir.Open(".")
	if err != nil {
		return nil, err
	}
	defer src.Close()
	dst, err := pd.Open(".")
	if err != nil {
		return nil, err
	}
	defer dst.Close()
	res := &RescueResult{Dir: entry.Path(), Spools: len(spools)}
	for i, s := range spools {
		// Same file system: the spool itself, at once.
		if unix.Linkat(int(src.Fd()), s.name, int(dst.Fd()), s.name, 0) == nil {
			man.Spools[i].Bytes, man.Spools[i].Linked = s.size, true
			res.Bytes += s.size
			continue
		}
		n, err := copySpool(rs.passDir, pd, s.name)
		man.Spools[i].Bytes = n
		res.Bytes += n
		if err != nil {
			return res, err
		}
	}
	man.State = RescueComplete
	res.Safe = time.Since(t0)
	man.SafeMs = float64(res.Safe.Microseconds()) / 1e3
	if err := writeRescueManifest(entry, &man); err != nil {
		return res, err
	}
	// Past here nothing is lost to a SIGKILL (the page cache outlives the
	// process); fsync makes it survive the node too.
	for _, s := range spools {
		if f, err := pd.Open(s.name); err == nil {
			err = f.Sync()
			f.Close()
			if err != nil {
				return res, fmt.Errorf("fsync %s: %w", f.Name(), err)
			}
		}
	}
	for _, d := range []*securedir.Dir{pd, entry, top, od} {
		if f, err := d.Open("."); err == nil {
			_ = f.Sync()
			f.Close()
		}
	}
	res.Synced = time.Since(t0)
	man.Synced, man.SyncedMs = true, float64(res.Synced.Microseconds())/1e3
	if err := writeRescueManifest(entry, &man); err != nil {
		return res, err
	}
	if f, err := entry.Open("."); err == nil {
		_ = f.Sync()
		f.Close()
	}
	return res, nil
}

// afterTopOpened is called between the opening of the hidden rescue
// directory and the creation of a rescue in it (a test's hook: another
// run removes the directory there).
var afterTopOpened = func(*securedir.Dir) {}

// openUnconvertedTop opens (creating it) this user's hidden rescue
// directory in the output directory od: .rocprof-go-unconverted-<uid>, or,
// when another user holds that name (or it is a link, or no directory), a
// new one beside it (the name, "-" and random characters), which
// FindUnconverted reads as well. It returns the directory and its name.
func openUnconvertedTop(od *securedir.Dir, warn io.Writer) (*securedir.Dir, string, error) {
	name := ownUnconvertedDir()
	top, err := od.MkdirPrivate(name)
	var ue *securedir.UntrustedError
	if !errors.As(err, &ue) {
		return top, name, err
	}
	alt, aerr := od.MkdirTemp(name + "-")
	if aerr != nil {
		return nil, "", err
	}
	if warn != nil {
		fmt.Fprintf(warn, "rocprof-go: warning: %v: this run's spools go to %s instead\n", Printable(err.Error()), alt.Path())
	}
	return alt, filepath.Base(alt.Path()), nil
}

// rescueName names a rescue's directory: rank<R>-<host>-<pid>, or
// <host>-<pid> without a launcher; one path component.
func rescueName(m UnconvertedManifest) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '/' || r == 0 || r < ' ' {
				return '_'
			}
			return r
		}, s)
	}
	host := clean(m.Host)
	if host == "" || host == "." || host == ".." {
		host = "host"
	}
	n := host + "-" + strconv.Itoa(m.PID)
	if m.Rank != "" {
		n = "rank" + clean(m.Rank) + "-" + n
	}
	return n
}

// copySpool copies the used part of a spool (its reserved chunks: the rest
// is the recorder's pre-allocation, zeros) from src to dst under a
// temporary name, renamed to its name when whole.
func copySpool(src, dst *securedir.Dir, name string) (int64, error) {
	in, err := src.Open(name)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return 0, err
	}
	n := st.Size()
	if used, ok := tracing.UsedSize(in, n); ok {
		n = used
	}
	tmp := ".partial-" + name
	out, err := dst.Create(tmp, 0o600)
	if err != nil {
		return 0, err
	}
	w, err := io.Copy(out, io.NewSectionReader(in, 0, n))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && w != n {
		err = io.ErrShortWrite
	}
	if err != nil {
		return w, fmt.Errorf("copy %s to %s: %w", in.Name(), out.Name(), err)
	}
	return w, dst.Rename(tmp, name)
}

// writeRescueManifest replaces the manifest whole (a new file renamed over
// it).
func writeRescueManifest(d *securedir.Dir, m *UnconvertedManifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := ".manifest-" + strconv.FormatUint(rand.Uint64(), 36)
	if err := d.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return err
	}
	return d.Rename(tmp, UnconvertedManifestName)
}

// removeTree removes d's entry name and everything in it, through
// descriptors (never a path resolved again).
func removeTree(d *securedir.Dir, name string) error {
	f, err := d.Open(".")
	if err != nil {
		return err
	}
	defer f.Close()
	return removeAt(int(f.Fd()), name, 0)
}

func removeAt(dirfd int, name string, depth int) error {
	if depth > 8 {
		return unix.ELOOP
	}
	err := unix.Unlinkat(dirfd, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM) {
		return err
	}
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	sub := os.NewFile(uintptr(fd), name)
	names, _ := sub.Readdirnames(-1)
	for _, n := range names {
		if err := removeAt(fd, n, depth+1); err != nil {
			sub.Close()
			return err
		}
	}
	sub.Close()
	return unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
}
