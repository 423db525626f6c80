package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rocprof-go/rocprof-go/internal/analysis/imbalance"
	"github.com/rocprof-go/rocprof-go/internal/duckdb"
	"github.com/rocprof-go/rocprof-go/internal/jobdir"
	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

func init() { registerSubcommand(newJobCmd) }

func newJobCmd() *cobra.Command {
	var asJSON, imb, printQuery bool
	var format string
	cmd := &cobra.Command{
		Use:   "job DIR [--json] | job --imbalance DIR [--format text|csv|json]",
		Short: "show the ranks of the job that wrote into an output directory",
		Long: `job reads the manifests the ranks of a job (started by mpirun, srun, ...) wrote into
DIR, one per rank and without any lock (DIR/.rocprof-go-job-<uid>/<job>/rank-<N>.json), and prints one
line per rank: its host and pid, how it ended, its records, and its node's clock offset from the
first rank's node (what lines the nodes up in a merged timeline). With --json it prints the
manifests as one JSON array. summary and compare given DIR read the same manifests.

With --imbalance it reads the job's hive-partitioned Parquet kernel table instead
(DIR/domain=kernels/rank=<n>/host=<host>/*.parquet: every rank run with -f parquet
--parquet-hive -d DIR) with the embedded DuckDB, and prints per kernel and launch shape (grid,
workgroup) the dispatches, the ranks that ran it, the minimum, median and maximum over those
ranks of each rank's total time, the slowest rank and the max/median ratio (docs/mpi.md).

  srun -n 4 rocprof-go --kernel-trace -d prof -o '%rank%_results' -- ./app
  rocprof-go job prof
  srun -n 4 rocprof-go --kernel-trace -f parquet --parquet-hive -d prof -- ./app
  rocprof-go job --imbalance prof --format csv`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.ExactArgs(1)(cmd, args); err != nil {
				return err
			}
			if !slices.Contains(imbalance.Formats, format) {
				return &usageError{fmt.Sprintf("unknown --format %q: use one of %s", format, strings.Join(imbalance.Formats, ", "))}
			}
			if cmd.Flags().Changed("format") && !imb {
				return &usageError{"--format is --imbalance's: the ranks' list is text, or JSON with --json"}
			}
			if printQuery && !imb {
				return &usageError{"--print-query prints --imbalance's query: give both"}
			}
			if imb && asJSON {
				return &usageError{"--imbalance takes --format json, not --json"}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if imb && printQuery {
				_, hosts, err := imbalance.Layout(args[0])
				if err != nil {
					return err
				}
				if imbalance.HasGlobSyntax(args[0]) {
					// A pattern naming the directory would match other
					// paths: the query names the files relative to it.
					_, err = fmt.Fprintf(cmd.OutOrStdout(), "-- run in %q (cd there first): its path holds glob characters\n%s;\n",
						args[0], imbalance.Query(imbalance.RelGlob, hosts))
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s;\n", imbalance.Query(imbalance.Glob(args[0]), hosts))
				return err
			}
			if imb {
				// The engine this binary embeds, unpacked into the library
				// cache (or elsewhere when it is refused), unless
				// ROCPROF_GO_DUCKDB names another.
				engine, done, err := imbalanceEngine(cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				defer done()
				t, err := imbalance.Build(cmd.Context(), args[0], duckdb.Options{Engine: engine})
				if err != nil {
					return err
				}
				return imbalance.Write(cmd.OutOrStdout(), t, format)
			}
			j, err := rocprof.LoadJob(args[0])
			if err != nil {
				return err
			}
			if j == nil {
				return fmt.Errorf("%s holds no job's manifests (%s/%s/): its runs were not started by a launcher (mpirun, srun), or wrote elsewhere", args[0], args[0], jobdir.OwnName())
			}
			for _, why := range append(j.Warnings, j.Refused...) {
				fmt.Fprintf(cmd.ErrOrStderr(), "rocprof-go: warning: %s\n", why)
			}
			if asJSON {
				b, err := json.MarshalIndent(j.Ranks, "", "  ")
				if err != nil {
					return err
				}
				if _, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", b); err != nil {
					return err
				}
			} else if err := printJob(cmd.OutOrStdout(), j); err != nil {
				return err
			}
			return incompleteJob(args[0], j)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the ranks' manifests as a JSON array")
	cmd.Flags().BoolVar(&imb, "imbalance", false, "the cross-rank imbalance table of the job's hive Parquet kernel table (DuckDB)")
	cmd.Flags().BoolVar(&printQuery, "print-query", false, "with --imbalance: print its SQL (for the duckdb CLI, Spark or Trino) instead of running it")
	cmd.Flags().StringVar(&format, "format", "text", "--imbalance's format: text, csv or json")
	return cmd
}

// printJob prints a job's ranks, a line each.
func printJob(w io.Writer, j *rocprof.Job) error {
	hosts := map[string]bool{}
	failed := 0
	first := j.Ranks[0]
	for _, m := range j.Ranks {
		hosts[m.Host] = true
		if m.ExitStatus != 0 || m.TimedOut || m.Error != "" {
			failed++
		}
	}
	r := first.Rank
	name := "job"
	if r != nil {
		name = fmt.Sprintf("job %q (%s)", r.Job, r.Launcher)
	}
	of := ""
	if j.Size > 0 {
		of = fmt.Sprintf(" of %d", j.Size)
	}
	fmt.Fprintf(w, "%s: %d ranks%s on %d hosts, %d failed", name, len(j.Ranks), of, len(hosts), failed)
	if len(j.Missing) > 0 {
		fmt.Fprintf(w, ", %d missing (rank %s)", len(j.Missing), jobdir.Ranges(j.Missing))
	} else if !j.SharedDir && j.Size > len(j.Ranks) {
		fmt.Fprint(w, " (the job's other ranks wrote into their own output directories)")
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rank\thost\tpid\texit\trecords\tclock offset (ms)\t")
	for _, m := range j.Ranks {
		rank := "?"
		if m.Rank != nil {
			rank = m.Rank.Rank
		}
		exit := strconv.Itoa(m.ExitStatus)
		if m.TimedOut {
			exit += " (timed out)"
		} else if m.Error != "" && m.ExitStatus == 0 {
			exit = "failed"
		}
		var records int64
		for _, n := range m.DomainRecords {
			records += n
		}
		off := float64(m.ClockOffsetNs-first.ClockOffsetNs) / 1e6
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%.3f\t\n", rank, m.Host, m.PID, exit, records, off)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var errs []string
	for _, m := range j.Ranks {
		if m.Error != "" && m.Rank != nil {
			errs = append(errs, "rank "+m.Rank.Rank+": "+m.Error)
		}
	}
	sort.Strings(errs)
	for _, e := range errs {
		fmt.Fprintln(w, e)
	}
	return nil
}

// incompleteJob fails the job command when ranks below the job's size
// left no manifest, or a manifest was refused: a CI gate reading the job
// must not pass on part of it. The table (or JSON) is printed first.
func incompleteJob(dir string, j *rocprof.Job) error {
	var why []string
	if len(j.Missing) > 0 {
		why = append(why, fmt.Sprintf("%d of its %d ranks left no manifest (rank %s): their rocprof-go was killed or failed before writing it, or they wrote into another directory",
			len(j.Missing), j.Size, jobdir.Ranges(j.Missing)))
	}
	if len(j.Refused) > 0 {
		why = append(why, fmt.Sprintf("%d file(s) named like a rank's manifest were refused (warnings above)", len(j.Refused)))
	}
	if why == nil {
		return nil
	}
	return fmt.Errorf("the job in %s is incomplete: %s", dir, strings.Join(why, "; "))
}
