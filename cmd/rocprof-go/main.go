// Command rocprof-go is a GPU profiler for AMD GPUs with rocprofv3's command line.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	// A spool cut short while read is a TornSpoolError, not a fatal fault.
	_ "github.com/rocprof-go/rocprof-go/internal/faultguard"
	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

func main() {
	// A closed standard output (`rocprof-go --summary ... | head -1`) must
	// not kill the run before its files and run.json are written: with
	// SIGPIPE caught, a write there fails with EPIPE instead (a caught
	// signal is reset to its default for the app at exec).
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	code := execute(os.Args[1:])
	// A spool cut short while it was read (tracing's fault guard) lost
	// records to every output made from it: the function that read it
	// returned the loss as its error (output.Write, a run, convert), which
	// failed the command. One whose reader's error no function returned
	// fails it here, as a last resort.
	for _, t := range tracing.UnreportedTornSpools() {
		fmt.Fprintln(os.Stderr, "rocprof-go: error: "+launch.Printable(t.Error()))
		if code == 0 {
			code = 1
		}
	}
	launch.Cleanup()
	if model.StdoutLost() {
		fmt.Fprintln(os.Stderr, "rocprof-go: note: standard output was closed (broken pipe): the summary tables printed there after that were dropped; the rest of the run (its output files, run.json) went on")
	}
	os.Exit(code)
}
