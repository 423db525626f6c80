package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

func init() { registerSubcommand(newCompareCmd) }

// exitRegression is compare's status when the comparison fails.
const exitRegression = 3

func newCompareCmd() *cobra.Command {
	var metric, threshold, minDelta, format, output string
	var domains, gate []string
	var alpha float64
	var failOnMissing, allowIncomplete bool
	cmd := &cobra.Command{
		Use:   "compare BASE NEW | compare BASE... -- NEW...",
		Short: "compare runs kernel by kernel and API by API; exit 3 on a regression",
		Long: `compare reads two sides of runs — run directories (found through their run.json: the ROCpd
database or CSV traces the run wrote), ROCpd databases, or CSV output directories — and compares
every kernel per launch configuration (grid, block, LDS, scratch), every copy per direction and
size class, every API function, marker and allocation operation.

Give one run per side (compare BASE NEW) or several (compare B1 ... B8 -- N1 ... N8): 8 runs per
side, recorded interleaved on one machine, is what the test needs. With two or more runs per side
each run is one sample: its median (--metric) of the entry's durations; the sides are tested with
the Mann–Whitney U test, which assumes no distribution, and Holm's procedure keeps the chance that
identical runs flag any gated entry below --alpha. With one run on a side the calls are pooled, so
run-to-run variation goes unseen, and an entry with fewer than 8 calls on a side is
"insufficient data", never a regression.

An entry regresses when its adjusted p is below --alpha, its metric rises by more than
--threshold and by more than --min-delta. Only the gated domains (--gate, default kernel and
copy: the GPU's) fail the comparison; regressions elsewhere are reported as "not gated". Entries
found on one side only are reported with their likely cause (renamed, truncated with -T, another
launch configuration, a filter) and fail the comparison with --fail-on-missing.

Exit status: 0 no regression, 3 regression (or missing entries with --fail-on-missing), 1 error,
2 usage. --format markdown prints the table a CI job posts as a comment; junit writes one test
case per entry, regressions as failures.

  rocprof-go compare base.db new.db
  rocprof-go compare --format markdown -o comment.md base-1 base-2 base-3 base-4 base-5 base-6 base-7 base-8 -- new-1 new-2 new-3 new-4 new-5 new-6 new-7 new-8

Options go before the runs: everything after -- is the new side.`,
		Args: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			switch {
			case dash < 0 && len(args) != 2:
				return &usageError{"compare takes two runs (compare BASE NEW) or two sides of runs (compare BASE... -- NEW...)"}
			case dash == 0 || (dash > 0 && dash == len(args)):
				return &usageError{"compare BASE... -- NEW...: each side needs at least one run"}
			}
			if !slices.Contains(rocprof.CompareFormats, format) && format != "md" {
				return &usageError{fmt.Sprintf("unknown --format %q: use one of %s", format, strings.Join(rocprof.CompareFormats, ", "))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opt, err := compareOptions(metric, threshold, minDelta, alpha, domains, gate)
			if err != nil {
				return err
			}
			opt.FailOnMissing, opt.AllowIncomplete = failOnMissing, allowIncomplete
			base, next := args[:1], args[1:]
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				base, next = args[:dash], args[dash:]
			}
			rep, err := rocprof.Compare(base, next, opt)
			if err != nil {
				return err
			}
			if len(rep.Incomplete) > 0 {
				// A gate must not pass on runs that are not the app's whole run.
				return errors.New(strings.Join(rep.ForTerminal().Incomplete, "\nrocprof-go: error: "))
			}
			shown := rep
			if toStdout(output) && format != "json" {
				shown = rep.ForTerminal() // JSON escapes control characters itself
			}
			if err := writeAnalysisOutput(cmd.OutOrStdout(), output, func(w io.Writer) error { return rocprof.WriteCompareReport(w, shown, format) }); err != nil {
				return err
			}
			if output != "" || format != "text" {
				// The text report prints them itself; elsewhere the user
				// would not see them.
				for _, w := range rep.ForTerminal().Warnings {
					fmt.Fprintln(cmd.ErrOrStderr(), "rocprof-go: note: "+w)
				}
			}
			if rep.Failed {
				return &exitStatusError{status: exitRegression}
			}
			return nil
		},
	}
	def := rocprof.DefaultCompareOptions()
	f := cmd.Flags()
	f.StringVarP(&metric, "metric", "m", string(def.Metric), "what each run's durations of an entry are summed up by: median, mean, p95 or total")
	f.StringVarP(&threshold, "threshold", "t", fmt.Sprintf("%g%%", 100*def.Threshold), "smallest relative change that counts")
	f.StringVar(&minDelta, "min-delta", time.Duration(def.MinDelta).String(), "smallest absolute change that counts (e.g. 100ns, 2us)")
	f.Float64Var(&alpha, "alpha", def.Alpha, "significance level of the Mann–Whitney U test")
	f.StringVarP(&format, "format", "f", "text", "text, markdown, json or junit")
	f.StringVarP(&output, "output", "o", "", "write the report to this file instead of stdout")
	f.StringSliceVar(&domains, "domain", nil, "compare only these domains: kernel, copy, hip, hsa, marker, alloc, scratch, rccl (repeatable)")
	f.StringSliceVar(&gate, "gate", nil, "domains whose regressions fail the comparison (default kernel,copy; e.g. --gate kernel,copy,hip, or all)")
	f.BoolVar(&failOnMissing, "fail-on-missing", false, "fail (exit 3) when an entry is found on one side only")
	f.BoolVar(&allowIncomplete, "allow-incomplete", false, "also compare runs whose run.json says they timed out, crashed or lost records (refused otherwise)")
	return cmd
}

// compareOptions checks and converts compare's flags.
func compareOptions(metric, threshold, minDelta string, alpha float64, domains, gate []string) (rocprof.CompareOptions, error) {
	opt := rocprof.DefaultCompareOptions()
	var err error
	if opt.Metric, err = rocprof.ParseCompareMetric(metric); err != nil {
		return opt, &usageError{err.Error()}
	}
	if opt.Threshold, err = rocprof.ParseCompareThreshold(threshold); err != nil {
		return opt, &usageError{err.Error()}
	}
	d, err := time.ParseDuration(strings.TrimSpace(minDelta))
	if err != nil || d < 0 {
		return opt, &usageError{fmt.Sprintf("bad --min-delta %q: give a duration such as 100ns or 2us", minDelta)}
	}
	opt.MinDelta = float64(d.Nanoseconds())
	if !(alpha > 0 && alpha < 1) {
		return opt, &usageError{fmt.Sprintf("--alpha must be between 0 and 1, not %g", alpha)}
	}
	opt.Alpha = alpha
	if opt.Domains, err = rocprof.ParseCompareDomains(domains); err != nil {
		return opt, &usageError{err.Error()}
	}
	if len(gate) > 0 {
		if opt.Gate, err = rocprof.ParseCompareDomains(gate); err != nil {
			return opt, &usageError{"--gate: " + err.Error()}
		}
	}
	return opt, nil
}
