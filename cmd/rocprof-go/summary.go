package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocprof-go/rocprof-go/internal/analysis"
	"github.com/rocprof-go/rocprof-go/internal/analysis/summary"
	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
	"github.com/rocprof-go/rocprof-go/internal/launch"
)

func init() { registerSubcommand(newSummaryCmd) }

func newSummaryCmd() *cobra.Command {
	var inputs []string
	var format, output, units string
	var opt summary.Options
	cmd := &cobra.Command{
		Use:   "summary -i RUN.db [MORE.db|DIR ...] [--format text|csv|json] [-u sec|msec|usec|nsec] [--by-rank]",
		Short: "tables of the top kernels and of every domain from stored runs",
		Long: `summary reads ROCpd databases (rocprof-go's or rocprofv3's, merged or not) or directories
of CSV traces, and prints the top kernels, one table per domain (kernels, HIP and HSA API,
markers, memory copies and allocations) and the domain totals: calls, total, average, share,
min, max and sample standard deviation of the durations (nanoseconds; -u usec, msec or sec as
rocprofv3's --summary-units; JSON stays in nanoseconds). When the runs collected counters
(ROCpd databases), a counter table follows: per kernel and counter, the dispatches that have it
and the total, average, min and max of its per-dispatch values. When the runs sampled PCs
(--pc-sampling-*), the hottest instructions follow: per kernel its most sampled instructions
(--top-instructions, 10 by default) with their code-object offset (ROCpd; from CSV runs the
instruction text is the key, the CSV having no PC), text, share of the kernel's samples and, for
stochastic samples, the top reasons the wave issued nothing. --by-rank repeats the tables per
rank (MPI/SLURM rank from the process environment) or process. Several inputs are summed.

  rocprof-go summary -i results.db
  rocprof-go summary -i results.db -u usec
  rocprof-go summary -i all.db --by-rank --format csv -o summary.csv`,
		Args: func(cmd *cobra.Command, args []string) error {
			inputs = append(inputs, args...)
			if len(inputs) == 0 {
				return &usageError{"summary needs input, e.g. rocprof-go summary -i results.db"}
			}
			if !slices.Contains(summary.Formats, format) {
				return &usageError{fmt.Sprintf("unknown --format %q: use one of %s", format, strings.Join(summary.Formats, ", "))}
			}
			if !slices.Contains(summary.Units, units) {
				return &usageError{fmt.Sprintf("unknown -u/--summary-units %q: use one of %s", units, strings.Join(summary.Units, ", "))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			// Ranks torn down before their outputs were complete: their
			// rescued spools, converted to CSV beside the others.
			inputs, cleanup, err := withRescued(cmd.ErrOrStderr(), inputs)
			defer cleanup()
			if err != nil {
				return err
			}
			s, err := summary.Build(inputs, opt)
			if err != nil {
				return err
			}
			if toStdout(output) && format != "json" {
				s = s.ForTerminal() // JSON escapes control characters itself
			}
			return writeAnalysisOutput(cmd.OutOrStdout(), output, func(w io.Writer) error { return summary.WriteUnits(w, s, format, units) })
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&inputs, "input", "i", nil, "ROCpd databases or CSV output directories (repeatable; also as arguments)")
	f.StringVarP(&format, "format", "f", "text", "text, csv or json")
	f.StringVarP(&output, "output", "o", "", "write to this file instead of stdout")
	f.StringVarP(&units, "summary-units", "u", "nsec", "duration unit of the text and CSV tables: "+strings.Join(summary.Units, ", "))
	f.BoolVar(&opt.ByRank, "by-rank", false, "also one set of tables per rank or process")
	f.IntVar(&opt.Top, "top", 10, "rows in the top-kernels table")
	f.IntVar(&opt.TopInstructions, "top-instructions", 10, "most sampled instructions listed per kernel (PC sampling)")
	f.BoolVar(&opt.AllowIncomplete, "allow-incomplete", false, "also read runs whose run.json says they timed out, crashed or lost records")
	return cmd
}

// writeAnalysisOutput runs write on stdout, or on a file that appears under
// its name only when complete (internal/atomicfile: a temporary file beside
// it, renamed; a symlink at path is replaced, never followed).
func writeAnalysisOutput(stdout io.Writer, path string, write func(io.Writer) error) error {
	if toStdout(path) {
		return write(stdout)
	}
	return atomicfile.Write(path, atomicfile.Public, write)
}

// toStdout reports whether an analysis's -o sends it to standard output,
// where names are printed with their control characters escaped.
func toStdout(path string) bool { return path == "" || path == "-" }

// rescuedRun reports whether the run that wrote a file (its manifest's
// host, rocprof-go pid and start) is one of the rescued or orphaned runs:
// its records are in the rescue too, and are read from there alone. The
// identity is the process's, not the file's name, which an -o with
// %nid% or %env{}% (or an orphan, whose -o is unknown) does not let
// rescuedFile rebuild. A rescue starts after its run did: a later run of
// a rocprof-go with the same pid is not taken for it.
func rescuedRun(us []launch.Unconverted, id analysis.RunID) bool {
	if id.PID == 0 {
		return false
	}
	for _, u := range us {
		m := &u.Manifest
		if m.PID != id.PID || m.Host != id.Host {
			continue
		}
		if m.Started.IsZero() || id.Started.IsZero() || !m.Started.Before(id.Started.Add(-time.Second)) {
			return true
		}
	}
	return false
}
