package launch

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
	"github.com/rocprof-go/rocprof-go/internal/securedir"
)

// OutputGuard handles SIGINT, SIGTERM and SIGHUP once the app has exited,
// while rocprof-go writes the outputs (while the app runs, they are the
// app's: runProcessTree forwards them). Before, they killed rocprof-go
// mid-output: no run.json, a temporary file left in the output directory,
// the spools left in the run directory with no word.
//
//   - The first signal does not stop the writing. The run directory is
//     marked kept and its path printed with the `rocprof-go convert`
//     command, so that a SIGKILL that follows (mpirun and Slurm send
//     SIGTERM, then SIGKILL a second later) loses nothing recorded: the
//     next run lists the directory too. When the outputs complete, the
//     directory is removed as usual.
//   - The second stops: every later write or commit of an output fails
//     (atomicfile.Stop), which removes the file being written; the pass's
//     outputs fail as on a full disk, the run directory is kept with the
//     command that converts it, and run.json lists exactly the files that
//     were complete. The run exits non-zero.
type OutputGuard struct {
	mu     sync.Mutex
	active bool // the app has exited: signals are ours
	app    int  // the running app's pid (0: none started yet)
	final  bool // the outputs are done: run.json is being written
	count  int
	sig    os.Signal
	stderr io.Writer
	runDir *securedir.Dir
	// rescue makes the current pass's spools durable in its output
	// directory (rescue.go): started on the first signal; pending is the
	// reason of a first signal that came before the pass set it.
	rescue  *rescuer
	pending string
	ch      chan os.Signal
	done    chan struct{}
}

// NewOutputGuard starts handling the signals for a run (Close ends it);
// the Runner tells it when the app runs.
func NewOutputGuard(stderr io.Writer) *OutputGuard {
	g := &OutputGuard{stderr: stderr, ch: make(chan os.Signal, 4), done: make(chan struct{})}
	signal.Notify(g.ch, forwardedSignals...)
	go g.loop()
	return g
}

func (g *OutputGuard) setRunDir(d *securedir.Dir) {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.runDir = d
	g.mu.Unlock()
}

// setApp records the pid of the app just started.
func (g *OutputGuard) setApp(pid int) {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.app = pid
	g.mu.Unlock()
}

// setActive says whether the app is running (false) or has exited (true).
func (g *OutputGuard) setActive(on bool) {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.active = on
	if !on {
		g.app = 0
	}
	g.mu.Unlock()
}

func (g *OutputGuard) loop() {
	for {
		select {
		case s := <-g.ch:
			g.handle(s)
		case <-g.done:
			return
		}
	}
}

// setRescue hands the guard the rescue of the pass whose outputs are being
// written (nil: none). A first signal that came before it starts it now.
func (g *OutputGuard) setRescue(rs *rescuer) {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.rescue = rs
	pending := g.pending
	g.pending = ""
	g.mu.Unlock()
	if rs != nil && pending != "" {
		rs.start(pending)
	}
}

func (g *OutputGuard) handle(s os.Signal) {
	g.mu.Lock()
	if !g.active {
		// While the app runs, runProcessTree forwards it. Once the app has
		// exited (a zombie not reaped yet, or gone), it is about the
		// outputs, even before runProcessTree has returned.
		if g.app == 0 || !exited(g.app) {
			g.mu.Unlock()
			return
		}
		g.active = true
	}
	g.count++
	g.sig = s
	name := signalName(s)
	stderr := g.stderr
	switch {
	case g.final:
		g.mu.Unlock()
		if stderr != nil {
			fmt.Fprintf(stderr, "rocprof-go: received %s: the outputs are written; writing run.json\n", name)
		}
	case g.count == 1:
		dir := ""
		if g.runDir != nil {
			dir = g.runDir.Path()
			_ = g.runDir.WriteFile(runKeptFile, []byte("rocprof-go received "+name+" while writing the outputs\n"), 0o600)
		}
		rs := g.rescue
		reason := "received " + name + " after the app exited"
		if rs == nil {
			g.pending = reason
		}
		g.mu.Unlock()
		// The launcher's SIGKILL follows (mpirun: 1 s later): first make
		// the recorded data durable in the output directory, then finish.
		if rs != nil {
			rs.start(reason)
			res, err := rs.wait()
			if stderr != nil {
				noteRescue(stderr, name, rs, res, err)
			}
			if err == nil && res != nil {
				return
			}
		}
		if stderr != nil {
			fmt.Fprintf(stderr, "rocprof-go: received %s after the app exited: finishing the outputs (a second signal stops now). Should rocprof-go be killed meanwhile, the recorded data stays in %s: `rocprof-go convert -i %s -f FORMAT -d DIR` writes the outputs from it\n",
				name, dir, dir)
		}
	case g.count == 2:
		g.mu.Unlock()
		atomicfile.Stop(fmt.Errorf("stopped by %s", name))
		if stderr != nil {
			fmt.Fprintf(stderr, "rocprof-go: received %s again: stopping the outputs; the files already complete stay, run.json lists them\n", name)
		}
	default:
		g.mu.Unlock()
	}
}

// noteRescue says where a rescue put the recorded data, or why it failed.
func noteRescue(w io.Writer, name string, rs *rescuer, res *RescueResult, err error) {
	if err != nil {
		fmt.Fprintf(w, "rocprof-go: received %s after the app exited: the recorded data could not be made durable in %s: %v\n", name, rs.outDir, err)
		return
	}
	if res == nil {
		return
	}
	fmt.Fprintf(w, "rocprof-go: received %s after the app exited: the recorded data is safe in %s (%d spools, %.1f MiB, %.0f ms; fsynced after %.0f ms): finishing the outputs (a second signal stops now). Should rocprof-go be killed meanwhile, `rocprof-go convert -i %s -f FORMAT` writes the outputs from it\n",
		name, res.Dir, res.Spools, float64(res.Bytes)/(1<<20), float64(res.Safe.Microseconds())/1e3, float64(res.Synced.Microseconds())/1e3, rs.outDir)
}

// Signalled is the first signal received after the app exited, or nil:
// no further pass is started.
func (g *OutputGuard) Signalled() os.Signal {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.count > 0 && g.active {
		return g.sig
	}
	return nil
}

// OutputsDone lets files be written again (run.json, after a second
// signal stopped the outputs); a later signal no longer stops anything.
func (g *OutputGuard) OutputsDone() {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.final = true
	g.mu.Unlock()
	atomicfile.Resume()
}

// Stopped is the signal that stopped the outputs (the second), or nil.
func (g *OutputGuard) Stopped() os.Signal {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.count >= 2 {
		return g.sig
	}
	return nil
}

// Close stops handling signals (their default action is back) and lets
// files be written again (run.json is written after it).
func (g *OutputGuard) Close() {
	if g == nil {
		return
	}
	signal.Stop(g.ch)
	select {
	case <-g.done:
	default:
		close(g.done)
	}
	atomicfile.Resume()
}

// exited reports whether the process pid has exited: gone, or a zombie.
func exited(pid int) bool {
	if syscall.Kill(pid, 0) == syscall.ESRCH {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || (i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X'))
}

func signalName(s os.Signal) string {
	if ss, ok := s.(syscall.Signal); ok {
		switch ss {
		case syscall.SIGINT:
			return "SIGINT"
		case syscall.SIGTERM:
			return "SIGTERM"
		case syscall.SIGHUP:
			return "SIGHUP"
		}
	}
	return s.String()
}
