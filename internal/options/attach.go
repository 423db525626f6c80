package options

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/domain"
)

// Attaching (-p/--pid/--attach PID, docs/attach.md): the run profiles a
// process that is already running instead of an app it starts. What the
// library loaded into a running process can collect is the domain table's
// Attached rows; everything else is refused here, before anything touches
// the process, with the list of what attaching collects.

// Attaching reports whether the pass attaches to a running process.
func (c *Config) Attaching() bool { return c.AttachPid != "" }

// AttachTarget is the pid the pass attaches to (0 when it launches an
// app). It is checked by Resolve: a positive decimal integer.
func (c *Config) AttachTarget() int {
	n, err := strconv.Atoi(c.AttachPid)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// AttachTarget is the pid the plan attaches to, 0 when it launches an app.
func (p *Plan) AttachTarget() int {
	if len(p.Passes) == 0 {
		return 0
	}
	return p.Passes[0].AttachTarget()
}

// AttachableList names, for messages and --help, what a run that attaches
// collects: the domain table's Attached rows, by option.
func AttachableList() string {
	var names []string
	for _, d := range domain.Switches {
		if d.Attached && d.Refused == "" {
			names = append(names, d.Flag())
		}
	}
	return strings.Join(names, ", ")
}

// attachOnlyOptions are the options that mean something only with --attach.
var attachOnlyOptions = []string{"attach_duration_msec", "attach_children", "attach_sync_output"}

// launchOnlyOptions are the options about an app rocprof-go starts: a
// process already running was started without them. They often come from
// a config file written for launches (virtual_gpu on a CPU-only runner),
// so they are said, not refused.
var launchOnlyOptions = []struct{ dest, why string }{
	{"virtual_gpu", "the virtual GPU is loaded when a process starts (start the target with it: docs/attach.md); here it only names the agents run.json lists and counters are planned for"},
	{"preload", "LD_PRELOAD is read when a process starts"},
	{"rocm_root", "a running process has loaded its ROCm libraries already"},
	{"timeout", "it ends an app rocprof-go started; --attach-duration-msec bounds the attach"},
}

// validateAttach checks a pass's attach options: the pid, no app command,
// the attach-only options only with a pid, and no domain or option that a
// run attached to a running process cannot honour (counters, PC sampling,
// thread trace and the shim's other domains: named with what attaching
// collects). The domains an aggregate switched on that attaching cannot
// collect are switched off with a warning.
func (c *Config) validateAttach(withApp bool) (warnings []string, err error) {
	if !c.Attaching() {
		for _, dest := range attachOnlyOptions {
			if c.IsSet(dest) {
				s, _ := SpecByDest(dest)
				return nil, &UsageError{Option: s.Flag(), Msg: "applies only when attaching: add --attach PID (or -p PID)"}
			}
		}
		return nil, nil
	}
	if n, perr := strconv.Atoi(c.AttachPid); perr != nil || n <= 0 {
		return nil, &UsageError{Option: "--attach", Msg: fmt.Sprintf("%q is not a process id: give the pid of a running process as a positive decimal integer, e.g. --attach 1234 (pgrep NAME finds it)", c.AttachPid)}
	}
	if withApp {
		return nil, &UsageError{Option: "--attach", Msg: "cannot be combined with an application command: --attach PID profiles the process that is already running; drop the command after the options, or drop --attach to start the command under rocprof-go"}
	}
	if c.AttachDurationMsec < 0 {
		return nil, &UsageError{Option: "--attach-duration-msec", Msg: "must not be negative: give the milliseconds to stay attached, or leave it out to detach on Enter or SIGINT"}
	}
	supported := "while attached rocprof-go collects " + AttachableList() + " (docs/attach.md)"
	if len(c.PmcGroups) > 0 {
		return nil, &UsageError{Option: "-i", Msg: "pmc_groups (counter groups multiplexed over the dispatches) cannot be collected while attached to a running process: give each group as a pmc: line (one attach window each), or run the app under rocprof-go"}
	}
	for _, d := range domain.Switches {
		if d.Attached || !c.Collects(d) {
			continue
		}
		opt := d.Flag()
		if s, ok := SpecByDest(d.Option); ok {
			opt = s.Flag()
		}
		if d.ID == domain.PCSampling || d.ID == domain.ThreadTrace || c.AskedByName(d) {
			return nil, &UsageError{Option: opt, Msg: "cannot be collected while attached to a running process yet: " + supported + "; run the app under rocprof-go for it"}
		}
	}
	// An aggregate (--sys-trace, --runtime-trace, --hsa-trace) asks for
	// what it can: the rest is said, not silently missing.
	var off []string
	for _, d := range domain.Switches {
		if d.Attached || !c.Collects(d) {
			continue
		}
		s, ok := SpecByDest(d.Option)
		if !ok {
			continue
		}
		if t, _ := s.field(c).(*Tri); t != nil {
			*t = False
			off = append(off, s.Flag())
		}
	}
	if len(off) > 0 {
		warnings = append(warnings, fmt.Sprintf("attached to a running process, rocprof-go does not collect %s yet: those domains are off; %s", strings.Join(off, ", "), supported))
	}
	for _, o := range launchOnlyOptions {
		if c.IsSet(o.dest) {
			s, _ := SpecByDest(o.dest)
			warnings = append(warnings, s.Flag()+" changes nothing when attaching: "+o.why)
		}
	}
	if len(c.TracingDomains()) == 0 && !c.CollectsCounters() {
		warnings = append(warnings, "no tracing options were enabled: attaching records nothing; add e.g. --kernel-trace --hip-trace --marker-trace")
	}
	return warnings, nil
}

// countersOnly reports whether the plan's passes differ only in their
// counters (the pmc: lines of an input file): attached, each is one attach
// window (docs/attach.md, "Counters while attached").
func (p *Plan) countersOnly() bool {
	for _, c := range p.Passes {
		if !strings.HasPrefix(c.Pass.SubDir, "pmc_") || len(c.Pmc) == 0 {
			return false
		}
	}
	return true
}

// SplitCounters replaces each attaching pass whose counter set needs
// several hardware passes (split says which, from the GPUs' counter
// databases) by one pass per hardware pass, in order, each collected in an
// attach window of its own: their output directories are pmc_1, pmc_2, ...
// as for the pmc: lines of an input file. It returns how many passes the
// plan has then.
func (p *Plan) SplitCounters(split func(names []string) ([][]string, error)) (int, error) {
	var out []*Config
	for _, c := range p.Passes {
		if !c.Attaching() || len(c.Pmc) == 0 {
			out = append(out, c)
			continue
		}
		sets, err := split(c.Pmc)
		if err != nil {
			return 0, err
		}
		if len(sets) <= 1 {
			out = append(out, c)
			continue
		}
		for _, s := range sets {
			n := c.clone()
			n.Pmc = append([]string(nil), s...)
			out = append(out, n)
		}
	}
	if len(out) > 1 {
		for i, c := range out {
			c.Pass = Pass{Index: i + 1, SubDir: "pmc_" + strconv.Itoa(i+1)}
		}
	}
	p.Passes = out
	return len(out), nil
}
