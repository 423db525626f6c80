package launch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/securedir"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// Spools in memory are drained to the output file system while the app
// runs (issue 43). A spool root in RAM (/dev/shm, any tmpfs) would
// otherwise grow with the trace until the app exits: a 1 µs host-trap PC
// sampling run grew one spool to 24.8 GB and stalled the node. So, when the
// spool root is a tmpfs and the output directory is on another file
// system, the run gets a second private directory beside the outputs,
//
//	<output dir>/.rocprof-go-unconverted-<uid>/rocprof-go-run-XXXX/pass_N/
//
// (made through internal/securedir, like the rescues and the spools of a
// launcher's ranks), and a goroutine copies every chunk the recorder has
// sealed (left for good, every record published) there and punches it out
// of /dev/shm (tracing.Drainer). When the app's last process is gone, the
// rest (the chunks still open, the header) is moved and the spools in
// /dev/shm are removed: the outputs are read from the copies, a spool
// kept after failed outputs is kept there, on disk, and `rocprof-go
// convert -i <output dir>` finds a run whose rocprof-go was killed.
//
// Bounds: the spools of a run hold at most their share of /dev/shm,
// min(25 % of its size, 12.5 % of RAM, 12.5 % of the memory cgroup's
// limit), ShmShareEnv to set it. Each spool gets its part of it as a chunk
// limit in its header, raised as its chunks are drained: a recorder takes
// no chunk past it and prepares none (the bound holds however late the
// drain runs, less the 4 MiB segment of the last chunk); the records a
// recorder could not write meanwhile are counted as dropped, and the run
// fails saying so. The output file system keeps a
// reserve (OutputReserveEnv) for the outputs: when its free space falls
// below the reserve plus what the spools still hold in memory, recording
// stops for good, with the same accounting.

// DrainEnv turns the drain off ("0"): the spools stay where they are
// recorded until the app exits, as before issue 43.
const DrainEnv = "ROCPROF_GO_DRAIN"

// ShmShareEnv is the most the run's spools may hold in a memory file
// system (/dev/shm), in MiB (default: min(25 % of its size, 12.5 % of RAM,
// 12.5 % of the memory cgroup's limit)).
const ShmShareEnv = "ROCPROF_GO_SHM_SHARE_MIB"

// OutputReserveEnv is the free space in MiB the drain leaves on the output
// file system for the outputs (default: 256 MiB, or 5 % of its size when
// that is less).
const OutputReserveEnv = "ROCPROF_GO_OUTPUT_RESERVE_MIB"

const (
	drainInterval       = 5 * time.Millisecond
	drainBusyInterval   = time.Millisecond
	drainStatfsInterval = 5 * time.Millisecond
	reserveDefault      = 256 << 20
	// minChunksPerSpool is the least a spool may hold in memory (1 MiB),
	// however small the share and many the spools.
	minChunksPerSpool = 16
)

// DrainReport is what the drain of a pass did (run.json's passes[].drain).
type DrainReport struct {
	// Dir is where the spools were drained to (the pass's directory of
	// the run's private directory on the output file system).
	Dir string `json:"dir"`
	// BytesDrained were copied and freed while the app ran; BytesAtExit
	// moved after it exited (the chunks still open, the headers), taking
	// FinishMs.
	BytesDrained int64   `json:"bytes_drained"`
	BytesAtExit  int64   `json:"bytes_at_exit"`
	FinishMs     float64 `json:"finish_ms"`
	// PeakShmBytes is the most the pass's spools held in memory at once
	// (their allocated blocks), ShmShareBytes the bound.
	PeakShmBytes  int64 `json:"peak_shm_bytes"`
	ShmShareBytes int64 `json:"shm_share_bytes"`
	// ShmLimited is set when a recorder reached the bound and dropped
	// records (counted in lost_records) until the drain had caught up.
	ShmLimited bool `json:"shm_limited,omitempty"`
	// OutputFull is set when recording stopped for good because the
	// output file system would have been filled.
	OutputFull bool `json:"output_full,omitempty"`
	// Spools are the spools drained.
	Spools int `json:"spools"`
}

// drainTarget is where a run's spools go while it runs, when they are
// drained: its run directory on the output file system.
type drainTarget struct {
	top    *securedir.Dir // OUTDIR/.rocprof-go-unconverted-<uid>
	run    *securedir.Dir // top/rocprof-go-run-XXXX
	share  int64
	res    int64
	stderr io.Writer
	said   map[string]bool
	mu     sync.Mutex
}

// say prints a message once per run.
func (t *drainTarget) say(key, format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.said[key] || t.stderr == nil {
		return
	}
	t.said[key] = true
	fmt.Fprintf(t.stderr, format, args...)
}

// isMemoryFS reports whether a directory is on a tmpfs or ramfs.
func isMemoryFS(dir string) bool {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return false
	}
	return st.Type == unix.TMPFS_MAGIC || st.Type == unix.RAMFS_MAGIC
}

func deviceOf(dir string) (uint64, bool) {
	var st unix.Stat_t
	if unix.Stat(dir, &st) != nil {
		return 0, false
	}
	return st.Dev, true
}

// envMiB reads a MiB count from the environment (-1 when unset or bad).
func envMiB(environ []string, key string) (int64, error) {
	v := envLookup(environ, key)
	if v == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return -1, fmt.Errorf("%s=%s is not a number of MiB: set it to a whole number, e.g. %s=512", key, v, key)
	}
	return n << 20, nil
}

// ShmShare is the default bound of a run's spools in a memory file system
// of size fsSize: min(25 % of it, 12.5 % of RAM, 12.5 % of the memory
// cgroup's limit when there is one).
func ShmShare(fsSize int64) int64 {
	share := fsSize / 4
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		if ram := int64(si.Totalram) * int64(si.Unit) / 8; ram > 0 && ram < share {
			share = ram
		}
	}
	if lim := cgroupMemoryMax(); lim > 0 && lim/8 < share {
		share = lim / 8
	}
	return share
}

// cgroupMemoryMax is the memory limit of this process's cgroup or of the
// nearest ancestor that has one (cgroup v2's memory.max, v1's
// memory.limit_in_bytes), 0 when none.
func cgroupMemoryMax() int64 {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	var lim int64
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.SplitN(l, ":", 3)
		if len(f) != 3 {
			continue
		}
		root, file := "", ""
		switch {
		case f[0] == "0" && f[1] == "":
			root, file = "/sys/fs/cgroup", "memory.max"
		case f[1] == "memory":
			root, file = "/sys/fs/cgroup/memory", "memory.limit_in_bytes"
		default:
			continue
		}
		for d := filepath.Join(root, f[2]); strings.HasPrefix(d, root); d = filepath.Dir(d) {
			v, err := os.ReadFile(filepath.Join(d, file))
			if err != nil {
				continue
			}
			n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
			if err == nil && n > 0 && n < 1<<60 && (lim == 0 || n < lim) {
				lim = n
			}
		}
	}
	return lim
}

// drainTarget makes the run's directory on the output file system when the
// spools must be drained there: the spool root is in memory, the output
// directory is elsewhere, and DrainEnv does not say no. nil otherwise.
func (r *Runner) drainTarget(plan *options.Plan, spoolRoot *securedir.Dir) (*drainTarget, error) {
	if envLookup(r.Environ, DrainEnv) == "0" || len(plan.Passes) == 0 || !isMemoryFS(spoolRoot.Path()) {
		return nil, nil
	}
	for _, cfg := range plan.Passes {
		if cfg.Attaching() {
			return nil, nil // an attach's spools are read where they are (internal/attach)
		}
	}
	share, err := envMiB(r.Environ, ShmShareEnv)
	if err != nil {
		return nil, err
	}
	reserve, err := envMiB(r.Environ, OutputReserveEnv)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(staticPrefixOrDot(PassDir(plan.Passes[0])))
	if err != nil {
		return nil, nil
	}
	od, err := securedir.MkdirOutput(dir, 0o755)
	if err != nil {
		return nil, nil // Check said why the output directory cannot be written
	}
	defer od.Close()
	if a, ok := deviceOf(od.Path()); !ok {
		return nil, nil
	} else if b, ok := deviceOf(spoolRoot.Path()); !ok || a == b {
		return nil, nil // the outputs are in memory too: nothing gained
	}
	top, _, err := openUnconvertedTop(od, r.Stderr)
	if err != nil {
		r.Log.Debug().Err(err).Msg("no directory for the drained spools: they stay in memory")
		return nil, nil
	}
	run, err := top.MkdirTemp(runDirPrefix)
	if err != nil {
		top.Close()
		return nil, nil
	}
	_ = run.WriteFile(runOwnerFile, []byte(thisRunOwner()), 0o600)
	if share < 0 {
		var st unix.Statfs_t
		if unix.Statfs(spoolRoot.Path(), &st) == nil {
			share = ShmShare(int64(st.Blocks) * st.Bsize)
		}
	}
	if reserve < 0 {
		reserve = reserveDefault
		var st unix.Statfs_t
		if unix.Statfs(run.Path(), &st) == nil {
			if five := int64(st.Blocks) * st.Bsize / 20; five < reserve {
				reserve = five
			}
		}
	}
	// An output file system without room for its reserve and the share
	// at the start is no place to drain to: the spools stay in memory,
	// as before, and the outputs say what did not fit.
	var st unix.Statfs_t
	if unix.Statfs(run.Path(), &st) != nil || int64(st.Bavail)*st.Bsize < reserve+share {
		r.Log.Debug().Str("dir", run.Path()).Msg("the output file system has no room to drain the spools to: they stay in memory")
		os.RemoveAll(run.Path())
		_ = os.Remove(top.Path())
		run.Close()
		top.Close()
		return nil, nil
	}
	return &drainTarget{top: top, run: run, share: share, res: reserve, stderr: r.Stderr, said: map[string]bool{}}, nil
}

func (t *drainTarget) close() {
	if t == nil {
		return
	}
	t.run.Close()
	t.top.Close()
}

// passDrain drains one pass's spools while its app runs.
type passDrain struct {
	t       *drainTarget
	src     string         // the pass's spool directory (memory)
	dst     *securedir.Dir // the pass's directory on the output file system
	spools  map[string]*tracing.Drainer
	rep     DrainReport
	stop    chan struct{}
	done    chan struct{}
	stopped uint32 // stop bits set on every spool
	lastFS  time.Time
}

func (t *drainTarget) startPass(passName, src string) (*passDrain, error) {
	dst, err := t.run.Mkdir(passName)
	if err != nil {
		return nil, err
	}
	p := &passDrain{t: t, src: src, dst: dst, spools: map[string]*tracing.Drainer{},
		stop: make(chan struct{}), done: make(chan struct{})}
	p.rep.Dir, p.rep.ShmShareBytes = dst.Path(), t.share
	go p.loop()
	return p, nil
}

// loop steps every drainInterval, and every millisecond while there is
// something to drain or the recording is paused.
func (p *passDrain) loop() {
	defer close(p.done)
	t := time.NewTimer(drainInterval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			wait := drainInterval
			if p.step() > 0 {
				wait = drainBusyInterval
			}
			t.Reset(wait)
		}
	}
}

// step opens the spools that appeared, drains what was sealed, and keeps
// the bounds; it returns the bytes it drained.
func (p *passDrain) step() int64 {
	paths, _ := tracing.List(p.src)
	for _, path := range paths {
		if p.spools[path] != nil {
			continue
		}
		name := filepath.Base(path)
		d, err := tracing.OpenDrainerTo(path, filepath.Join(p.dst.Path(), name), func() (*os.File, error) {
			return p.dst.Create(name, 0o600)
		})
		if err != nil {
			continue // not created completely yet: next time
		}
		if p.stopped != 0 {
			d.SetStop(p.stopped)
		}
		p.spools[path] = d
	}
	var used, moved int64
	for _, d := range p.spools {
		if p.stopped&tracing.StopOutputFull == 0 {
			n, err := d.Step()
			if err != nil {
				p.outputFull(err.Error())
			}
			moved += n
		}
		used += d.Allocated()
	}
	p.rep.BytesDrained += moved
	p.rep.PeakShmBytes = max(p.rep.PeakShmBytes, used)
	if share := p.t.share; share > 0 && len(p.spools) > 0 {
		// Each spool may hold its part of the share in chunks, less
		// what its writer allocates beyond them (the rest of the 4 MiB
		// segment of its last chunk, the header chunk, and the chunks
		// threads racing past the limit take: 2 MiB for those); the
		// recorder takes no chunk past the limit and prepares none
		// (recorder.c).
		k := int64(len(p.spools))
		per := (share/k - 6<<20 - 2*tracing.ChunkSize) / tracing.ChunkSize
		per = max(per, minChunksPerSpool)
		paused := false
		for _, d := range p.spools {
			d.Limit(uint64(per))
			paused = paused || d.StopSeen()&tracing.StopShmShare != 0
		}
		if paused && !p.rep.ShmLimited {
			p.rep.ShmLimited = true
			p.t.say("share", "rocprof-go: warning: the run's spools reached their share of %s (%d MiB, %s) faster than they were drained to %s: the records the app made meanwhile are dropped and counted, and the run fails\n",
				filepath.Dir(filepath.Dir(p.src)), share>>20, ShmShareEnv, p.t.run.Path())
		}
	}
	if time.Since(p.lastFS) >= drainStatfsInterval && p.stopped&tracing.StopOutputFull == 0 {
		p.lastFS = time.Now()
		var st unix.Statfs_t
		if unix.Statfs(p.dst.Path(), &st) == nil {
			free := int64(st.Bavail) * st.Bsize
			if free < p.t.res+used {
				p.outputFull(fmt.Sprintf("%s has %d MiB free, and the outputs keep %d MiB (%s) besides the %d MiB the spools still hold in memory",
					p.dst.Path(), free>>20, p.t.res>>20, OutputReserveEnv, used>>20))
			}
		}
	}
	return moved
}

func (p *passDrain) setStop(bits uint32) {
	p.stopped |= bits
	for _, d := range p.spools {
		d.SetStop(bits)
	}
}

// outputFull stops the recording for good.
func (p *passDrain) outputFull(why string) {
	p.setStop(tracing.StopOutputFull)
	p.rep.OutputFull = true
	p.t.say("full", "rocprof-go: error: the output file system is full: %s; recording stopped: what was recorded is kept and converted, the records the app makes from now on are dropped and counted, and the run fails (free space there, or write the outputs elsewhere with -d)\n",
		Printable(why))
}

// finish ends the drain once the app's processes are gone: the last sealed
// chunks, then the rest of every spool moved, and the spools in memory
// removed. An error leaves both parts of a spool, named.
func (p *passDrain) finish() (*DrainReport, error) {
	close(p.stop)
	<-p.done
	t0 := time.Now()
	p.step()
	var errs []error
	for path, d := range p.spools {
		if err := d.Finish(); err != nil {
			errs = append(errs, err)
		}
		p.rep.BytesAtExit += d.TailBytes
		delete(p.spools, path)
		p.rep.Spools++
	}
	// Spools that were never opened (created in the last moment, or
	// never completed): moved whole.
	paths, _ := tracing.List(p.src)
	for _, path := range paths {
		name := filepath.Base(path)
		d, err := tracing.OpenDrainerTo(path, filepath.Join(p.dst.Path(), name), func() (*os.File, error) {
			return p.dst.Create(name, 0o600)
		})
		if errors.Is(err, tracing.ErrNotReady) {
			continue // no spool: a process killed while creating it
		}
		if err == nil {
			err = d.Finish()
			p.rep.BytesAtExit += d.TailBytes
			p.rep.Spools++
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := p.moveSideDirs(); err != nil {
		errs = append(errs, err)
	}
	p.rep.FinishMs = float64(time.Since(t0).Microseconds()) / 1000
	p.dst.Close()
	return &p.rep, errors.Join(errs...)
}

// moveSideDirs copies what the app's processes left beside the spools to
// the pass's directory on the output file system, where the outputs are
// read from once the spools are drained: the shim's copies of memory://
// code objects for PC sampling (<spool><model.PCSCodeObjectSuffix><id>)
// and its thread traces and code objects in att/ (internal/hsa/request).
// Regular files the drain did not write, and directories' regular files
// one level down, opened without following links.
func (p *passDrain) moveSideDirs() error {
	src, err := securedir.Open(p.src)
	if err != nil {
		return err
	}
	defer src.Close()
	names, err := src.Names()
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		t, err := src.Type(name)
		switch {
		case err != nil:
		case t.IsDir():
			err = copyDir(src, name, p.dst)
		case t.IsRegular():
			if _, derr := p.dst.Type(name); derr == nil {
				continue // a spool, drained
			}
			err = copyEntry(src, name, p.dst)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// copyDir copies from's directory name, its regular files, into to.
func copyDir(from *securedir.Dir, name string, to *securedir.Dir) error {
	in, err := from.OpenPrivate(name)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := to.Mkdir(name)
	if err != nil {
		return err
	}
	defer out.Close()
	files, err := in.Names()
	if err != nil {
		return err
	}
	for _, f := range files {
		if t, err := in.Type(f); err != nil || !t.IsRegular() {
			continue
		}
		if err := copyEntry(in, f, out); err != nil {
			return err
		}
	}
	return nil
}

// copyEntry copies from's regular file name into to.
func copyEntry(from *securedir.Dir, name string, to *securedir.Dir) error {
	r, err := from.OpenRegular(name)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := to.Create(name, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(w, r)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}
