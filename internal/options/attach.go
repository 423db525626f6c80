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
	{"virtual_gpu", "the virtual GPU is loaded when a process starts (start the target with it: docs/attach.md); here it only names the agents run.json lists"},
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
	if c.IsSet("hsa_trace") && c.HsaTrace.On() {
		return nil, &UsageError{Option: "--hsa-trace", Msg: "cannot be collected while attached to a running process yet: " + supported + "; run the app under rocprof-go for it"}
	}
	if c.CollectsCounters() {
		return nil, &UsageError{Option: "--pmc", Msg: "counters cannot be collected while attached to a running process yet (--pmc, pmc: lines of -i): " + supported + "; run the app under rocprof-go to collect counters"}
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
	if len(c.TracingDomains()) == 0 {
		warnings = append(warnings, "no tracing options were enabled: attaching records nothing; add e.g. --kernel-trace --hip-trace --marker-trace")
	}
	return warnings, nil
}
