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
//	<output dir>/.rocprof-go-unconverted/<rank R-|><host>-<pid>/
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

// UnconvertedDir is the hidden directory of an output directory holding the
// spools of runs that could not finish their outputs.
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
// spools: "auto" (default) in OUTDIR/.rocprof-go-unconverted when the
// output directory is on a local disk file system (not NFS, Lustre, GPFS,
// BeeGFS, CephFS, CIFS...) and on a path the spool rule trusts, else as
// any run (/dev/shm); "1" there on any file system; "0" never.
const SpoolsOnOutputEnv = "ROCPROF_GO_SPOOLS_ON_OUTPUT"

// outputSpoolRoot is OUTDIR/.rocprof-go-unconverted as the spool root,
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
	top, err := od.MkdirPrivate(UnconvertedDir)
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
	top     *securedir.Dir // outDir/.rocprof-go-unconverted
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
		if remove {
			// Gone once no other run's rescue is in it.
			if f, err := rs.od.Open("."); err == nil {
				_ = unix.Unlinkat(int(f.Fd()), UnconvertedDir, unix.AT_REMOVEDIR)
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
	top, err := od.MkdirPrivate(UnconvertedDir)
	if err != nil {
		return nil, err
	}
	name := rescueName(rs.man)
	entry, err := top.Mkdir(name)
	if errors.Is(err, unix.EEXIST) {
		entry, err = top.MkdirTemp(name + "-")
	}
	if err != nil {
		top.Close()
		return nil, err
	}
	rs.mu.Lock()
	rs.top, rs.entry, rs.name = top, entry, filepath.Base(entry.Path())
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

// Unconverted is one rescued run found in an output directory.
type Unconverted struct {
	Dir      string
	Manifest UnconvertedManifest
	// Spools are the whole spools; Partial those a SIGKILL cut short while
	// they were copied (their first chunks read back; the rest is lost).
	Spools, Partial []string
	// Orphan: no rescue but a run directory whose rocprof-go was killed
	// while its app ran (its spools were on the output directory's file
	// system): no manifest, so no exit status; Manifest is what the
	// spools' headers say (host, the app's pid, its launcher's rank) and
	// PID is rocprof-go's from the run directory's owner file (else the
	// app's). Kept: the run kept them when its outputs failed.
	Orphan, Kept bool
	// AppRunning: the orphan's app still runs on this host (its spools
	// still grow): what is converted now is not all of its records.
	AppRunning bool
}

// Label names the rescued run: "rank N (host, pid P)" or "host, pid P".
func (u *Unconverted) Label() string {
	m := &u.Manifest
	if m.Rank != "" {
		return fmt.Sprintf("rank %s (%s, pid %d)", m.Rank, m.Host, m.PID)
	}
	return fmt.Sprintf("%s, pid %d", m.Host, m.PID)
}

// Complete reports whether every spool of the run is there whole.
func (u *Unconverted) Complete() bool {
	return u.Manifest.State == RescueComplete && len(u.Partial) == 0
}

// rescueManifestLimit bounds a manifest read (anyone who can write the
// output directory could plant a huge one).
const rescueManifestLimit = 1 << 20

// FindUnconverted lists the rescued runs under path: an output directory
// (its .rocprof-go-unconverted), that directory itself, or one rescue's
// directory; for the first two also the orphaned run directories there
// (findOrphans), after the rescues. ok is false when path holds none of
// them.
func FindUnconverted(path string) (found []Unconverted, ok bool, err error) {
	var entries []string
	switch {
	case isFile(filepath.Join(path, UnconvertedManifestName)):
		entries = []string{path}
	case filepath.Base(filepath.Clean(path)) == UnconvertedDir:
		entries, _ = filepath.Glob(filepath.Join(path, "*", UnconvertedManifestName))
	default:
		entries, _ = filepath.Glob(filepath.Join(path, UnconvertedDir, "*", UnconvertedManifestName))
	}
	for i, e := range entries {
		entries[i] = strings.TrimSuffix(e, string(filepath.Separator)+UnconvertedManifestName)
	}
	top := ""
	switch {
	case len(entries) == 1 && entries[0] == path:
	case filepath.Base(filepath.Clean(path)) == UnconvertedDir:
		top = path
	default:
		top = filepath.Join(path, UnconvertedDir)
	}
	sort.Strings(entries)
	for _, dir := range entries {
		u := Unconverted{Dir: dir}
		data, err := readNoFollow(filepath.Join(dir, UnconvertedManifestName), rescueManifestLimit)
		if err != nil {
			return nil, true, err
		}
		if err := json.Unmarshal(data, &u.Manifest); err != nil {
			return nil, true, fmt.Errorf("%s: %w", filepath.Join(dir, UnconvertedManifestName), err)
		}
		passes, _ := filepath.Glob(filepath.Join(dir, "pass_*"))
		for _, p := range passes {
			whole, _ := filepath.Glob(filepath.Join(p, "rpg-*.spool"))
			part, _ := filepath.Glob(filepath.Join(p, ".partial-rpg-*.spool"))
			u.Spools = append(u.Spools, whole...)
			u.Partial = append(u.Partial, part...)
		}
		found = append(found, u)
	}
	if top != "" {
		orphans, err := findOrphans(top, found)
		if err != nil {
			return nil, true, err
		}
		found = append(found, orphans...)
	}
	return found, len(found) > 0, nil
}

// findOrphans lists the run directories in top (OUTDIR/.rocprof-go-unconverted
// when the spools were on the output directory's file system) whose
// rocprof-go is gone without removing them: SIGKILLed while its app ran
// (before any rescue: the app's own spools are the only copy), or kept
// when its outputs failed. A run directory a rescue already holds (its
// manifest's run_dir) is not listed again: its spools are the rescue's.
// Nothing is followed through a symbolic link: run and pass directories
// are lstat'ed, the files opened with O_NOFOLLOW.
func findOrphans(top string, rescued []Unconverted) ([]Unconverted, error) {
	dirs, _ := filepath.Glob(filepath.Join(top, runDirPrefix+"*"))
	sort.Strings(dirs)
	inRescue := map[string]bool{}
	for _, u := range rescued {
		if filepath.Base(filepath.Dir(u.Manifest.RunDir)) == UnconvertedDir {
			inRescue[filepath.Base(u.Manifest.RunDir)] = true
		}
	}
	host, _ := os.Hostname()
	var out []Unconverted
	for _, d := range dirs {
		if inRescue[filepath.Base(d)] || !isDir(d) {
			continue
		}
		u := Unconverted{Dir: d, Orphan: true, Kept: isFile(filepath.Join(d, runKeptFile))}
		owner := 0
		if b, err := readNoFollow(filepath.Join(d, runOwnerFile), 64); err == nil {
			owner, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		passes, _ := filepath.Glob(filepath.Join(d, "pass_*"))
		sort.Strings(passes)
		for _, p := range passes {
			if !isDir(p) {
				continue
			}
			spools, _ := filepath.Glob(filepath.Join(p, "rpg-*.spool"))
			for _, s := range spools {
				if isFile(s) {
					u.Spools = append(u.Spools, s)
				}
			}
		}
		if len(u.Spools) == 0 {
			continue
		}
		m := &u.Manifest
		m.State, m.RunDir, m.PID = RescueComplete, d, owner
		m.Reason = "its rocprof-go was killed before its app ended: no exit status known"
		if u.Kept {
			m.Reason = "kept by its rocprof-go when its outputs could not be written"
		}
		// The first readable spool's header names the run; every spool's
		// process is one that may still run.
		var pids []int
		for _, s := range u.Spools {
			r, err := tracing.Open(s)
			if err != nil {
				continue
			}
			p := r.Process()
			r.Close()
			if len(pids) == 0 {
				l := placeholder.LauncherOf(p.Getenv)
				m.Host, m.AppPID = p.Hostname, int(p.PID)
				m.Rank, m.Size, m.RankVar, m.Launcher, m.Job = l.Rank, l.Size, l.RankVar, l.Name, l.Job
			}
			pids = append(pids, int(p.PID))
		}
		if m.Host == host && owner > 0 && !u.Kept && unix.Kill(owner, 0) != unix.ESRCH {
			continue // its rocprof-go still runs: not an orphan (yet)
		}
		if m.PID == 0 {
			m.PID = m.AppPID
		}
		for _, pid := range pids {
			if m.Host == host && pid > 0 && !exited(pid) {
				u.AppRunning = true
			}
		}
		out = append(out, u)
	}
	return out, nil
}

func isDir(p string) bool {
	st, err := os.Lstat(p)
	return err == nil && st.IsDir()
}

// readNoFollow reads at most limit bytes of a regular file, never through
// a symbolic link.
func readNoFollow(p string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", p)
	}
	return io.ReadAll(io.LimitReader(f, limit))
}

func isFile(p string) bool {
	st, err := os.Lstat(p)
	return err == nil && st.Mode().IsRegular()
}
