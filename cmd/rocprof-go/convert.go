package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocprof-go/rocprof-go/internal/analysis/convert"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/output"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
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
		Use:   "convert -i RUN.db|SPOOL_DIR [MORE ...] -f FORMAT... [-d DIR] [-o PREFIX]",
		Short: "write other output formats from ROCpd databases or kept spools without re-running the app",
		Long: `convert reads ROCpd databases — rocprof-go's or rocprofv3's, single or merged — back into
the records a run produces and writes them with the same writers a run uses, so the files are
those the run would have written with -f FORMAT: DIR/PREFIX_kernel_trace.csv, ..._results.json,
..._results.pftrace, ... (default ./rocpd-output-data/out_<name>, as rocpd convert). Several
databases go into one set of files; a PREFIX with placeholders is resolved per process of the
inputs, as in a run: -o 'rank%rank%' gives one set per rank (%pid% per process, %hostname% per node).

An input may be an output directory holding the data of ranks a launcher tore down before
their outputs were complete (DIR/.rocprof-go-unconverted-<uid>/, docs/mpi.md "Teardown"):
each such rank is converted and named ("recovered rank 2 (host, pid 1234): 1000001 records"),
and without -f, -d and -o the formats and file prefix its run was given are used and the files
go to DIR, so that "rocprof-go convert -i DIR" writes the files the rank would have written. A
rank whose rocprof-go was killed while its app still ran left only its run directory there
(.rocprof-go-unconverted-<uid>/rocprof-go-run-*): it is converted too, named from its spools,
with no exit status (it has no formats of its own to default to: give -f). Only your own
rescues are read (another user's are named and passed over), never through a symbolic link.

An input may also be a spool directory a run kept — when it could not write its outputs (a
full disk) or rocprof-go was killed, it names the directory, e.g.
/dev/shm/rocprof-go-run-XXXX/pass_1 — or a run directory holding such pass_N directories, or
single .spool files: every record they hold is converted.

Formats: ` + convertFormatNames() + ` (perfetto is accepted for pftrace). Not recoverable from a database: the agent_info.csv columns
beyond ids and names (the database does not store them), and --kernel-rename names.

  rocprof-go convert -i results.db -f csv pftrace -d converted -o run1`,
		Args: func(cmd *cobra.Command, args []string) error {
			// -f takes several formats, space separated, as rocpd's and
			// rocprofv3's -f do: "-f csv pftrace". The flag parser sees the
			// later ones as arguments; an argument that names a format and
			// is not an existing file is one.
			for _, a := range args {
				if _, err := os.Stat(a); err != nil && isFormatName(a) {
					formats = append(formats, a)
					continue
				}
				inputs = append(inputs, a)
			}
			if len(inputs) == 0 {
				return &usageError{"convert needs input databases, e.g. rocprof-go convert -i results.db -f csv"}
			}
			if len(formats) == 0 {
				// The data of ranks torn down before their outputs were
				// complete: by default the formats they were asked for.
				for _, in := range inputs {
					rec, ok, _ := launch.FindUnconverted(in)
					rec.Close()
					if ok && len(rec.Found) == 0 {
						return noRescueError(in, rec)
					}
					if ok {
						formats = rescuedFormats(rec.Found)
						break
					}
				}
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
			if _, err := output.ParseAgentIndex(opt.AgentIndex); err != nil {
				return &usageError{err.Error()}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if st, err := os.Stat(opt.Dir); err == nil && !st.IsDir() {
				return fmt.Errorf("output directory %s is a file: choose another -d", opt.Dir)
			}
			var dbs []*rocpdread.DB
			defer func() {
				for _, db := range dbs {
					db.Close()
				}
			}()
			var rescued []launch.Unconverted
			var unread []string
			for _, in := range inputs {
				// An output directory holding the data of ranks torn down
				// before their outputs were complete (.rocprof-go-unconverted-<uid>):
				// their spools, said by rank. Only this user's are read.
				rec, ok, err := launch.FindUnconverted(in)
				if err != nil {
					return err
				}
				defer rec.Close() // the spools' paths go through its descriptors
				if ok {
					if len(rec.Found) == 0 {
						return noRescueError(in, rec)
					}
					warnRescues(cmd.ErrOrStderr(), rec)
					if len(rescued) == 0 {
						if err := setRescuedDefaults(cmd, &opt, rec.Found); err != nil {
							return err
						}
					}
					for _, u := range rec.Found {
						opt.Spools = append(opt.Spools, u.Spools...)
						opt.Spools = append(opt.Spools, u.Partial...)
					}
					rescued = append(rescued, rec.Found...)
					unread = append(unread, rec.Unread...)
					continue
				}
				// A spool directory a run kept (its outputs failed, or the
				// CLI was killed), or spool files, are read as they are.
				if spools, ok, err := spoolInput(in); ok {
					if err != nil {
						return err
					}
					opt.Spools = append(opt.Spools, spools...)
					continue
				}
				db, err := rocpdread.Open(in)
				if err != nil {
					return err
				}
				dbs = append(dbs, db)
			}
			res, err := convert.Run(dbs, opt)
			if err != nil {
				return err
			}
			lostErr := reportRescued(cmd.ErrOrStderr(), rescued, unread)
			if res.Spools == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "rocprof-go: warning: the databases hold no process: nothing converted")
			}
			if !quiet {
				for _, f := range res.CSV {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: %d rows\n", launch.Printable(f.Path), f.Records)
				}
				for _, p := range res.Paths {
					fmt.Fprintln(cmd.OutOrStdout(), launch.Printable(p)) // names may hold a spool's values (%rank%, %env{}%)
				}
			}
			// Kept spools that lost records as they were recorded (a full
			// or non-reserving spool file system) fail the conversion too.
			if res.Lost != nil && lostErr != nil {
				lostErr = fmt.Errorf("%w\n%w", res.Lost, lostErr)
			} else if res.Lost != nil {
				lostErr = res.Lost
			}
			// Spools cut short while they were read: the files hold what
			// was read; the rest of their records is lost.
			return errors.Join(lostErr, res.Torn)
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

// spoolInput reports whether path is a kept spool directory, a run
// directory of pass_N spool directories, or a spool file, with its spools.
func spoolInput(path string) ([]string, bool, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, false, nil // rocpdread.Open says what is wrong
	}
	if !st.IsDir() {
		if strings.HasSuffix(path, ".spool") {
			return []string{path}, true, nil
		}
		return nil, false, nil
	}
	spools, err := tracing.List(path)
	if err != nil {
		return nil, true, err
	}
	if len(spools) == 0 {
		// Listed, not globbed: a '[' or '\' in path is no pattern.
		entries, _ := os.ReadDir(path)
		for _, e := range entries {
			if !e.IsDir() || !strings.HasPrefix(e.Name(), "pass_") {
				continue
			}
			s, err := tracing.List(filepath.Join(path, e.Name()))
			if err != nil {
				return nil, true, err
			}
			spools = append(spools, s...)
		}
	}
	if len(spools) == 0 {
		return nil, true, fmt.Errorf("%s holds no rocprof-go spools (rpg-*.spool, directly or in pass_N directories): give a spool directory a run kept, or a ROCpd database", path)
	}
	return spools, true, nil
}

// isFormatName reports whether s names an output format convert writes.
func isFormatName(s string) bool {
	if s == "perfetto" {
		return true
	}
	for _, w := range output.Writers {
		if string(w.Format) == s {
			return true
		}
	}
	return false
}
