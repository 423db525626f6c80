package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/output/model"

	"github.com/rocprof-go/rocprof-go/internal/securedir"
)

// OutputWriter turns the spools one run of the app left behind into the
// user's output files. The CLI supplies it (internal/output); tests use fakes.
type OutputWriter interface {
	WriteOutputs(ctx context.Context, req OutputRequest) (*OutputReport, error)
}

// RunOutputWriter is an OutputWriter with outputs made from every pass's
// spools together (rocprof v1's results.csv, which merges the passes'
// counters by dispatch): WriteRunOutputs runs once the last pass's outputs
// are written, while every pass's spools are still there.
type RunOutputWriter interface {
	OutputWriter
	WriteRunOutputs(ctx context.Context, passes []OutputRequest) (*OutputReport, error)
}

// OutputReport is what a writer made of one pass's spools: the files, and
// the requested domains that could not be collected.
type OutputReport struct {
	Files []model.File
	// Records counts the pass's records by rocprofv3 domain name
	// (KERNEL_DISPATCH, HIP_API, ...; absent: none recorded).
	Records map[string]int64
	// Lost are requested domains a process could not collect: the run
	// fails. Unavailable are domains an aggregate option (--sys-trace,
	// --runtime-trace) implied that the process's runtime cannot give: a
	// notice.
	Lost, Unavailable []DomainLoss
	// LostRecords are the processes whose spools did not hold every record
	// they were given; SkippedSpools the spool files that could not be read
	// at all (path: reason). Either fails the run.
	LostRecords   []RecordLoss
	SkippedSpools []string
	// NoGPU are the processes whose GPU stack found no GPU (hsa_init
	// failed, or the HSA runtime had no GPU agent): the run fails, and
	// nothing it did not record is blamed on the app.
	NoGPU []NoGPU
	// Truncated are the processes that stored names or messages cut to
	// fit a record (over ~64 KiB): a note, the records are kept.
	Truncated []TruncatedNames
	// Warnings are said at the end of the run (RunOutputWriter's only).
	Warnings []string
}

// NoGPU is one process whose GPU stack found no GPU, why, and what the
// thunk said about it when it could tell.
type NoGPU struct {
	PID    int    `json:"pid"`
	Reason string `json:"reason"` // e.g. "hsa_init failed: HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008)"
	// Diagnosis are the lines the thunk (libhsakmt) printed when hsa_init
	// ran again in a probe with HSAKMT_DEBUG_LEVEL=3: its topology errors,
	// e.g. "Fail to get cache info for node 0"; none when it printed none.
	Diagnosis []string `json:"diagnosis,omitempty"`
}

// RecordLoss is one process's records that did not reach the outputs.
type RecordLoss struct {
	PID int `json:"pid"`
	// Dropped records were never stored: the spool could not grow (its file
	// system was full) or a record was too large; counted by the app.
	Dropped uint64 `json:"dropped,omitempty"`
	// Torn records were started but never published (the process died
	// while writing them).
	Torn uint64 `json:"torn,omitempty"`
	// InvalidChunks are spool chunks abandoned at a malformed record (a
	// damaged spool): the records after it in that chunk are lost, uncounted.
	InvalidChunks uint64 `json:"invalid_chunks,omitempty"`
	// PerfettoCapped records were left out of the Perfetto trace at its
	// --perfetto-buffer-size (they are in every other output).
	PerfettoCapped uint64 `json:"perfetto_capped,omitempty"`
	// PCSamplesLost are host-trap PC samples the runtime reported lost
	// (its sampling buffers were full).
	PCSamplesLost uint64 `json:"pc_samples_lost,omitempty"`
}

// DomainLoss is one process's requested domains that were not collected,
// and why.
type DomainLoss struct {
	PID     int      `json:"pid"`
	Domains []string `json:"domains"` // option names, e.g. "kernel_trace", "pmc"
	Reason  string   `json:"reason"`
}

// OutputRequest is everything a writer needs for one pass.
type OutputRequest struct {
	Config *options.Config
	// Dir is the pass's output directory; it may still hold per-process
	// placeholders (%pid% ...), which the writer resolves for each process.
	Dir      string
	SpoolDir string
	Launch   time.Time
	// Stdout is where summaries printed "to the terminal" go.
	Stdout io.Writer
}

// PassResult is how one run of the app went.
type PassResult struct {
	Env      *AppEnv // the environment the app was started with
	Config   *options.Config
	Dir      string
	Process  *ProcessResult
	Files    []model.File
	Records  map[string]int64 // see OutputReport
	SpoolDir string           // kept only when writing outputs failed
	// Lost, Unavailable, LostRecords, SkippedSpools and NoGPU: see OutputReport.
	Lost, Unavailable []DomainLoss
	LostRecords       []RecordLoss
	SkippedSpools     []string
	NoGPU             []NoGPU
	Truncated         []TruncatedNames // see OutputReport
	// Unprofiled are the app's processes that could not record, from the
	// pass's notes (internal/hsa/preload/notes.c): the run fails.
	Unprofiled []UnprofiledProcess
}

// Result is the whole run.
type Result struct {
	ExitStatus int
	Passes     []PassResult
	// Files are the outputs made from every pass together (RunOutputWriter),
	// Warnings what it found worth saying about the whole run.
	Files    []model.File
	Warnings []string
}

// Runner runs the application once per pass.
type Runner struct {
	Libs    *Libraries
	Writer  OutputWriter
	Log     zerolog.Logger
	Stderr  io.Writer // rocprof-go's own progress lines
	AppIO   Stdio     // the app's standard streams
	Environ []string
	// Prepared, when set, is called once every check passed and the output
	// directories exist, before the first app starts; an error ends the run
	// there (nothing ran).
	Prepared func() error
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

// needsShim reports whether a pass loads the HSA shim: for HSA interception
// (everything but HIP API and marker tracing), and with HIP or marker
// tracing alone to describe the agents every format lists (agent_info.csv,
// as rocprofv3 writes with any CSV output); the shim then intercepts nothing.
func needsShim(c *options.Config) bool {
	return c.KernelTrace.On() || c.MemoryCopyTrace.On() || c.MemoryAllocationTrace.On() ||
		c.ScratchMemoryTrace.On() || c.HsaCoreTrace.On() || c.HsaAmdTrace.On() || c.HsaImageTrace.On() ||
		c.HsaFinalizerTrace.On() || c.CollectsCounters() || c.AdvancedThreadTrace.On() ||
		c.HipRuntimeTrace.On() || c.HipCompilerTrace.On() || c.MarkerTrace.On() || c.PCSampling()
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
)

// noteKeptSpools lists, on stderr, the run directories under root that an
// earlier run of this user kept (its outputs failed) or left behind (its
// rocprof-go was killed): they hold recorded data nobody converted. They
// are not deleted: only the user knows whether they are still wanted.
func noteKeptSpools(w io.Writer, root string) {
	if w == nil {
		return
	}
	dirs, _ := filepath.Glob(filepath.Join(root, runDirPrefix+"*"))
	uid := uint32(os.Geteuid())
	for _, d := range dirs {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != uid {
			continue
		}
		why := ""
		if _, err := os.Stat(filepath.Join(d, runKeptFile)); err == nil {
			why = "kept when its outputs could not be written"
		} else if b, err := os.ReadFile(filepath.Join(d, runOwnerFile)); err == nil {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			if pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
				continue // still running (or unknown): not ours to judge
			}
			why = "left by a rocprof-go that was killed"
		} else {
			continue
		}
		spools, _ := filepath.Glob(filepath.Join(d, "pass_*", "*.spool"))
		if len(spools) == 0 {
			continue
		}
		fmt.Fprintf(w, "rocprof-go: note: %s holds %d spools of an earlier run (%s): `rocprof-go convert -i %s -f csv` writes them out; delete the directory when done\n",
			d, len(spools), why, d)
	}
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

// Run runs every pass of the plan in order. A pass whose app exits non-zero
// ends the run with that status, after its outputs are written.
func (r *Runner) Run(ctx context.Context, plan *options.Plan) (*Result, error) {
	// An app that cannot be run (exit 127) leaves nothing behind: it is
	// looked up before any output directory is created.
	if _, err := lookPath(plan.App[0], r.AppIO.Dir, r.Environ); err != nil {
		return nil, &AppNotFoundError{App: plan.App[0], Err: err}
	}
	for _, cfg := range plan.Passes {
		if err := CheckOutputDir(PassDir(cfg)); err != nil {
			return nil, err
		}
		if err := CheckVirtualGPU(plan.App, cfg.VirtualGPU, r.Environ); err != nil {
			return nil, err
		}
	}
	// Said once every check passed (a bad option is then the one line on
	// stderr), before the app starts; the app still runs.
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
	if r.Prepared != nil {
		if err := r.Prepared(); err != nil {
			return nil, err
		}
	}
	// Under a launcher, the spools go to the output directory's file
	// system when it is a local one (rescue.go): a teardown's SIGKILL then
	// finds them there, and making them durable is a hard link.
	spoolRoot, onOutput := r.outputSpoolRoot(plan)
	if spoolRoot == nil {
		var err error
		if spoolRoot, err = r.spoolRoot(); err != nil {
			return nil, err
		}
	}
	defer spoolRoot.Close()
	if !onOutput {
		noteKeptSpools(r.Stderr, spoolRoot.Path())
	}
	// Created and used through verified descriptors (internal/securedir);
	// its path, which the app's processes are given, is on a path only root
	// and this user control, so it names this directory until it is removed.
	runDir, err := spoolRoot.MkdirTemp(runDirPrefix)
	if err != nil {
		return nil, fmt.Errorf("cannot create the run's private directory: %w", err)
	}
	defer runDir.Close()
	r.Guard.setRunDir(runDir)
	// Who owns it: a later run tells a directory whose rocprof-go was
	// killed from one still in use.
	_ = runDir.WriteFile(runOwnerFile, []byte(strconv.Itoa(os.Getpid())), 0o600)
	keepRunDir := false
	defer func() {
		if !keepRunDir {
			os.RemoveAll(runDir.Path())
			if onOutput {
				_ = os.Remove(spoolRoot.Path()) // when no other run's is in it
			}
		}
	}()
	res := &Result{}
	launch := time.Now()
	progress := newPassProgress(r.Stderr, len(plan.Passes))
	var written []OutputRequest // the passes whose outputs were written
	var stopped error           // a signal after a pass's app exited: no further pass
	for i, cfg := range plan.Passes {
		progress.begin(i+1, passLabel(cfg))
		pass, err := runDir.Mkdir(fmt.Sprintf("pass_%d", i+1))
		if err != nil {
			return nil, err
		}
		err = writeCounterFiles(pass, cfg)
		pass.Close()
		if err != nil {
			return nil, err
		}
		spoolDir := pass.Path()
		env, err := r.Prepare(cfg, spoolDir)
		if err != nil {
			return nil, err
		}
		// Right before the app gets the path: still the run's own directory.
		if err := runDir.Verify(); err != nil {
			return nil, err
		}
		// The report channel: processes that cannot record say so there.
		notes, err := openNotes(runDir, filepath.Base(spoolDir))
		if err != nil {
			return nil, err
		}
		env.Added[NotesEnv] = notes.value
		env.Full = append(env.Full, NotesEnv+"="+notes.value)
		r.Log.Debug().Strs("env", env.AddedLines()).Strs("app", plan.App).Msg("starting the app")
		r.Guard.setActive(false)
		proc, err := runProcessTree(ctx, plan.App, env.Full, r.AppIO, cfg.Timeout, r.Log, r.Guard)
		r.Guard.setActive(true) // the app's tree has exited: a signal now is about the outputs
		notes.started()
		if err != nil {
			notes.read()
			return nil, err
		}
		pr := PassResult{Config: cfg, Dir: PassDir(cfg), Process: proc, Env: env, Unprofiled: notes.read()}
		if r.Writer != nil {
			// A launcher may kill rocprof-go while it writes the outputs
			// (rescue.go): the spools are made durable in the output
			// directory on its first signal, or now when the app ended on
			// a signal passed on to it (the teardown has begun) or a
			// launcher started the run and the outputs will take long.
			rs := r.passRescuer(runDir, filepath.Base(spoolDir), i+1, cfg, proc)
			r.Guard.setRescue(rs)
			switch {
			case rs == nil:
			case proc.Forwarded != 0:
				rs.start("the app ended after rocprof-go passed " + signalName(proc.Forwarded) + " on to it")
			case rs.early(r.Environ):
				rs.start("a launcher started the run and its spools are large: made durable before the outputs")
			}
			req := OutputRequest{Config: cfg, Dir: pr.Dir, SpoolDir: spoolDir, Launch: launch, Stdout: r.AppIO.Stdout}
			rep, werr := r.Writer.WriteOutputs(ctx, req)
			r.Guard.setRescue(nil)
			var rescued *RescueResult
			if werr == nil {
				rs.discard()
			} else {
				rescued, _ = rs.wait()
				rs.close()
			}
			written = append(written, req)
			if rep != nil {
				pr.Files, pr.Records, pr.Lost, pr.Unavailable = rep.Files, rep.Records, rep.Lost, rep.Unavailable
				pr.LostRecords, pr.SkippedSpools, pr.NoGPU = rep.LostRecords, rep.SkippedSpools, rep.NoGPU
				pr.Truncated = rep.Truncated
			}
			if werr != nil {
				keepRunDir = true
				_ = runDir.WriteFile(runKeptFile, []byte(werr.Error()+"\n"), 0o600)
				pr.SpoolDir = spoolDir
				res.Passes = append(res.Passes, pr)
				res.ExitStatus = proc.ExitStatus
				if rescued != nil {
					return res, fmt.Errorf("writing the outputs of pass %d failed (the recorded data is kept in %s, and in %s): %w\n  (once the cause is fixed, `rocprof-go convert -i %s -f %s -d %s` writes the outputs from it)",
						i+1, rescued.Dir, spoolDir, werr, staticPrefixOrDot(PassDir(cfg)), strings.Join(cfg.OutputFormat, " "), PassDir(cfg))
				}
				return res, fmt.Errorf("writing the outputs of pass %d failed (the recorded data is kept in %s): %w\n  (once the cause is fixed, `rocprof-go convert -i %s -f %s -d %s` writes the outputs from it)",
					i+1, spoolDir, werr, spoolDir, strings.Join(cfg.OutputFormat, " "), PassDir(cfg))
			}
		}
		if keep := envLookup(r.Environ, KeepSpoolsEnv); keep != "" {
			if err := keepSpools(keep, spoolDir, i+1); err != nil {
				return nil, err
			}
		}
		res.Passes = append(res.Passes, pr)
		res.ExitStatus = proc.ExitStatus
		progress.done()
		if proc.ExitStatus != 0 {
			if len(plan.Passes) > 1 && i+1 < len(plan.Passes) {
				fmt.Fprintf(r.Stderr, "rocprof-go: pass %d: the app exited with status %d; the remaining passes are not run\n", i+1, proc.ExitStatus)
			}
			break
		}
		if s := r.Guard.Signalled(); s != nil && i+1 < len(plan.Passes) {
			stopped = fmt.Errorf("stopped by %s after pass %d: %d of %d passes not run", signalName(s), i+1, len(plan.Passes)-i-1, len(plan.Passes))
			break
		}
	}
	if w, ok := r.Writer.(RunOutputWriter); ok && len(written) > 0 {
		rep, werr := w.WriteRunOutputs(ctx, written)
		if rep != nil {
			res.Files, res.Warnings = rep.Files, rep.Warnings
		}
		if werr != nil {
			keepRunDir = true
			_ = runDir.WriteFile(runKeptFile, []byte(werr.Error()+"\n"), 0o600)
			return res, fmt.Errorf("writing the outputs made from every pass failed (the recorded data is kept in %s): %w", runDir.Path(), werr)
		}
	}
	return res, stopped
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

// TruncatedNames is how many records of a process hold a name or message
// the recorder cut to fit its largest record (~64 KiB).
type TruncatedNames struct {
	PID   int    `json:"pid"`
	Count uint64 `json:"count"`
}
