package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocprof-go/rocprof-go/internal/analysis/convert"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpd"
	"github.com/rocprof-go/rocprof-go/internal/output"
)

func init() { registerSubcommand(newConvertCmd) }

func convertFormatNames() string {
	names := make([]string, len(output.Writers))
	for i, w := range output.Writers {
		names[i] = string(w.Format)
	}
	return strings.Join(names, ", ")
}

func newConvertCmd() *cobra.Command {
	var inputs, formats []string
	var opt convert.Options
	var quiet bool
	cmd := &cobra.Command{
		Use:   "convert -i RUN.db [MORE.db ...] -f FORMAT... [-d DIR] [-o PREFIX]",
		Short: "write other output formats from ROCpd databases without re-running the app",
		Long: `convert reads ROCpd databases — rocprof-go's or rocprofv3's, single or merged — back into
the records a run produces and writes them with the same writers a run uses, so the files are
those the run would have written with -f FORMAT: DIR/PREFIX_kernel_trace.csv, ..._results.json,
..._results.pftrace, ... (default ./rocpd-output-data/out_<name>, as rocpd convert). Several
databases go into one set of files; a CSV prefix with %pid% gives one set per process.

Formats: ` + convertFormatNames() + ` (perfetto is accepted for pftrace). Not recoverable from a database: the agent_info.csv columns
beyond ids and names (the database does not store them), and --kernel-rename names.

  rocprof-go convert -i results.db -f csv pftrace -d converted -o run1`,
		Args: func(cmd *cobra.Command, args []string) error {
			inputs = append(inputs, args...)
			if len(inputs) == 0 {
				return &usageError{"convert needs input databases, e.g. rocprof-go convert -i results.db -f csv"}
			}
			if len(formats) == 0 {
				return &usageError{"convert needs -f FORMAT: one or more of " + convertFormatNames()}
			}
			for _, f := range formats {
				if f == "perfetto" { // rocpd convert's alias
					f = string(output.FormatPerfetto)
				}
				opt.Formats = append(opt.Formats, output.Format(f))
			}
			if err := output.ValidateFormats(opt.Formats); err != nil {
				return &usageError{err.Error()}
			}
			switch opt.AgentIndex {
			case "absolute", "relative", "type-relative":
			default:
				return &usageError{fmt.Sprintf("unknown --agent-index %q: use absolute, relative or type-relative", opt.AgentIndex)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if st, err := os.Stat(opt.Dir); err == nil && !st.IsDir() {
				return fmt.Errorf("output directory %s is a file: choose another -d", opt.Dir)
			}
			var dbs []*rocpd.DB
			defer func() {
				for _, db := range dbs {
					db.Close()
				}
			}()
			for _, in := range inputs {
				db, err := rocpd.Open(in)
				if err != nil {
					return err
				}
				dbs = append(dbs, db)
			}
			res, err := convert.Run(dbs, opt)
			if err != nil {
				return err
			}
			if res.Spools == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "rocprof-go: warning: the databases hold no process: nothing converted")
			}
			if !quiet {
				for _, f := range res.CSV {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: %d rows\n", f.Path, f.Records)
				}
				for _, p := range res.Paths {
					fmt.Fprintln(cmd.OutOrStdout(), p)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&inputs, "input", "i", nil, "ROCpd databases (repeatable; also as arguments)")
	f.StringSliceVarP(&formats, "output-format", "f", nil, "formats to write: "+convertFormatNames())
	f.StringVarP(&opt.Dir, "output-directory", "d", "rocpd-output-data", "directory of the output files")
	f.StringVarP(&opt.Prefix, "output-file", "o", "out", "file name prefix: files are DIR/PREFIX_<name>.<ext>")
	f.StringVarP(&opt.AgentIndex, "agent-index", "A", "relative", "agent labels: absolute, relative or type-relative")
	f.BoolVarP(&opt.Mangled, "mangled-kernels", "M", false, "print raw (mangled) kernel symbol names")
	f.BoolVarP(&opt.Truncate, "truncate-kernels", "T", false, "print kernel names without templates and arguments")
	f.BoolVar(&opt.Stats, "stats", false, "CSV: also write the *_stats.csv files")
	f.BoolVar(&opt.GroupByQueue, "group-by-queue", false, "Perfetto: one track per queue instead of per stream")
	f.BoolVar(&opt.ParquetHive, "parquet-hive", false, "Parquet: DIR/domain=<table>/rank=<n>/PREFIX-<pid>.parquet, one partition per rank")
	f.BoolVarP(&quiet, "quiet", "q", false, "print nothing on success")
	return cmd
}
