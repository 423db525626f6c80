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

// ErrStdoutClosed is what the outputs sent to standard output (-o stdout)
// fail with once its reader closed it: unlike the summary tables, they are
// the run's data, so the run keeps its spools and fails (launch's
// convert hint says how to write them again).
var ErrStdoutClosed = errors.New("standard output was closed by its reader (broken pipe) before the outputs sent there with -o stdout were written: they did not reach it (write them to files with -o NAME, or convert the kept data)")

// dataStdout is standard output for the outputs' data: a write after the
// reader went away fails with ErrStdoutClosed.
type dataStdout struct{}

func (dataStdout) Write(p []byte) (int, error) {
	n, err := procStdout.Write(p)
	if procStdout.lost.Load() {
		return 0, ErrStdoutClosed
	}
	return n, err
}
