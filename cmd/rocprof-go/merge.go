package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
)

func init() { registerSubcommand(newMergeCmd) }

func newMergeCmd() *cobra.Command {
	var output string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "merge --output ALL.db RANK.db...",
		Short: "combine the ROCpd databases of several processes or ranks into one",
		Long: `merge copies every input's per-process tables (names ending in the process uuid) into
one file and defines the plain views (rocpd_kernel_dispatch, rocpd_region, ...) as UNION ALL over
all of them, the way rocpd stitches several databases: any SQLite client, rocprof-go summary,
compare and convert, and rocpd itself see all ranks at once. Data views stored in the inputs
(kernels, top, ...) are carried over. Rows stream from file to file, so memory stays flat
whatever the size. The output is written under a temporary name and appears only when complete.

  rocprof-go merge --output all.db out_rank*/results.db
  rocprof-go summary -i all.db --by-rank`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &usageError{"merge needs input databases, e.g. rocprof-go merge --output all.db rank*.db"}
			}
			if output == "" {
				return &usageError{"merge needs --output FILE.db"}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := rocpdread.Merge(context.Background(), output, args)
			if err != nil {
				return err
			}
			for _, w := range res.Warn {
				fmt.Fprintln(cmd.ErrOrStderr(), "rocprof-go: warning:", w)
			}
			if !quiet {
				fmt.Fprintf(cmd.OutOrStdout(), "merged %d process image(s) from %d file(s) into %s: %d kernel dispatches, %d regions, %d memory copies\n",
					res.Images, len(args), output, res.Rows["rocpd_kernel_dispatch"], res.Rows["rocpd_region"], res.Rows["rocpd_memory_copy"])
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "the merged database to write (replaced if it exists)")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print nothing on success")
	return cmd
}
