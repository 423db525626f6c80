package pipeline

import (
	"fmt"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/launch"
)

// UnprofiledError is a run with processes that could not record: their
// spool could not be created, or they were started without the profiler
// (their notes, internal/launch/notes.go). What they did is missing from
// the outputs, so the run fails, naming each process and the cause.
type UnprofiledError struct {
	Processes []launch.UnprofiledProcess
}

func (e *UnprofiledError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d process(es) of the app could not be profiled: what they did is not in the outputs:", len(e.Processes))
	for _, p := range e.Processes {
		switch p.Cause {
		case "spool_not_created":
			fmt.Fprintf(&b, "\n  pid %d (%s): could not create its spool (%s): %s", p.PID, p.Command, p.Error, p.Reason)
		default:
			fmt.Fprintf(&b, "\n  pid %d: %s", p.PID, p.Reason)
		}
	}
	b.WriteString("\n  (run.json lists them under unprofiled_processes)")
	return b.String()
}

// lostUnprofiled are the processes whose records are missing: not the tools
// a wrapper ran without the profiler that link no GPU runtime (run.json
// lists those too, with their cause).
func lostUnprofiled(ps []launch.UnprofiledProcess) []launch.UnprofiledProcess {
	var lost []launch.UnprofiledProcess
	for _, p := range ps {
		if p.Lost() {
			lost = append(lost, p)
		}
	}
	return lost
}
