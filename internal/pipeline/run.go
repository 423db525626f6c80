package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/rocprof-go/rocprof-go/internal/attach"
	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/output"
	"github.com/rocprof-go/rocprof-go/internal/output/format"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/placeholder"
	"github.com/rocprof-go/rocprof-go/internal/topology"
)

// Version is rocprof-go's version, recorded in every manifest.
var Version = "0.1.0-dev"

// Options configures one profiling run.
type Options struct {
	// Args are rocprofv3/rocprof-go options exactly as on the command line
	// (everything before "--"), e.g. {"--kernel-trace", "-f", "csv", "-d", "out"}.
	Args []string
	// Stdin, Stdout and Stderr are the app's streams (nil: inherit).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Progress receives rocprof-go's own progress lines and warnings (nil: os.Stderr).
	Progress io.Writer
	// Environ is the environment the app starts from (nil: os.Environ()).
	Environ []string
	// Dir is the app's working directory ("" = the current one).
	Dir string
	// Log receives diagnostics (zero value: none).
	Log zerolog.Logger
	// ConfigFile overrides the default config file location ("" = default).
	ConfigFile string
	// plan, when set by the CLI, skips parsing Args (already resolved).
	plan *options.Plan
}

// Result is how a run ended. A non-zero ExitStatus is the app's own (or 124
// for a timeout); it is not an error.
type Result struct {
	ExitStatus int
	// Dir is the top output directory, where run.json is.
	Dir      string
	Manifest *Manifest
}

// Run profiles argv (the application and its arguments) and returns when
// every process it started has exited and the outputs are written.
func Run(ctx context.Context, opts Options, argv []string) (*Result, error) {
	started := time.Now()
	clockOffset := realtimeMinusBoottime()
	plan, err := resolvePlan(opts, argv)
	if err != nil {
		return nil, err
	}
	attaching := plan.AttachTarget() != 0
	if len(plan.App) == 0 && !attaching {
		return nil, options.ErrNoApplication
	}
	progress := opts.Progress
	if progress == nil {
		progress = os.Stderr
	}
	environ := opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	libs, err := launch.EmbeddedLibraries()
	if err != nil {
		return nil, err
	}
	if libs.Warning != "" {
		fmt.Fprintln(progress, "rocprof-go: warning: "+libs.Warning)
	}
	if libs.Note != "" {
		fmt.Fprintln(progress, "rocprof-go: note: "+libs.Note)
	}
	if attaching && collectsCounters(plan) {
		if err := splitAttachCounters(plan, environ, progress); err != nil { // attach.go
			return nil, err
		}
	}
	first := plan.Passes[0]
	found, err := checkPlan(plan, environ)
	if err != nil {
		return nil, err
	}
	agents := found.agents
	runner := &launch.Runner{
		Libs: libs, Log: opts.Log, Stderr: progress, Environ: environ,
		AppIO: launch.Stdio{Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr, Dir: opts.Dir},
	}
	// Signals after the app exited finish the outputs, then stop them
	// (launch.OutputGuard); run.json is written whatever they did.
	runner.Guard = launch.NewOutputGuard(progress)
	defer runner.Guard.Close()
	// What launch checks before anything runs: the app, the output
	// directories (created), the virtual GPU.
	check := runner.Check
	if attaching {
		check = checkAttach // attach.go
	}
	if err := check(plan); err != nil {
		return nil, err
	}
	// Two live runs never write the same output names (-o without %pid%);
	// the claims are held until run.json is written.
	release, err := claimRunPrefixes(plan)
	if err != nil {
		return nil, err
	}
	defer release()
	res, runErr := runPasses(ctx, runner, plan, opts.Stdout, opts.Stdin)
	runner.Guard.OutputsDone()
	if res == nil {
		return nil, runErr
	}
	if err := writeConfigFiles(res, plan); err != nil && runErr == nil {
		runErr = err
	}
	top := topDir(first)
	m := buildManifest(plan, agents, res, top)
	m.PID, m.Started, m.Finished = os.Getpid(), started, time.Now()
	if n := len(res.Passes); n > 0 && !res.Passes[n-1].AppExited.IsZero() {
		m.AppExitToFinishS = m.Finished.Sub(res.Passes[n-1].AppExited).Seconds()
	}
	m.Host, _ = os.Hostname()
	m.ClockOffsetNs = clockOffset
	// The launcher's variables of rocprof-go itself (the same as its
	// app's, which inherits them), as claims and %rank% read them.
	if l := placeholder.LauncherOf(os.LookupEnv); l.Name != "" {
		shared := ranksShareDir(first, top)
		m.Rank = &ManifestRank{Launcher: l.Name, Job: l.Job, Rank: l.Rank, Size: l.Size, RankVariable: l.RankVar, SharedDir: &shared}
	}
	noteUnavailable(progress, m.UnavailableDomains)
	noteTruncated(progress, m.TruncatedNames)
	for _, w := range res.Warnings {
		fmt.Fprintln(progress, "rocprof-go: warning: "+w)
	}
	if runErr == nil {
		// An app its loader could not start recorded nothing: that is the
		// one thing to say (not what each domain missed).
		for _, p := range res.Passes {
			if p.StartFailure != nil {
				runErr = p.StartFailure
			}
		}
	}
	if lossErr := collectionLosses(m); lossErr != nil {
		// Always said; it fails the run unless the run already failed
		// (the app's own status, or an output error, is then the result).
		if runErr == nil {
			runErr = lossErr
		} else {
			fmt.Fprintln(progress, "rocprof-go: error: "+lossErr.Error())
		}
	}
	if runErr != nil {
		m.Error = runErr.Error()
	}
	if err := writeManifest(top, m, progress); err != nil {
		return nil, errors.Join(runErr, fmt.Errorf("cannot write %s: %w", filepath.Join(top, ManifestName), err))
	}
	// Thread traces are decoded once run.json is written: a decoder library
	// that crashes cannot take the run's record with it.
	if decodeThreadTraces(res, started, environ, progress) {
		m2 := buildManifest(plan, agents, res, top)
		m2.PID, m2.Started, m2.Finished, m2.Error = m.PID, m.Started, time.Now(), m.Error
		m2.Host, m2.ClockOffsetNs, m2.Rank = m.Host, m.ClockOffsetNs, m.Rank
		if err := writeManifest(top, m2, io.Discard); err == nil {
			m = m2
		}
	}
	out := &Result{ExitStatus: res.ExitStatus, Dir: top, Manifest: m}
	return out, runErr
}

// passResult is one pass: how its app ran and what its outputs hold.
type passResult struct {
	Config   *options.Config
	Dir      string // the pass's output directory template
	Process  *launch.ProcessResult
	Env      *launch.AppEnv // the environment the app was started with
	SpoolDir string         // kept only when writing outputs failed
	// Unprofiled are the app's processes that could not record: the run
	// fails.
	Unprofiled []launch.UnprofiledProcess
	// StartFailure is an app its dynamic loader could not start.
	StartFailure *launch.StartFailure
	// Attach is what the attach did (--attach PID), nil for a launch.
	Attach *attach.Report
	// AppExited is when the pass's app exited; Drain what the drain of
	// its spools did (nil: not drained).
	AppExited time.Time
	Drain     *launch.DrainReport
	outputReport
}

// runResult is every pass that ran, and the outputs made from them all.
type runResult struct {
	ExitStatus int
	Passes     []passResult
	// Files are the outputs made from every pass together (rocprof v1's
	// results.csv), Warnings what was found worth saying about the whole run.
	Files    []model.File
	Warnings []string
}

// runPasses runs the passes in order, in one private run directory
// (launch.Run, removed at the end unless kept): for each, one run of
// the app (launch.RunPass), then its outputs; then the outputs made from
// every pass. A pass whose app exits non-zero ends the run with that
// status, after its outputs are written; so does a signal after a pass's
// app exited (no further pass is started).
func runPasses(ctx context.Context, runner *launch.Runner, plan *options.Plan, stdout io.Writer, stdin io.Reader) (*runResult, error) {
	run, err := runner.Begin(plan)
	if err != nil {
		return nil, err
	}
	defer run.Close()
	res := &runResult{}
	var written []passOutputs // the passes whose outputs were written
	var clockWarnings []string
	ownClock := ownBoottimeOffset()
	var stopped error
	for i, cfg := range plan.Passes {
		outDir := fixedPart(launch.PassDir(cfg))
		atStart := watchDir(outDir) // outputdir.go
		var pass *launch.Pass
		var attached *attach.Report
		if cfg.Attaching() {
			// A pass over processes already running (attach.go).
			pass, attached, err = attachPass(ctx, run, i+1, cfg, stdin, runner.Stderr)
		} else {
			pass, err = run.RunPass(ctx, i+1, cfg)
		}
		removed := atStart.gone()
		atStart.close()
		if err != nil {
			return nil, err
		}
		if removed {
			fmt.Fprintf(runner.Stderr, "rocprof-go: warning: the output directory %s was removed (or moved away) while the app ran: it is created again for the outputs\n", outDir)
		}
		pr := passResult{Config: cfg, Dir: pass.Dir, Process: pass.Process, Env: pass.Env, Unprofiled: pass.Unprofiled, StartFailure: pass.StartFailure, Attach: attached,
			AppExited: pass.AppExited, Drain: pass.Drain}
		req := passOutputs{Config: cfg, Dir: pass.Dir, SpoolDir: pass.SpoolDir, Launch: run.Launch, Stdout: stdout}
		pass.WritingOutputs()
		var writing *dirWatch
		if launch.CheckOutputDir(launch.PassDir(cfg)) == nil {
			writing = watchDir(outDir)
		}
		rep, werr := writePassOutputs(req)
		clockWarnings = append(clockWarnings, timeNamespaceWarnings(pass.SpoolDir, ownClock)...) // timens.go
		if writing.gone() {
			werr = &OutputDirRemovedError{Dir: outDir, Err: werr}
		}
		writing.close()
		err = pass.OutputsWritten(werr)
		written = append(written, req)
		if rep != nil {
			pr.outputReport = *rep
		}
		res.ExitStatus = pass.Process.ExitStatus
		if werr != nil {
			pr.SpoolDir = pass.SpoolDir
			res.Passes = append(res.Passes, pr)
			res.Warnings = clockWarnings
			return res, err
		}
		if err != nil { // ROCPROF_GO_KEEP_SPOOLS could not copy them
			return nil, err
		}
		res.Passes = append(res.Passes, pr)
		if pass.Process.ExitStatus != 0 {
			if i+1 < len(plan.Passes) {
				fmt.Fprintf(runner.Stderr, "rocprof-go: pass %d: the app exited with status %d; the remaining passes are not run\n", i+1, pass.Process.ExitStatus)
			}
			break
		}
		if stopped = run.StoppedAfter(i + 1); stopped != nil {
			break
		}
	}
	rep, werr := writeRunOutputs(written)
	if rep != nil {
		res.Files, res.Warnings = rep.Files, rep.Warnings
	}
	res.Warnings = append(res.Warnings, clockWarnings...)
	if werr != nil {
		return res, run.RunOutputsFailed(werr)
	}
	return res, stopped
}

// validateFormats checks, before the app starts, that every requested
// output format can be written here: OTF2 needs a library loaded at run
// time, and finding it missing after a long run would waste the run.
func validateFormats(plan *options.Plan) error {
	for _, p := range plan.Passes {
		for _, f := range p.OutputFormat {
			if format.OTF2.Is(f) {
				if err := output.CheckOTF2(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func collectsCounters(plan *options.Plan) bool {
	for _, p := range plan.Passes {
		if p.CollectsCounters() {
			return true
		}
	}
	return false
}

// validateCounters checks requested counters before the app starts, pass
// by pass, against the counter database (validatePassCounters).
func validateCounters(plan *options.Plan, agents []topology.Agent, agentErr error) error {
	if !collectsCounters(plan) {
		return nil
	}
	if agentErr != nil {
		return fmt.Errorf("cannot collect counters: %w", agentErr)
	}
	for _, p := range plan.Passes {
		if err := validatePassCounters(p, agents); err != nil {
			return err
		}
	}
	return nil
}

// topDir is the output directory without pass sub-directories or
// per-process placeholders: where run.json goes.
func topDir(cfg *options.Config) string {
	dir := cfg.OutputDirectory
	if dir == "" {
		dir, _ = os.Getwd()
	}
	return fixedPart(dir)
}

// fixedPart is a directory template resolved up to its first placeholder
// whose value differs between the run's processes: the directory every
// process's files are below (-d out_%hostname%/%pid% → out_<host>;
// -d run_%pid% → the current directory).
func fixedPart(dir string) string {
	part, cut := placeholder.RunPart(dir, placeholder.Current())
	if cut {
		// A cut in the middle of a name ("run_%pid%") keeps its parent.
		return filepath.Dir(part + "x")
	}
	return filepath.Clean(part)
}

func buildManifest(plan *options.Plan, agents []topology.Agent, res *runResult, top string) *Manifest {
	m := &Manifest{Version: Version, Command: plan.App, Options: map[string]string{}, ExitStatus: res.ExitStatus}
	for _, l := range plan.Passes[0].Describe() {
		k, v, _ := strings.Cut(l, " = ")
		m.Options[k] = v
	}
	for _, a := range agents {
		m.Agents = append(m.Agents, ManifestAgent{Index: a.Index, NodeID: a.NodeID, Arch: a.Arch, Virtual: a.Virtual})
	}
	m.Passes = []ManifestPass{}
	m.Files = []ManifestFile{}
	for _, p := range res.Passes {
		rel, err := filepath.Rel(top, p.Dir)
		if err != nil {
			rel = p.Dir
		}
		mp := ManifestPass{Dir: rel, Counters: p.Config.Pmc, Drain: p.Drain}
		if p.Process != nil {
			mp.ExitStatus = p.Process.ExitStatus
			mp.TimedOut = p.Process.TimedOut
			mp.DurationS = p.Process.Duration.Seconds()
			m.TimedOut = m.TimedOut || p.Process.TimedOut
		}
		if p.Attach != nil && len(res.Passes) > 1 {
			mp.Attach = p.Attach // one attach window per counter pass
			m.AttachWindows = attachWindowsNote(plan)
		}
		m.Passes = append(m.Passes, mp)
		if p.Attach != nil && m.Attach == nil {
			m.Attach = p.Attach
		}
		if p.Records != nil && m.DomainRecords == nil {
			m.DomainRecords = map[string]int64{}
		}
		for d, n := range p.Records {
			m.DomainRecords[d] += n
		}
		m.LostDomains = append(m.LostDomains, p.Lost...)
		m.UnavailableDomains = append(m.UnavailableDomains, p.Unavailable...)
		m.LostRecords = append(m.LostRecords, p.LostRecords...)
		m.SkippedSpools = append(m.SkippedSpools, p.SkippedSpools...)
		m.TruncatedNames = append(m.TruncatedNames, p.Truncated...)
		m.NoGPU = append(m.NoGPU, p.NoGPU...)
		m.UnprofiledProcesses = append(m.UnprofiledProcesses, p.Unprofiled...)
		for _, f := range p.Files {
			rel, err := filepath.Rel(top, f.Path)
			if err != nil {
				rel = f.Path
			}
			m.Files = append(m.Files, ManifestFile{Path: rel, Format: string(f.Format), Domain: f.Domain, Records: int64(f.Records), Bytes: outputBytes(f.Path)})
		}
	}
	for _, f := range res.Files { // made from every pass together (rocprof v1's files)
		rel, err := filepath.Rel(top, f.Path)
		if err != nil {
			rel = f.Path
		}
		m.Files = append(m.Files, ManifestFile{Path: rel, Format: string(f.Format), Domain: f.Domain, Records: int64(f.Records), Bytes: outputBytes(f.Path)})
	}
	m.FormatBytes = formatBytes(m.Files, m.DomainRecords)
	return m
}

func lookupIn(environ []string) func(string) (string, bool) {
	if environ == nil {
		return os.LookupEnv
	}
	return func(k string) (string, bool) {
		for i := len(environ) - 1; i >= 0; i-- {
			if name, v, ok := strings.Cut(environ[i], "="); ok && name == k {
				return v, true
			}
		}
		return "", false
	}
}

// RunPlan runs an already-resolved plan (used by the CLI, which resolves
// options itself to handle --help, --echo and --list-avail first).
func RunPlan(ctx context.Context, opts Options, plan *options.Plan) (*Result, error) {
	opts.plan = plan
	return Run(ctx, opts, plan.App)
}

// realtimeMinusBoottime reads CLOCK_REALTIME and CLOCK_BOOTTIME together
// (boottime between two realtime reads, their mean): the node's offset
// between the clock the records carry and the one nodes share.
func realtimeMinusBoottime() int64 {
	var ts unix.Timespec
	before := time.Now().UnixNano()
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0
	}
	after := time.Now().UnixNano()
	return before + (after-before)/2 - ts.Nano()
}
