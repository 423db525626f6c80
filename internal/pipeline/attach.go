package pipeline

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rocprof-go/rocprof-go/internal/attach"
	"github.com/rocprof-go/rocprof-go/internal/counters"
	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/topology"
)

// A plan with an attach pid (--attach PID, docs/attach.md) runs its one
// pass over processes already running instead of an app: launch makes the
// run's directory and the pass's spool directory and variables as for a
// launched pass, internal/attach attaches, waits and detaches, and the
// pass's outputs, losses and run.json are then the same code's as a
// launched pass's, with run.json's "attach" object.

// attachInjector, when set (tests: fake agents), replaces internal/inject's
// injection.
var attachInjector attach.Injector

// checkAttach is what Runner.Check does before a launch, for an attach:
// the output directories are created and checked (there is no app to look
// up).
func checkAttach(plan *options.Plan) error {
	for _, cfg := range plan.Passes {
		if err := launch.CheckOutputDir(launch.PassDir(cfg)); err != nil {
			return err
		}
	}
	return nil
}

// attachPass attaches to the pass's processes and returns the pass once
// every one detached (or exited), with what the attach did; an error means
// nothing was attached.
func attachPass(ctx context.Context, run *launch.Run, n int, cfg *options.Config, stdin io.Reader, progress io.Writer) (*launch.Pass, *attach.Report, error) {
	ap, err := run.PrepareAttach(n, cfg)
	if err != nil {
		return nil, nil, err
	}
	defer ap.RemoveFiles()
	if cfg.CollectsCounters() {
		// The counter program the agent runs in C (internal/attach/pmc.go).
		agents, err := topology.Detect(cfg.VirtualGPU, os.LookupEnv, topology.DefaultSysfs)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot collect counters: %w", err)
		}
		prog, warnings, err := attach.PMCProgram(attach.PMCSet{Names: cfg.Pmc, Opts: counterOptions(cfg)}, agents)
		if err != nil {
			return nil, nil, err
		}
		for _, w := range warnings {
			fmt.Fprintln(progress, "rocprof-go: warning: "+w)
		}
		if _, err := ap.WriteFile(attach.PMCFile, prog); err != nil {
			return nil, nil, fmt.Errorf("cannot write the counter program in %s: %w", ap.RunDir(), err)
		}
		if cfg.Pass.Index > 0 {
			fmt.Fprintf(progress, "rocprof-go: attach window %d: counters %s\n", cfg.Pass.Index, strings.Join(cfg.Pmc, " "))
		}
	}
	o := attach.Options{
		PID: cfg.AttachTarget(), Children: cfg.AttachChildren.On(),
		Duration: time.Duration(cfg.AttachDurationMsec) * time.Millisecond,
		Lib:      ap.Lib, Env: ap.Env, Dir: ap.RunDir(), WriteFile: ap.WriteFile, Progress: progress,
		Injector: attachInjector,
	}
	// Enter detaches when stdin is a terminal this rocprof-go may read.
	if stdin == nil {
		stdin = os.Stdin
	}
	if f, ok := stdin.(*os.File); ok && attach.TerminalStdin(f) {
		o.Enter = f
	}
	begin := time.Now()
	rep, err := attach.Run(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	pass := ap.Attached(&launch.ProcessResult{Pid: rep.Target, Start: begin, Duration: time.Since(begin)})
	return pass, rep, nil
}

// counterOptions are the counter database's options of a pass (its
// definitions and extra counters files), as validatePassCounters loads it.
func counterOptions(cfg *options.Config) []counters.Option {
	var opts []counters.Option
	if cfg.CounterDefs != "" {
		opts = append(opts, counters.WithDefinitionsFile(cfg.CounterDefs))
	}
	if cfg.ExtraCounters != "" {
		opts = append(opts, counters.WithExtraFile(cfg.ExtraCounters))
	}
	return opts
}

// splitAttachCounters gives each hardware pass of an attach's counter sets
// an attach window of its own (options.Plan.SplitCounters), and says so.
func splitAttachCounters(plan *options.Plan, environ []string, progress io.Writer) error {
	first := plan.Passes[0]
	agents, err := topology.Detect(first.VirtualGPU, lookupIn(environ), topology.DefaultSysfs)
	if err != nil {
		return fmt.Errorf("cannot collect counters: %w", err)
	}
	n, err := plan.SplitCounters(func(names []string) ([][]string, error) {
		return attach.PMCPasses(attach.PMCSet{Names: names, Opts: counterOptions(first)}, agents)
	})
	if err != nil || n < 2 {
		return err
	}
	fmt.Fprintln(progress, "rocprof-go: "+attachWindowsNote(plan))
	return nil
}

// attachWindowsNote says how an attach's counter passes are collected, on
// stderr and in run.json (attach_windows).
func attachWindowsNote(plan *options.Plan) string {
	first := plan.Passes[0]
	window := ", each until Enter is pressed (SIGINT or SIGTERM end the run)"
	if first.AttachDurationMsec > 0 {
		window = fmt.Sprintf(" of %d ms each", first.AttachDurationMsec)
	}
	return fmt.Sprintf("counters: %d passes, one per attach window%s, consecutive: pass k's counters come from the dispatches of window k", len(plan.Passes), window)
}
