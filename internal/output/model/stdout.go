package model

import (
	"errors"
	"os"
	"sync/atomic"
	"syscall"
)

// stdout is standard output as the outputs write to it (the -S/-D summary
// tables, -o stdout): when its reader went away (`rocprof-go ... | head
// -1`), a write fails with EPIPE — once the CLI no longer dies of SIGPIPE
// (main.go) — and from then on what goes there is dropped, while the run
// goes on to write every output file and run.json. StdoutLost tells the
// CLI, which says so on stderr.
type stdout struct{ lost atomic.Bool }

var procStdout stdout

func (s *stdout) Write(p []byte) (int, error) {
	if s.lost.Load() {
		return len(p), nil
	}
	n, err := os.Stdout.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		s.lost.Store(true)
		return len(p), nil
	}
	return n, err
}

// StdoutLost reports whether something the outputs printed to standard
// output was lost because its reader had closed it.
func StdoutLost() bool { return procStdout.lost.Load() }
