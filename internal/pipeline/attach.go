package pipeline

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/rocprof-go/rocprof-go/internal/attach"
	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/options"
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
