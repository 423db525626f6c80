package main

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rocprof-go/rocprof-go/internal/pipeline"
)

func init() { registerSubcommand(newBatchCmd) }

func newBatchCmd() *cobra.Command {
	var outDir string
	var keepGoing bool
	cmd := &cobra.Command{
		Use:   "batch FILE.yaml",
		Short: "profile a list of commands one after another, each into its own sub-directory",
		Long: `A batch file has a top-level "batch:" list. Each job has a name (its sub-directory),
a command (a list: never run through a shell), rocprof-go options, and optionally a working
directory, environment variables, a timeout and the exit status it is expected to end with:

  batch:
    - name: vadd
      command: [./vector_add, "1024"]
      options: [--kernel-trace, --stats, -f, csv]
      timeout: 60s
    - name: crash-check
      command: [./crashes]
      options: [--kernel-trace]
      expect_exit: 134

The batch stops at the first job whose exit status differs from its expect_exit (default 0)
unless --keep-going is given; it exits 1 if any job failed. A summary table is printed at the end.
Every job's options are checked before the first job starts: a mistake in any job stops the
batch before anything runs, naming the job.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &usageError{"batch takes one batch file, e.g. rocprof-go batch jobs.yaml"}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := pipeline.LoadBatch(args[0])
			if err != nil {
				return err
			}
			if outDir == "" {
				outDir, _ = os.Getwd()
			}
			opts := pipeline.Options{Progress: stderrDiag.progress()}
			// Every job's options are checked before the first job runs.
			if err := pipeline.CheckBatch(b, outDir, opts); err != nil {
				return err
			}
			log := newLogger(stderrDiag, "")
			// SIGINT/SIGTERM: the running job's app gets the signal (the
			// launcher forwards it) and ends with its data kept; the batch
			// starts no further job and exits 128+N.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
			defer signal.Stop(sigs)
			var got atomic.Value
			go func() {
				if s, ok := <-sigs; ok {
					got.Store(s)
					cancel()
				}
			}()
			opts.Log = log
			results, ok := pipeline.RunBatch(ctx, b, outDir, keepGoing, opts)
			pipeline.WriteBatchSummary(os.Stdout, results, len(b.Jobs))
			if s, stopped := got.Load().(os.Signal); stopped {
				pipeline.WriteBatchStopped(os.Stdout, s, results, len(b.Jobs))
				return &exitStatusError{status: 128 + int(s.(syscall.Signal))}
			}
			if !ok {
				return &exitStatusError{status: 1}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&outDir, "output-directory", "d", "", "where the jobs' sub-directories go (default: the current directory)")
	cmd.Flags().BoolVar(&keepGoing, "keep-going", false, "run the remaining jobs after one fails")
	return cmd
}
