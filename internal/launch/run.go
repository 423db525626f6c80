package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/rocprof-go/rocprof-go/internal/domain"
	"github.com/rocprof-go/rocprof-go/internal/options"

	"github.com/rocprof-go/rocprof-go/internal/securedir"
)

// Runner runs the application, one pass at a time (internal/pipeline owns
// the pass loop and the outputs): Check, then Begin a Run, then RunPass for
// each pass.
type Runner struct {
	Libs    *Libraries
	Log     zerolog.Logger
	Stderr  io.Writer // rocprof-go's own progress lines
	AppIO   Stdio     // the app's standard streams
	Environ []string
	// SpoolRoot is where the private run directory is created; empty means
	// /dev/shm when usable (tmpfs makes spool creation cheap), else TMPDIR.
	SpoolRoot string
	// Guard handles signals while the outputs are written (nil: their
	// default action kills rocprof-go then).
	Guard *OutputGuard
}

// OutputDirError reports an output directory that cannot be written.
type OutputDirError struct {
	Dir string
	Err error
}

func (e *OutputDirError) Error() string {
	var oe *securedir.OutputError
	if errors.As(e.Err, &oe) {
		return fmt.Sprintf("output directory %s will not be used: %v", e.Dir, oe)
	}
	return fmt.Sprintf("output directory %s is not writable (%v): choose another with -d/--output-directory", e.Dir, e.Err)
}

func (e *OutputDirError) Unwrap() error { return e.Err }

// PassDir returns a pass's output directory template.
func PassDir(cfg *options.Config) string {
	dir := cfg.OutputDirectory
	if dir == "" {
		dir, _ = os.Getwd()
	}
	if cfg.Pass.SubDir != "" {
		dir = filepath.Join(dir, cfg.Pass.SubDir)
	}
	return dir
}

// CheckOutputDir creates the fixed part of an output directory template (the
// path up to the first placeholder) and checks that files can be created in it.
func CheckOutputDir(template string) error {
	dir := staticPrefix(template)
	if dir == "" {
		return nil
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return &OutputDirError{Dir: dir, Err: errors.New("it exists and is not a directory")}
	}
	// Walked and created on descriptors by the output rule
	// (securedir.MkdirOutput): a directory every user can write without
	// the sticky bit is refused with the fix; the check file is created
	// with O_EXCL|O_NOFOLLOW through the verified descriptor.
	d, err := securedir.MkdirOutput(dir, 0o755)
	if err != nil {
		return &OutputDirError{Dir: dir, Err: unwrapPathError(err)}
	}
	defer d.Close()
	if err := d.CheckWritable(); err != nil {
		return &OutputDirError{Dir: dir, Err: unwrapPathError(err)}
	}
	return nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// staticPrefix is the directory part of a template before any placeholder.
func staticPrefix(template string) string {
	i := strings.IndexAny(template, "%{$")
	if i < 0 {
		return template
	}
	return filepath.Dir(template[:i] + "x")
}

// needsShim reports whether a pass loads the HSA shim: for the domains it
// collects (HSA interception), and for the preload library's domains whose
// row says Agents (HIP and marker tracing), to describe the agents every
// format lists (agent_info.csv, as rocprofv3 writes with any CSV output);
// the shim then intercepts nothing. The rule is the domain table's.
func needsShim(c *options.Config) bool {
	for _, d := range domain.Switches {
		if (d.CollectedBy == domain.Shim || d.Agents) && c.Collects(d) {
			return true
		}
	}
	return false
}

// Prepare computes one pass's environment without running anything (used by
// --echo and by Run).
func (r *Runner) Prepare(cfg *options.Config, spoolDir string) (*AppEnv, error) {
	preload, err := r.Libs.Path(PreloadLib)
	if err != nil {
		return nil, err
	}
	spec := envSpec{base: r.Environ, cfg: cfg, outputDir: PassDir(cfg), spoolDir: spoolDir, preload: preload}
	if needsShim(cfg) {
		if spec.shim, err = r.Libs.Path(ShimLib); err != nil {
			return nil, err
		}
	}
	if cfg.VirtualGPU != "" {
		if spec.vgpu, err = r.Libs.Path(VGPULib); err != nil {
			return nil, err
		}
	}
	return composeEnv(spec), nil
}

// SpoolRootEnv names the directory the run's spools go to, instead of
// /dev/shm (or TMPDIR): a file system with room for what the app records.
const SpoolRootEnv = "ROCPROF_GO_SPOOL_ROOT"

// spoolMinFree is the least free space a spool root must have when the run
// starts: one spool segment for each of a few processes. Less, and the
// first processes could not even create their spools.
const spoolMinFree = 16 << 20

// spoolPreferFree is the free space below which /dev/shm gives way to the
// temporary directory when that has more (Docker's /dev/shm is 64 MiB):
// spools there live in the page cache all the same.
const spoolPreferFree = 1 << 30

// SpoolSpaceError is a spool root without room for the run.
type SpoolSpaceError struct {
	Dir  string
	Free uint64
}

func (e *SpoolSpaceError) Error() string {
	return fmt.Sprintf("the spool file system %s has only %d KiB free: free space there, or put the spools elsewhere with %s=DIR (a directory on a file system with room)",
		e.Dir, e.Free>>10, SpoolRootEnv)
}

func freeBytes(dir string) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return st.Bavail * uint64(st.Bsize), true
}

func writable(dir string) bool {
	f, err := os.CreateTemp(dir, ".rocprof-go-check-")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}

// SpoolRootError is a spool root another user could change: the run's
// directory there could be renamed aside and replaced by theirs.
type SpoolRootError struct {
	Dir string
	Err error
}

func (e *SpoolRootError) Error() string {
	return fmt.Sprintf("the spool root %s will not be used: %v: another user could replace the run's directory in it; set %s=DIR to a directory only you (or root) can change (or one with the sticky bit, like /tmp), or take others' write permission from the directory named (chmod go-w, or chmod +t for a shared one)",
		e.Dir, e.Err, SpoolRootEnv)
}

func (e *SpoolRootError) Unwrap() error { return e.Err }

// spoolRoot picks where the run's private directory (its spools) goes:
// the Runner's or the user's choice, else /dev/shm unless it is small and
// the temporary directory has more room; then checks there is room at all.
// Only a directory on a path no other user can change is used
// (internal/securedir): the user's choice is refused otherwise, and of the
// defaults an untrusted one is passed over.
func (r *Runner) spoolRoot() (*securedir.Dir, error) {
	root := r.SpoolRoot
	if root == "" {
		root = envLookup(r.Environ, SpoolRootEnv)
	}
	if root != "" {
		d, err := securedir.Open(root)
		if err != nil {
			return nil, &SpoolRootError{Dir: root, Err: err}
		}
		return spoolRoom(d)
	}
	tmpPath := os.TempDir()
	tmp, tmpErr := securedir.Open(tmpPath)
	var shm *securedir.Dir
	if writable("/dev/shm") {
		shm, _ = securedir.Open("/dev/shm")
	}
	switch {
	case tmp == nil && shm == nil:
		return nil, &SpoolRootError{Dir: tmpPath, Err: tmpErr}
	case shm == nil:
		return spoolRoom(tmp)
	case tmp == nil:
		return spoolRoom(shm)
	}
	shmFree, _ := freeBytes(shm.Path())
	tmpFree, ok := freeBytes(tmp.Path())
	if shmFree >= spoolPreferFree || !ok || shmFree >= tmpFree {
		tmp.Close()
		return spoolRoom(shm)
	}
	shm.Close()
	return spoolRoom(tmp)
}

// spoolRoom checks that a spool root has room for the run.
func spoolRoom(d *securedir.Dir) (*securedir.Dir, error) {
	if free, ok := freeBytes(d.Path()); ok && free < spoolMinFree {
		d.Close()
		return nil, &SpoolSpaceError{Dir: d.Path(), Free: free}
	}
	return d, nil
}

// A run's private directory: runDirPrefix + random, holding pass_N spool
// directories, the owner's pid, and a kept marker when the run kept it.
const (
	runDirPrefix = "rocprof-go-run-"
	runOwnerFile = "owner"
	runKeptFile  = "kept"
	// runListedFile marks a run directory a later run has named: it is
	// not named again by every run after (issue 43).
	runListedFile = "listed"
)

// tidyEarlierRuns looks at the run directories under the spool root that
// earlier runs of this user kept (their outputs failed) or left behind
// (their rocprof-go was killed). One that holds spools is noted on w: they
// are recorded data nobody converted, and only the user knows whether they
// are still wanted. One whose rocprof-go is provably gone and that holds
// nothing but what a run makes before its app records (the owner file,
// pass directories with their notes file) is removed, with a line at
// --log-level info: nothing of ours outlives a run. Everything is done by
// descriptor (a '[' in root is no pattern, no path is resolved again), no
// link is followed, and only this user's own directories are looked at.
func tidyEarlierRuns(w io.Writer, log zerolog.Logger, spoolRoot *securedir.Dir) {
	if w == nil {
		return
	}
	dir, err := spoolRoot.Open(".")
	if err != nil {
		return
	}
	defer dir.Close()
	root := spoolRoot.Path()
	for _, name := range namesOf(dir) {
		if !strings.HasPrefix(name, runDirPrefix) {
			continue
		}
		if st, err := lstatAt(dir, name); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() {
			continue
		}
		d := filepath.Join(root, name)
		rd, err := openDirAt(dir, root, name)
		if err != nil {
			continue
		}
		why := ""
		if st, err := lstatAt(rd, runKeptFile); err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			why = "kept when its outputs could not be written"
		} else if b, err := readRegularAt(rd, d, runOwnerFile, 64); err == nil {
			if parseRunOwner(string(b)).runs() {
				rd.Close()
				continue // still running (or unknown): not ours to judge
			}
			why = "left by a rocprof-go that was killed"
		} else {
			rd.Close()
			continue
		}
		spools := 0
		eachPassEntry(rd, d, func(pd *os.File, _, s string) {
			if st, err := lstatAt(pd, s); err == nil && strings.HasSuffix(s, ".spool") && st.Mode&unix.S_IFMT == unix.S_IFREG {
				spools++
			}
		})
		if spools == 0 {
			if why != "kept when its outputs could not be written" && removeDeadRun(dir, rd, name) {
				log.Info().Msgf("removed %s, left empty by a rocprof-go that was killed", Printable(d))
			}
			rd.Close()
			continue
		}
		if st, err := lstatAt(rd, runListedFile); err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			rd.Close()
			continue // named once already, by an earlier run
		}
		if fd, err := unix.Openat(int(rd.Fd()), runListedFile, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600); err == nil {
			unix.Close(fd)
		}
		rd.Close()
		fmt.Fprintf(w, "rocprof-go: note: %s holds %d spools of an earlier run (%s): `rocprof-go convert -i %s -f csv` writes them out; delete the directory when done (this is said once)\n",
			Printable(d), spools, why, Printable(d))
	}
}

// removeDeadRun removes root's run directory name (open as rd), whose
// rocprof-go is gone, when it holds nothing but its owner file and pass
// directories that hold nothing but their notes file, and no process of
// its app still holds a notes file (openNotes locks it shared, and the
// app's processes inherit the lock with the descriptor). Only those
// entries are unlinked, by name in their open directory, and the
// directories last with rmdir: what appears meanwhile (a spool of a
// process that outlived its rocprof-go) makes the removal stop there, and
// the directory is noted by the next run.
func removeDeadRun(root, rd *os.File, name string) bool {
	var passes, attach []string
	for _, e := range namesOf(rd) {
		st, err := lstatAt(rd, e)
		switch {
		case err != nil || int(st.Uid) != os.Geteuid():
			return false
		case (e == runOwnerFile || e == runListedFile) && st.Mode&unix.S_IFMT == unix.S_IFREG:
			if e == runListedFile {
				attach = append(attach, e) // removed with the attach's files
			}
		case slices.Contains(AttachFiles, e): // an attach's configuration and socket
			attach = append(attach, e)
		case strings.HasPrefix(e, "pass_") && st.Mode&unix.S_IFMT == unix.S_IFDIR:
			passes = append(passes, e)
		default:
			return false
		}
	}
	// Every pass directory is checked before anything is removed.
	var pds []*os.File
	defer func() {
		for _, pd := range pds {
			pd.Close()
		}
	}()
	for _, pass := range passes {
		pd, err := openDirAt(rd, rd.Name(), pass)
		if err != nil {
			return false
		}
		pds = append(pds, pd)
		for _, e := range namesOf(pd) {
			if st, err := lstatAt(pd, e); err != nil || e != notesFile || st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() || !notesReleased(pd) {
				return false
			}
		}
	}
	for i, pass := range passes {
		if err := unix.Unlinkat(int(pds[i].Fd()), notesFile, 0); err != nil && err != unix.ENOENT {
			return false
		}
		if unix.Unlinkat(int(rd.Fd()), pass, unix.AT_REMOVEDIR) != nil {
			return false
		}
	}
	for _, f := range attach {
		if unix.Unlinkat(int(rd.Fd()), f, 0) != nil {
			return false
		}
	}
	return unix.Unlinkat(int(rd.Fd()), runOwnerFile, 0) == nil &&
		unix.Unlinkat(int(root.Fd()), name, unix.AT_REMOVEDIR) == nil
}

// envLookup is the value of key in an environment list.
func envLookup(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

// Check does what must be done before anything runs: the app is looked up
// (an app that cannot be run, exit 127, leaves nothing behind: no output
// directory is created), every pass's output directory is created and
// checked, the virtual GPU's arguments are checked; then the warnings about
// the app are said (a bad option is then the one line on stderr). The app
// still runs after a warning.
func (r *Runner) Check(plan *options.Plan) error {
	path, err := lookPath(plan.App[0], r.AppIO.Dir, r.Environ)
	if err == nil {
		err = startable(path)
	}
	if err != nil {
		return &AppNotFoundError{App: plan.App[0], Err: err}
	}
	for _, cfg := range plan.Passes {
		if err := CheckOutputDir(PassDir(cfg)); err != nil {
			return err
		}
		if err := CheckVirtualGPU(plan.App, cfg.VirtualGPU, r.Environ); err != nil {
			return err
		}
	}
	if r.Stderr != nil {
		first := plan.Passes[0]
		for _, w := range []string{
			NoGPUWarning(plan.App, first, r.AppIO.Dir, r.Environ),
			CodeObjectWarning(plan.App, first.VirtualGPU, r.AppIO.Dir, r.Environ),
		} {
			if w != "" {
				fmt.Fprintln(r.Stderr, "rocprof-go: warning: "+w)
			}
		}
	}
	return nil
}

// Run is one run's private directory, where each pass's spools are, from
// Begin to Close: removed then unless kept (its outputs failed).
type Run struct {
	r         *Runner
	app       []string
	passes    int
	spoolRoot *securedir.Dir
	onOutput  bool // spoolRoot is OUTDIR/.rocprof-go-unconverted (rescue.go)
	dir       *securedir.Dir
	// drain is the run's directory on the output file system when the
	// spools are drained there while the app runs (drain.go); then the
	// passes' spools end up there, and dir holds none once a pass ended.
	drain      *drainTarget
	drainStuck bool // a spool could not be moved whole: dir keeps its part
	kept       bool
	progress   *passProgress
	// Launch is when the run began: %launch_time%'s value.
	Launch time.Time
}

// Begin creates the run's private directory for plan (after Check).
func (r *Runner) Begin(plan *options.Plan) (_ *Run, err error) {
	// Under a launcher, the spools go to the output directory's file
	// system when it is a local one (rescue.go): a teardown's SIGKILL then
	// finds them there, and making them durable is a hard link.
	var spoolRoot, runDir *securedir.Dir
	var onOutput bool
	for attempt := 1; ; attempt++ {
		spoolRoot, onOutput = r.outputSpoolRoot(plan)
		if spoolRoot == nil {
			if spoolRoot, err = r.spoolRoot(); err != nil {
				return nil, err
			}
		}
		if !onOutput && attempt == 1 {
			tidyEarlierRuns(r.Stderr, r.Log, spoolRoot)
		}
		// Created and used through verified descriptors (internal/securedir);
		// its path, which the app's processes are given, is on a path only root
		// and this user control, so it names this directory until it is removed.
		runDir, err = spoolRoot.MkdirTemp(runDirPrefix)
		if err == nil {
			break
		}
		spoolRoot.Close()
		// In the output directory, another rank of this user may have
		// removed the (then empty) hidden directory between its opening
		// and this creation: made again.
		if !onOutput || !errors.Is(err, unix.ENOENT) || attempt == 5 {
			return nil, fmt.Errorf("cannot create the run's private directory: %w", err)
		}
	}
	var drain *drainTarget
	if !onOutput {
		if drain, err = r.drainTarget(plan, spoolRoot); err != nil {
			os.RemoveAll(runDir.Path())
			runDir.Close()
			spoolRoot.Close()
			return nil, err
		}
	}
	if drain != nil {
		// Runs kept on the output file system are named once, as those
		// in the spool root.
		tidyEarlierRuns(r.Stderr, r.Log, drain.top)
		r.Guard.setRunDir(drain.run) // where the spools are once the app exited
	} else {
		r.Guard.setRunDir(runDir)
	}
	noteSpoolReservation(r.Stderr, runDir)
	// Who owns it (pid and start time): a later run tells a directory
	// whose rocprof-go was killed from one still in use.
	_ = runDir.WriteFile(runOwnerFile, []byte(thisRunOwner()), 0o600)
	return &Run{r: r, app: plan.App, passes: len(plan.Passes), spoolRoot: spoolRoot, onOutput: onOutput, dir: runDir, drain: drain,
		progress: newPassProgress(r.Stderr, len(plan.Passes)), Launch: time.Now()}, nil
}

// Close removes the run's directory unless it was kept. With the spools
// drained to the output file system, the directory in memory is removed
// in any case (its spools were moved) unless a spool could not be moved
// whole; the one on the output file system is kept when the run is.
func (run *Run) Close() {
	if !run.kept || (run.drain != nil && !run.drainStuck) {
		os.RemoveAll(run.dir.Path())
		if run.onOutput {
			_ = os.Remove(run.spoolRoot.Path()) // when no other run's is in it
		}
	}
	if d := run.drain; d != nil {
		if !run.kept {
			os.RemoveAll(d.run.Path())
			_ = os.Remove(d.top.Path()) // when nothing else is in it
		}
		d.close()
	}
	run.dir.Close()
	run.spoolRoot.Close()
}

// keep keeps the run's directory, saying why in it.
func (run *Run) keep(why error) {
	run.kept = true
	_ = run.dir.WriteFile(runKeptFile, []byte(why.Error()+"\n"), 0o600)
	if run.drain != nil {
		_ = run.drain.run.WriteFile(runKeptFile, []byte(why.Error()+"\n"), 0o600)
	}
}

// spoolsDir is the run directory where the passes' spools are once their
// app exited.
func (run *Run) spoolsDir() *securedir.Dir {
	if run.drain != nil {
		return run.drain.run
	}
	return run.dir
}

// Pass is one run of the app: what it left behind and how it ended.
type Pass struct {
	N        int // 1-based
	Config   *options.Config
	Dir      string  // the pass's output directory template (PassDir)
	SpoolDir string  // the pass's spools, until the Run is closed
	Env      *AppEnv // the environment the app was started with
	Process  *ProcessResult
	// Unprofiled are the app's processes that could not record, from the
	// pass's notes (internal/hsa/preload/notes.c): the run fails.
	Unprofiled []UnprofiledProcess
	// StartFailure is set when the app's dynamic loader could not start
	// it (startfailure.go): nothing was recorded.
	StartFailure *StartFailure
	// AppExited is when the app's last process was gone.
	AppExited time.Time
	// Drain is what the drain of the spools to the output file system did
	// (drain.go); nil when they were not drained.
	Drain  *DrainReport
	run    *Run
	rescue *rescuer
}

// beginPass starts pass n: its progress line and its spool directory in the
// run's directory, with the pass's counter files; it returns the
// directory's path.
func (run *Run) beginPass(n int, cfg *options.Config) (string, error) {
	run.progress.begin(n, passLabel(cfg))
	pass, err := run.dir.Mkdir(fmt.Sprintf("pass_%d", n))
	if err != nil {
		return "", err
	}
	err = writeCounterFiles(pass, cfg)
	pass.Close()
	if err != nil {
		return "", err
	}
	return pass.Path(), nil
}

// RunPass runs the app once for pass n (1-based) of the plan, with cfg,
// and returns when every process it started has exited.
func (run *Run) RunPass(ctx context.Context, n int, cfg *options.Config) (*Pass, error) {
	r := run.r
	spoolDir, err := run.beginPass(n, cfg)
	if err != nil {
		return nil, err
	}
	env, err := r.Prepare(cfg, spoolDir)
	if err != nil {
		return nil, err
	}
	// Right before the app gets the path: still the run's own directory.
	if err := run.dir.Verify(); err != nil {
		return nil, err
	}
	// The report channel: processes that cannot record say so there.
	notes, err := openNotes(run.dir, filepath.Base(spoolDir))
	if err != nil {
		return nil, err
	}
	env.Added[NotesEnv] = notes.value
	env.Full = append(env.Full, NotesEnv+"="+notes.value)
	var drain *passDrain
	if run.drain != nil {
		if drain, err = run.drain.startPass(filepath.Base(spoolDir), spoolDir); err != nil {
			return nil, fmt.Errorf("cannot create the pass's directory for its spools on the output file system: %w", err)
		}
	}
	r.Log.Debug().Strs("env", env.AddedLines()).Strs("app", run.app).Msg("starting the app")
	r.Guard.setActive(false)
	proc, err := runProcessTree(ctx, run.app, env.Full, r.AppIO, cfg.Timeout, r.Log, r.Guard)
	exited := time.Now()
	r.Guard.setActive(true) // the app's tree has exited: a signal now is about the outputs
	notes.started()
	var drained *DrainReport
	if drain != nil {
		// Every process of the app is gone: the rest of the spools moves.
		var derr error
		drained, derr = drain.finish()
		if derr != nil {
			run.drainStuck = true
			run.keep(derr)
			if err == nil {
				notes.read()
				return nil, fmt.Errorf("moving the spools of pass %d to the output file system failed (the recorded data is kept in %s and %s): %w", n, spoolDir, drained.Dir, derr)
			}
		}
	}
	if err != nil {
		notes.read()
		return nil, err
	}
	spools := spoolDir
	if drained != nil {
		spools = drained.Dir
	}
	return &Pass{N: n, Config: cfg, Dir: PassDir(cfg), SpoolDir: spools, Env: env, Process: proc,
		Unprofiled: notes.read(), StartFailure: diagnoseStart(run.app, proc, spools, env.Full, r.AppIO.Dir), run: run,
		AppExited: exited, Drain: drained}, nil
}

// WritingOutputs is said before the pass's outputs are written. A launcher
// may kill rocprof-go meanwhile (rescue.go): the spools are made durable in
// the output directory on its first signal, or now when the app ended on a
// signal passed on to it (the teardown has begun) or a launcher started the
// run and the outputs will take long.
func (p *Pass) WritingOutputs() {
	r := p.run.r
	rs := r.passRescuer(p.run.spoolsDir(), filepath.Base(p.SpoolDir), p.N, p.Config, p.Process)
	p.rescue = rs
	r.Guard.setRescue(rs)
	switch {
	case rs == nil:
	case p.Process.Forwarded != 0:
		rs.start("the app ended after rocprof-go passed " + signalName(p.Process.Forwarded) + " on to it")
	case rs.early(r.Environ):
		rs.start("a launcher started the run and its spools are large: made durable before the outputs")
	}
}

// OutputsWritten is said when the pass's outputs are written, with the
// error that ended them (nil: all written). Written, the pass's rescue is
// removed, its spools are copied where ROCPROF_GO_KEEP_SPOOLS says and the
// pass is done. Failed, the run's directory is kept, and the error returned
// says where the recorded data is and how to convert it once the cause is
// fixed.
func (p *Pass) OutputsWritten(werr error) error {
	run := p.run
	run.r.Guard.setRescue(nil)
	if werr == nil {
		p.rescue.discard()
		if keep := envLookup(run.r.Environ, KeepSpoolsEnv); keep != "" {
			if err := keepSpools(keep, p.SpoolDir, p.N); err != nil {
				return err
			}
		}
		run.progress.done()
		return nil
	}
	rescued, _ := p.rescue.wait()
	p.rescue.close()
	run.keep(werr)
	cfg := p.Config
	if rescued != nil {
		return fmt.Errorf("writing the outputs of pass %d failed (the recorded data is kept in %s, and in %s): %w\n  (once the cause is fixed, `rocprof-go convert -i %s -f %s -d %s` writes the outputs from it)",
			p.N, rescued.Dir, p.SpoolDir, werr, staticPrefixOrDot(p.Dir), strings.Join(cfg.OutputFormat, " "), p.Dir)
	}
	if _, err := os.Stat(p.SpoolDir); errors.Is(err, fs.ErrNotExist) {
		// Under a launcher the spools are in the output directory
		// (rescue.go): removed with it, nothing is kept.
		return fmt.Errorf("writing the outputs of pass %d failed: %w\n  (the recorded data was in %s, which was removed too: those records are lost)", p.N, werr, p.SpoolDir)
	}
	return fmt.Errorf("writing the outputs of pass %d failed (the recorded data is kept in %s): %w\n  (once the cause is fixed, `rocprof-go convert -i %s -f %s -d %s` writes the outputs from it)",
		p.N, p.SpoolDir, werr, p.SpoolDir, strings.Join(cfg.OutputFormat, " "), p.Dir)
}

// RunOutputsFailed keeps the run's directory when the outputs made from
// every pass together failed, and says where the recorded data is.
func (run *Run) RunOutputsFailed(werr error) error {
	run.keep(werr)
	return fmt.Errorf("writing the outputs made from every pass failed (the recorded data is kept in %s): %w", run.spoolsDir().Path(), werr)
}

// StoppedAfter is, when a signal came after pass n's app exited and passes
// remain, why no further pass is run; nil otherwise.
func (run *Run) StoppedAfter(n int) error {
	if s := run.r.Guard.Signalled(); s != nil && n < run.passes {
		return fmt.Errorf("stopped by %s after pass %d: %d of %d passes not run", signalName(s), n, run.passes-n, run.passes)
	}
	return nil
}

// passRescuer is the rescue of a pass's spools (nil without a Guard: no
// signal is handled then).
func (r *Runner) passRescuer(runDir *securedir.Dir, passName string, pass int, cfg *options.Config, proc *ProcessResult) *rescuer {
	if r.Guard == nil {
		return nil
	}
	pd, err := runDir.OpenPrivate(passName)
	if err != nil {
		return nil
	}
	return r.newRescuer(pd, pass, cfg, proc, runDir.Path())
}

func staticPrefixOrDot(template string) string {
	if d := staticPrefix(template); d != "" {
		return d
	}
	return "."
}

func passLabel(cfg *options.Config) string {
	if cfg.CollectsCounters() {
		return cfg.Pass.SubDir + ": " + cfg.CountersLabel()
	}
	return cfg.Pass.SubDir
}
