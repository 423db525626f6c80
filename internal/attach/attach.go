package attach

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// StartSymbol is the preload library's entry point for an attach
// (internal/hsa/preload/rpg_attach.h).
const StartSymbol = "rpg_attach_start"

// ErrAlready is rpg_attach_start's return when the process is already
// profiled (-EALREADY).
const errAlready = -int(syscall.EALREADY)

// Injector is what an attach needs of internal/inject: the checks that
// leave the process untouched when they fail, the injection itself, and
// the process tree. Tests give one whose "processes" are fake agents.
type Injector interface {
	// Preflight checks that pid can be attached to with lib (permission,
	// Yama, architecture, dynamic linking), touching nothing.
	Preflight(pid int, lib string) error
	// Inject loads lib into pid and calls sym(arg) there, returning its
	// int result.
	Inject(ctx context.Context, pid int, lib, sym, arg string) (int, error)
	// Descendants lists pid's descendants, breadth first.
	Descendants(pid int) ([]int, error)
}

// defaultInjector is internal/inject's (inject.go).
var defaultInjector Injector = ptrace{}

// Options is one attach.
type Options struct {
	// PID is the process to attach to.
	PID int
	// Children: also every descendant of PID, those running at the attach
	// and those started while attached.
	Children bool
	// Duration, when positive, detaches that long after the target was
	// attached (and bounds the wait for it to load a HIP or HSA library);
	// otherwise Enter, a signal, Stop, or every process gone detach.
	Duration time.Duration
	// Lib is the verified preload library the processes load.
	Lib string
	// Env is the configuration the processes read (the ROCPROF_* contract,
	// as the launcher would put it in the app's environment).
	Env map[string]string
	// Dir is the run's private directory: the configuration file and the
	// socket are made there.
	Dir string
	// WriteFile creates a file in Dir (O_EXCL, no link followed, 0600) and
	// returns its path; nil writes it with os.OpenFile.
	WriteFile func(name string, data []byte) (string, error)
	// Enter, when set (a terminal), detaches when a line is read from it,
	// or its end (Ctrl-D, a hang-up).
	Enter io.Reader
	// Signals detach when received (nil: SIGINT, SIGTERM and SIGHUP, the
	// terminal gone); rocprof-go does not die of them while attached.
	Signals []os.Signal
	// Stop, when closed, detaches.
	Stop <-chan struct{}
	// Progress receives rocprof-go's own lines (nil: os.Stderr).
	Progress io.Writer
	// Injector does the ptrace work (nil: internal/inject's).
	Injector Injector
	// ReadyTimeout bounds the wait for a process's "ready" after its
	// injection (default 15 s), DetachTimeout for its "detached" (default
	// 10 s), Poll the interval new descendants are looked for (100 ms).
	ReadyTimeout, DetachTimeout, Poll time.Duration
	// RuntimeLoaded says whether a process has loaded a HIP or HSA
	// library (nil: its /proc/PID/maps is read).
	RuntimeLoaded func(pid int) bool
}

// Report is what an attach did, run.json's "attach" object.
type Report struct {
	// Target is the pid given, PIDs every process attached (the target
	// first, then its descendants in the order they were attached).
	Target int   `json:"target"`
	PIDs   []int `json:"pids"`
	// WindowStart and WindowEnd are the wall-clock times the target was
	// attached (its "ready") and the detach began.
	WindowStart time.Time `json:"window_start"`
	WindowEnd   time.Time `json:"window_end"`
	// DetachedOn is why the detach began: "duration", "enter", "end of
	// input", "signal SIGINT", "exited" (every process gone), "stopped".
	DetachedOn string    `json:"detached_on"`
	Processes  []Process `json:"processes"`
	// Skipped are descendants that were not attached, and why.
	Skipped []Skipped `json:"skipped,omitempty"`
}

// Process is one attached process.
type Process struct {
	PID    int `json:"pid"`
	Parent int `json:"parent,omitempty"`
	// AttachMs is the time from the injection's start to the agent's
	// "ready", DetachMs from "detach" to its "detached".
	AttachMs float64 `json:"attach_ms"`
	DetachMs float64 `json:"detach_ms"`
	// SlotsRestored are the GOT slots the agent gave back their values,
	// DispatchesLost the kernel dispatches submitted inside the window that
	// it could not time or see (a loss: the run fails), by class in
	// DispatchesLostWhy (docs/attach.md, "What it cannot see").
	SlotsRestored     int               `json:"slots_restored"`
	DispatchesLost    uint64            `json:"dispatches_lost"`
	DispatchesLostWhy map[string]uint64 `json:"dispatches_lost_why,omitempty"`
	// InFlightAtAttach are the kernel dispatches submitted before the agent
	// saw their queue and not finished then, RunningAtDetach those of the
	// window still running when the detach's bounded wait ended: the
	// window's edges, reported, neither recorded nor lost.
	InFlightAtAttach uint64 `json:"in_flight_at_attach"`
	RunningAtDetach  uint64 `json:"running_at_detach"`
	// CopiesLost the memory copies (--memory-copy-trace) of the window it
	// could not time (a loss), by class in CopiesLostWhy;
	// CopiesRunningAtDetach those still running when the detach's wait
	// ended (the window's edge, not lost).
	CopiesLost            uint64            `json:"copies_lost,omitempty"`
	CopiesLostWhy         map[string]uint64 `json:"copies_lost_why,omitempty"`
	CopiesRunningAtDetach uint64            `json:"copies_running_at_detach,omitempty"`
	// Unloaded: the library is no longer mapped in the process after the
	// detach (or the process is gone).
	Unloaded bool `json:"unloaded"`
	// Exited: the process ended while attached (its spool is complete up
	// to its exit).
	Exited bool `json:"exited,omitempty"`
	// Problem is what went wrong in its detach, if anything.
	Problem string `json:"problem,omitempty"`
}

// Skipped is a descendant that was not attached.
type Skipped struct {
	PID    int    `json:"pid"`
	Reason string `json:"reason"`
}

// DispatchesLost is the dispatches the agents could not time or see.
func (r *Report) DispatchesLost() uint64 {
	var n uint64
	for _, p := range r.Processes {
		n += p.DispatchesLost
	}
	return n
}

// CopiesLost is the memory copies the agents could not time.
func (r *Report) CopiesLost() uint64 {
	var n uint64
	for _, p := range r.Processes {
		n += p.CopiesLost
	}
	return n
}

// edges sums the dispatches at the window's edges: in flight at the
// attach, still running at the detach.
func (r *Report) edges() (in, running uint64) {
	for _, p := range r.Processes {
		in += p.InFlightAtAttach
		running += p.RunningAtDetach
	}
	return in, running
}

// lostWhy says what each class of run.json's dispatches_lost_why is.
var lostWhy = map[string]string{
	"past":        "past the device before their doorbell was rung (another producer rang past them)",
	"unstamped":   "completed without timestamps",
	"reused":      "their completion signal reset by the app before it was read",
	"nomem":       "no memory for their completion signal",
	"destroyed":   "their queue destroyed before they completed",
	"missed":      "run by the device without the profiler's completion signal",
	"unseen":      "consumed by the device before the profiler could tell what they were",
	"overwritten": "overwritten in the ring before the profiler looked (a ring's worth between two doorbells)",
	"uncounted":   "run without their counters",
}

// DispatchesLostError is an attach whose agents could not time or see
// kernel dispatches submitted inside its window: a loss, which fails the
// run (the outputs hold every other record).
type DispatchesLostError struct{ Processes []Process }

func (e *DispatchesLostError) Error() string {
	n, why := lossesByProcess(e.Processes, lostWhy, func(p Process) (uint64, map[string]uint64) {
		return p.DispatchesLost, p.DispatchesLostWhy
	})
	return fmt.Sprintf("%d kernel dispatches submitted while attached could not be timed (%s): no record was made up for them; run.json counts them in attach.processes[].dispatches_lost and dispatches_lost_why", n, why)
}

// lossesByProcess totals the losses of's processes and says them per
// process and class ("PID 12: 2 completed without timestamps; PID 13: ..."),
// each class in the words of says (its own name when says has none).
func lossesByProcess(procs []Process, says map[string]string, of func(Process) (uint64, map[string]uint64)) (uint64, string) {
	var n uint64
	var parts []string
	for _, p := range procs {
		lost, classes := of(p)
		n += lost
		var why []string
		for _, k := range slices.Sorted(maps.Keys(classes)) {
			d := says[k]
			if d == "" {
				d = k
			}
			why = append(why, fmt.Sprintf("%d %s", classes[k], d))
		}
		if len(why) == 0 {
			why = []string{fmt.Sprintf("%d not timed", lost)}
		}
		parts = append(parts, fmt.Sprintf("PID %d: %s", p.PID, strings.Join(why, ", ")))
	}
	return n, strings.Join(parts, "; ")
}

// copyLostWhy says what each class of run.json's copies_lost_why is.
var copyLostWhy = map[string]string{
	"unstamped":        "completed without timestamps",
	"reused":           "their completion signal reset by the app before it was read",
	"nosignal":         "without a completion signal",
	"nomem":            "no memory to keep them pending",
	"after_switch_off": "submitted after the app's async-copy profiling switch was put back at the detach",
}

// CopiesLostError is an attach whose agents could not time memory copies
// submitted inside its window: a loss, which fails the run.
type CopiesLostError struct{ Processes []Process }

func (e *CopiesLostError) Error() string {
	n, why := lossesByProcess(e.Processes, copyLostWhy, func(p Process) (uint64, map[string]uint64) {
		return p.CopiesLost, p.CopiesLostWhy
	})
	return fmt.Sprintf("%d memory copies submitted while attached could not be timed (%s): no record was made up for them; run.json counts them in attach.processes[].copies_lost and copies_lost_why", n, why)
}

// LostError is a *DispatchesLostError naming the processes that lost
// dispatches of the window and a *CopiesLostError naming those that lost
// memory copies of it (joined when both), or nil.
func (r *Report) LostError() error {
	if r == nil {
		return nil
	}
	var dispatches, copies []Process
	for _, p := range r.Processes {
		if p.DispatchesLost > 0 {
			dispatches = append(dispatches, p)
		}
		if p.CopiesLost > 0 {
			copies = append(copies, p)
		}
	}
	var errs []error
	if len(dispatches) > 0 {
		errs = append(errs, &DispatchesLostError{Processes: dispatches})
	}
	if len(copies) > 0 {
		errs = append(errs, &CopiesLostError{Processes: copies})
	}
	return errors.Join(errs...)
}

// StillMapped are the processes that kept the library mapped (inert)
// after their detach.
func (r *Report) StillMapped() []int {
	var out []int
	for _, p := range r.Processes {
		if !p.Unloaded {
			out = append(out, p.PID)
		}
	}
	return out
}

// AlreadyProfiledError is a process that rocprof-go already profiles.
type AlreadyProfiledError struct{ PID int }

func (e *AlreadyProfiledError) Error() string {
	return fmt.Sprintf("cannot attach to PID %d: it is already profiled (started under rocprof-go, or attached by another rocprof-go): detach the other rocprof-go first (Enter or Ctrl-C there), or profile it from the one that started it", e.PID)
}

// NoRuntimeError is a target that loaded no HIP or HSA library while
// rocprof-go waited.
type NoRuntimeError struct{ PID int }

func (e *NoRuntimeError) Error() string {
	return fmt.Sprintf("cannot profile PID %d: the process loaded no HIP or HSA library during the attach: attach to the process that runs the GPU work (with --attach-children its workers are attached too), or give it longer with --attach-duration-msec", e.PID)
}

// agentProc is one process being attached or attached.
type agentProc struct {
	pid, parent int
	rep         *Process
	conn        net.Conn
	lines       chan string // the agent's lines after "ready"; closed on EOF
	registered  chan registration
}

type registration struct {
	conn  net.Conn
	lines chan string
	ready bool
	text  string // the agent's error
}

type attacher struct {
	o      Options
	out    io.Writer
	conf   string
	sock   string
	ln     *net.UnixListener
	mu     sync.Mutex
	procs  map[int]*agentProc
	order  []int
	report *Report
	said   map[string]bool
	stop   chan string
}

// Run attaches to o.PID (and its descendants), waits, detaches, and
// returns what it did. An error means nothing was attached (the Report
// is then nil); with a Report, every process attached was detached and
// its spool is complete: the outputs are to be written.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.PID <= 0 {
		return nil, fmt.Errorf("attach: no process id")
	}
	if o.Injector == nil {
		o.Injector = defaultInjector
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 15 * time.Second
	}
	if o.DetachTimeout <= 0 {
		o.DetachTimeout = 10 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = 100 * time.Millisecond
	}
	if o.RuntimeLoaded == nil {
		o.RuntimeLoaded = runtimeLoaded
	}
	if o.WriteFile == nil {
		o.WriteFile = func(name string, data []byte) (string, error) {
			p := filepath.Join(o.Dir, name)
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
			if err != nil {
				return "", err
			}
			_, err = f.Write(data)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return p, err
		}
	}
	a := &attacher{o: o, out: o.Progress, procs: map[int]*agentProc{}, said: map[string]bool{},
		report: &Report{Target: o.PID, PIDs: []int{}, Processes: []Process{}}}
	if a.out == nil {
		a.out = os.Stderr
	}
	started := time.Now()

	// The stop conditions, watched from the start: a signal while the
	// target is being attached detaches it as soon as it is ready.
	stop := make(chan string, 4)
	a.stop = stop
	sigs := o.Signals
	if sigs == nil {
		sigs = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}
	}
	sigCh := make(chan os.Signal, 2)
	signal.Notify(sigCh, sigs...)
	defer signal.Stop(sigCh)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case s := <-sigCh:
			stop <- "signal " + signalName(s)
		case <-done:
		}
	}()
	if o.Stop != nil {
		go func() {
			select {
			case <-o.Stop:
				stop <- "stopped"
			case <-done:
			}
		}()
	}
	go func() {
		select {
		case <-ctx.Done():
			stop <- "stopped"
		case <-done:
		}
	}()
	// The duration bounds the wait for a runtime from the start, and the
	// window from the target's attach: an attach that took long (a busy
	// process's threads reached a safe point late) still records for the
	// whole duration.
	var deadline <-chan time.Time
	if o.Duration > 0 {
		t := time.NewTimer(o.Duration)
		defer t.Stop()
		deadline = t.C
	}

	if err := a.listen(); err != nil {
		return nil, err
	}
	defer a.close()

	// The target: what the preflight refuses (permission, Yama, a static
	// or foreign program) is said before anything else, then it must have
	// loaded HIP or HSA (a server may load them later: waited for, said
	// once).
	if alive(o.PID) {
		if err := o.Injector.Preflight(o.PID, o.Lib); err != nil {
			return nil, err
		}
	}
	if !o.RuntimeLoaded(o.PID) {
		if !alive(o.PID) {
			return nil, fmt.Errorf("cannot attach to PID %d: no such process: check the pid (ps -p %d)", o.PID, o.PID)
		}
		fmt.Fprintf(a.out, "rocprof-go: PID %d has loaded no HIP or HSA library yet: waiting for it to load one (Ctrl-C to give up)\n", o.PID)
		tick := time.NewTicker(o.Poll)
		loaded := false
		for !loaded {
			select {
			case <-tick.C:
				if !alive(o.PID) {
					tick.Stop()
					return nil, fmt.Errorf("cannot attach to PID %d: the process exited before it loaded a HIP or HSA library", o.PID)
				}
				loaded = o.RuntimeLoaded(o.PID)
			case <-deadline:
				tick.Stop()
				return nil, &NoRuntimeError{PID: o.PID}
			case <-stop:
				tick.Stop()
				return nil, &NoRuntimeError{PID: o.PID}
			}
		}
		tick.Stop()
	}
	if err := a.attachOne(ctx, o.PID, 0); err != nil {
		return nil, err
	}
	a.report.WindowStart = time.Now()
	if o.Duration > 0 {
		t := time.NewTimer(o.Duration)
		defer t.Stop()
		deadline = t.C
	}
	if o.Children {
		a.attachDescendants(ctx)
	}
	a.announce(started)

	reason := ""
	tick := time.NewTicker(o.Poll)
	for reason == "" {
		select {
		case reason = <-stop:
		case <-deadline:
			reason = "duration"
		case <-tick.C:
			if o.Children {
				a.attachDescendants(ctx)
			}
			if a.allGone() {
				reason = "exited"
			}
		}
	}
	tick.Stop()
	a.report.WindowEnd = time.Now()
	a.report.DetachedOn = reason
	if reason != "exited" {
		fmt.Fprintf(a.out, "rocprof-go: detaching (%s)\n", reason)
	}
	a.detachAll()
	if in, run := a.report.edges(); in+run > 0 {
		fmt.Fprintf(a.out, "rocprof-go: note: at the window's edges %d kernel dispatches were in flight when the attach began (submitted before the profiler saw their queue) and %d still running when the detach ended its wait: outside the window, not recorded (run.json attach.processes[].in_flight_at_attach, running_at_detach)\n", in, run)
	}
	var running uint64
	for _, p := range a.report.Processes {
		running += p.CopiesRunningAtDetach
	}
	if running > 0 {
		fmt.Fprintf(a.out, "rocprof-go: note: at the window's edge %d memory copies were still running when the detach ended its wait: outside the window, not recorded (run.json attach.processes[].copies_running_at_detach)\n", running)
	}
	return a.report, nil
}

// announce says the attach is done and how it ends.
func (a *attacher) announce(started time.Time) {
	n := len(a.report.PIDs) - 1
	who := fmt.Sprintf("PID %d", a.o.PID)
	if n > 0 {
		who += fmt.Sprintf(" and %d descendants", n)
	}
	how := "send SIGINT (Ctrl-C) or SIGTERM to rocprof-go to detach"
	switch {
	case a.o.Duration > 0:
		how = fmt.Sprintf("detaching after %d ms, or on Ctrl-C", a.o.Duration.Milliseconds())
	case a.o.Enter != nil:
		how = "press Enter (or Ctrl-C) to detach"
	}
	fmt.Fprintf(a.out, "rocprof-go: attached to %s in %d ms: %s\n", who, time.Since(started).Milliseconds(), how)
	if a.o.Enter != nil && a.o.Duration <= 0 {
		go func() {
			buf := make([]byte, 256)
			for {
				n, err := a.o.Enter.Read(buf)
				for _, b := range buf[:n] {
					if b == '\n' || b == '\r' {
						select {
						case a.stop <- "enter":
						default:
						}
						return
					}
				}
				if err != nil {
					// End of input (Ctrl-D) or a terminal hung up:
					// nobody is left to press Enter.
					select {
					case a.stop <- "end of input":
					default:
					}
					return
				}
			}
		}()
	}
}
