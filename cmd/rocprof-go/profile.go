package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/domain"
	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/pipeline"
)

// runProfile is `rocprof-go [options] -- app [args]`.
func runProfile(args []string) int { return exitCode(runProfileErr(args)) }

func runProfileErr(args []string) error {
	cl, err := options.ParseArgs(args)
	if err != nil {
		return err
	}
	if cl.Config.LogFormat != "" {
		stderrDiag.setFormat(cl.Config.LogFormat)
	}
	if cl.Help {
		writeHelp(os.Stdout, newRootCmd())
		return nil
	}
	if cl.Version {
		writeVersion(os.Stdout)
		return nil
	}
	plan, err := options.Resolve(cl, options.Sources{
		LookupEnv:         os.LookupEnv,
		DefaultConfigFile: options.DefaultConfigPath(os.LookupEnv),
	})
	if err != nil {
		return err
	}
	first := plan.Passes[0]
	// The config file may name the format too: from here on it is final.
	stderrDiag.setFormat(first.LogFormat)
	log := newLogger(stderrDiag, first.LogLevel)
	for _, w := range plan.Warnings {
		fmt.Fprintln(stderrDiag, "rocprof-go: warning:", w)
	}
	for _, n := range plan.Notes {
		log.Info().Msg(n)
	}
	if lvl := first.LogLevel; lvl == "config" || lvl == "info" || lvl == "trace" {
		for i, p := range plan.Passes {
			// One write per pass: one message in the JSON log format.
			var b strings.Builder
			fmt.Fprintf(&b, "rocprof-go: pass %d configuration:\n", i+1)
			for _, l := range p.Describe() {
				b.WriteString("  " + l + "\n")
			}
			fmt.Fprint(stderrDiag, b.String())
		}
	}
	if first.ListAvail.On() {
		if err := listAvail(os.Stdout, first); err != nil {
			return err
		}
		if len(plan.App) == 0 {
			return nil
		}
	}
	if len(plan.App) == 0 && !first.Echo.On() && !first.Attaching() {
		return options.ErrNoApplication
	}
	libs, err := launch.EmbeddedLibraries()
	if err != nil {
		return err
	}
	runner := &launch.Runner{Libs: libs, Log: log, Stderr: stderrDiag.progress(), Environ: os.Environ()}
	if first.Echo.On() {
		return echo(os.Stdout, runner, plan)
	}
	if lvl := first.LogLevel; lvl == "env" || lvl == "info" || lvl == "trace" {
		lines, err := addedLines(runner, first)
		if err != nil {
			return err
		}
		for _, l := range lines {
			fmt.Fprintln(stderrDiag, "rocprof-go: env: "+l)
		}
	}
	res, err := pipeline.RunPlan(context.Background(), pipeline.Options{Log: log, Progress: stderrDiag.progress()}, plan)
	if res != nil && !first.Quiet.On() {
		writeReport(stderrDiag, plan, res)
	}
	if err != nil {
		if res != nil {
			fmt.Fprintln(stderrDiag, "rocprof-go: error:", err)
			return &exitStatusError{status: max(res.ExitStatus, exitError)}
		}
		return err
	}
	if res.Manifest.TimedOut {
		fmt.Fprintf(stderrDiag, "rocprof-go: the app was stopped after --timeout %s\n", first.Timeout)
	}
	if res.ExitStatus != 0 {
		return &exitStatusError{status: res.ExitStatus}
	}
	return nil
}

// echo prints what each pass would run, with the configuration's tracing
// switches and the environment rocprof-go adds, without running anything.
func echo(w io.Writer, runner *launch.Runner, plan *options.Plan) error {
	for i, cfg := range plan.Passes {
		if cfg.Attaching() {
			if err := echoAttach(w, runner, cfg); err != nil {
				return err
			}
			continue
		}
		env, err := runner.Prepare(cfg, "<run directory>")
		if err != nil {
			return err
		}
		quoted := make([]string, len(plan.App))
		for j, a := range plan.App {
			quoted[j] = strconv.Quote(a)
		}
		fmt.Fprintf(w, "pass %d of %d:\n", i+1, len(plan.Passes))
		fmt.Fprintf(w, "  command: [%s]\n", strings.Join(quoted, ", "))
		printTracing(w, cfg)
		if cfg.CollectsCounters() {
			fmt.Fprintf(w, "  counters: %s\n", cfg.CountersLabel())
		}
		fmt.Fprintln(w, "  environment added:")
		for _, l := range env.AddedLines() {
			fmt.Fprintln(w, "    "+l)
		}
	}
	return nil
}

type tracingSwitch struct {
	name string
	on   bool
}

// printTracing prints a pass's output directory and its tracing switches,
// one a line, as echo prints them for every pass.
func printTracing(w io.Writer, cfg *options.Config) {
	fmt.Fprintf(w, "  output directory: %s\n", launch.PassDir(cfg))
	if e := pipeline.OutputEstimate(cfg.OutputFormat); e != "" {
		// Measured figures (docs/performance.md, "Disk use"): times the
		// records the run will make, the disk it needs.
		fmt.Fprintf(w, "  output bytes per record (API call / kernel dispatch): %s\n", e)
	}
	fmt.Fprintln(w, "  tracing:")
	for _, d := range tracingSwitches(cfg) {
		state := "off"
		if d.on {
			state = "on"
		}
		fmt.Fprintf(w, "    %-24s %s\n", d.name, state)
	}
}

// tracingSwitches lists every domain of the domain table (internal/domain)
// that is a switch of its own, in the option table's (help) order: every
// domain --echo's environment exports has its row. The aggregates, which
// carry no variable, show through the domains they turn on; counters and PC
// sampling have lines of their own.
func tracingSwitches(c *options.Config) []tracingSwitch {
	var out []tracingSwitch
	for i := range options.Specs {
		s := &options.Specs[i]
		if _, ok := domain.ByOption(s.Dest); !ok || s.Kind != options.KindBool || s.NotSupported != "" {
			continue
		}
		if t, ok := s.Field(c).(*options.Tri); ok {
			out = append(out, tracingSwitch{s.Long, t.On()})
		}
	}
	return out
}

// addedLines are the variables a pass hands the app's processes, as
// NAME=value: the environment added to a launched app, or an attach's
// configuration (no LD_PRELOAD: the processes run already).
func addedLines(runner *launch.Runner, cfg *options.Config) ([]string, error) {
	if !cfg.Attaching() {
		env, err := runner.Prepare(cfg, "<run directory>")
		if err != nil {
			return nil, err
		}
		return env.AddedLines(), nil
	}
	vars, err := runner.AttachEnv(cfg, "<run directory>")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range options.SortedKeys(vars) {
		out = append(out, k+"="+vars[k])
	}
	return out, nil
}

// echoAttach prints the attach plan (--attach PID --echo): the process,
// its descendants, when it detaches, the tracing switches and the
// configuration the processes would read, without touching the process.
func echoAttach(w io.Writer, runner *launch.Runner, cfg *options.Config) error {
	fmt.Fprintln(w, "attach:")
	fmt.Fprintf(w, "  process: PID %d\n", cfg.AttachTarget())
	if cfg.AttachChildren.On() {
		fmt.Fprintln(w, "  descendants: every one, and those started while attached")
	} else {
		fmt.Fprintln(w, "  descendants: none (--attach-children=no)")
	}
	if cfg.AttachDurationMsec > 0 {
		fmt.Fprintf(w, "  detach: after %d ms, or on SIGINT/SIGTERM\n", cfg.AttachDurationMsec)
	} else {
		fmt.Fprintln(w, "  detach: on Enter (when stdin is a terminal), SIGINT/SIGTERM, or when every attached process exited")
	}
	fmt.Fprintf(w, "  library: %s, loaded with dlopen and started by rpg_attach_start(<run directory>/attach.conf)\n", launch.PreloadLib)
	printTracing(w, cfg)
	fmt.Fprintln(w, "  configuration (attach.conf, with the socket's path):")
	lines, err := addedLines(runner, cfg)
	if err != nil {
		return err
	}
	for _, l := range lines {
		fmt.Fprintln(w, "    "+l)
	}
	return nil
}
