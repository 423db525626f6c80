package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocprof-go/rocprof-go/internal/analysis/convert"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpd"
)

func init() { registerSubcommand(newConvertCmd) }

// convertFormats are the -f choices of convert.
var convertFormats = []string{"csv"}

func newConvertCmd() *cobra.Command {
	var inputs, formats []string
	var dir, prefix, agentIndex string
	var opt convert.Options
	var quiet bool
	cmd := &cobra.Command{
		Use:   "convert -i RUN.db [MORE.db ...] -f FORMAT... [-d DIR] [-o PREFIX]",
		Short: "write other output formats from ROCpd databases without re-running the app",
		Long: `convert reads ROCpd databases — rocprof-go's or rocprofv3's, single or merged — and writes
the files a run with -f FORMAT would have written, into DIR/PREFIX_<name>.<ext>
(default ./rocpd-output-data/out_<name>, as rocpd convert). Several databases go into one set
of files, process after process.

csv writes ` + convert.FileNames() + `,
with rocprofv3's columns; domains without records get no file.

  rocprof-go convert -i results.db -f csv -d csv-out -o run1`,
		Args: func(cmd *cobra.Command, args []string) error {
			inputs = append(inputs, args...)
			if len(inputs) == 0 {
				return &usageError{"convert needs input databases, e.g. rocprof-go convert -i results.db -f csv"}
			}
			if len(formats) == 0 {
				return &usageError{"convert needs -f FORMAT: one or more of " + strings.Join(convertFormats, ", ")}
			}
			for _, f := range formats {
				if !slices.Contains(convertFormats, f) {
					return &usageError{fmt.Sprintf("convert cannot write format %q: use %s", f, strings.Join(convertFormats, ", "))}
				}
			}
			switch agentIndex {
			case "absolute", "relative", "type-relative":
			default:
				return &usageError{fmt.Sprintf("unknown --agent-index %q: use absolute, relative or type-relative", agentIndex)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opt.AgentIndex = agentIndex
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
			out := filepath.Join(dir, prefix)
			if st, err := os.Stat(dir); err == nil && !st.IsDir() {
				return fmt.Errorf("output directory %s is a file: choose another -d", dir)
			}
			for _, f := range formats {
				if f != "csv" {
					continue
				}
				written, err := convert.CSV(out, dbs, opt)
				if err != nil {
					return err
				}
				if len(written) == 0 {
					fmt.Fprintln(cmd.ErrOrStderr(), "rocprof-go: warning: the databases hold no records: no CSV file written")
				}
				if !quiet {
					for _, w := range written {
						fmt.Fprintf(cmd.OutOrStdout(), "%s: %d rows\n", w.Path, w.Rows)
					}
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&inputs, "input", "i", nil, "ROCpd databases (repeatable; also as arguments)")
	f.StringSliceVarP(&formats, "output-format", "f", nil, "formats to write: "+strings.Join(convertFormats, ", "))
	f.StringVarP(&dir, "output-directory", "d", "rocpd-output-data", "directory of the output files")
	f.StringVarP(&prefix, "output-file", "o", "out", "file name prefix: files are DIR/PREFIX_<name>.<ext>")
	f.StringVarP(&agentIndex, "agent-index", "A", "relative", "agent labels: absolute, relative or type-relative")
	f.BoolVarP(&opt.MangledKernels, "mangled-kernels", "M", false, "print raw (mangled) kernel symbol names")
	f.BoolVar(&opt.KernelRename, "kernel-rename", false, "name kernels by their enclosing ROCTx range where recorded")
	f.BoolVarP(&quiet, "quiet", "q", false, "print nothing on success")
	return cmd
}
