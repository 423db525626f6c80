package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocprof-go/rocprof-go/internal/analysis/compare"
)

func init() { registerSubcommand(newCompareCmd) }

// exitRegression is compare's status when a name got slower.
const exitRegression = 3

func newCompareCmd() *cobra.Command {
	var metric, threshold, format, output string
	var domains []string
	var sigmas float64
	cmd := &cobra.Command{
		Use:   "compare BASE NEW [--metric total|mean|median|p95] [--threshold 5%] [--format text|markdown|json|junit]",
		Short: "compare two runs kernel by kernel and API by API; exit 3 on a regression",
		Long: `compare reads two runs — ROCpd databases or rocprof-go/rocprofv3 output directories with
kernel_trace.csv, hip_api_trace.csv, ... files — and compares every kernel, API function,
marker, copy direction and allocation operation by the chosen metric of its durations.

A name regresses when its metric rises by more than --threshold AND by more than three standard
errors estimated from the spread of its repeated calls (sqrt(s1²/n1 + s2²/n2) for the mean; n·s²
terms for the total; the normal-approximation factors 1.25 and 2.11 for the median and p95), so
a few noisy dispatches do not fail a build. A fall by the same rules is an improvement. Names
present in one run only are reported as new or removed.

Exit status: 0 no regression, 3 regression, 1 error, 2 usage. --format markdown prints the table
a CI job posts as a comment; junit writes one test case per name, regressions as failures.

  rocprof-go compare baseline.db results.db --threshold 5% --format markdown > comment.md`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return &usageError{"compare takes two runs, e.g. rocprof-go compare base.db new.db"}
			}
			if !slices.Contains(compare.Formats, format) && format != "md" {
				return &usageError{fmt.Sprintf("unknown --format %q: use one of %s", format, strings.Join(compare.Formats, ", "))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var opt compare.Options
			var err error
			if opt.Metric, err = compare.ParseMetric(metric); err != nil {
				return &usageError{err.Error()}
			}
			if opt.Threshold, err = compare.ParseThreshold(threshold); err != nil {
				return &usageError{err.Error()}
			}
			if opt.Domains, err = compare.ParseDomains(domains); err != nil {
				return &usageError{err.Error()}
			}
			if sigmas <= 0 {
				return &usageError{fmt.Sprintf("--sigmas must be positive, not %g", sigmas)}
			}
			opt.Sigmas = sigmas
			base, err := compare.Load(args[0])
			if err != nil {
				return err
			}
			next, err := compare.Load(args[1])
			if err != nil {
				return err
			}
			rep := compare.Compare(base, next, opt)
			if err := writeAnalysisOutput(cmd.OutOrStdout(), output, func(w io.Writer) error { return compare.Write(w, rep, format) }); err != nil {
				return err
			}
			if rep.Regressions > 0 {
				return &exitStatusError{status: exitRegression}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&metric, "metric", "m", "mean", "what to compare per name: total, mean, median or p95 duration")
	f.StringVarP(&threshold, "threshold", "t", "5%", "smallest relative rise that counts as a regression")
	f.StringVarP(&format, "format", "f", "text", "text, markdown, json or junit")
	f.StringVarP(&output, "output", "o", "", "write the report to this file instead of stdout")
	f.StringSliceVar(&domains, "domain", nil, "compare only these domains: kernel, hip, hsa, marker, copy, alloc, scratch, rccl (repeatable)")
	f.Float64Var(&sigmas, "sigmas", 3, "standard errors a change must exceed to count")
	return cmd
}
