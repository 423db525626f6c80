package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/options"
)

// Exit statuses of the CLI itself (the app's own status passes through).
const (
	exitError = 1 // a fatal error: bad input file, unwritable output, ...
	exitUsage = 2 // a mistake on the command line, as argparse exits
)

// newRootCmd builds the command tree. Profiling (`rocprof-go [options] -- app`)
// is parsed by internal/options with rocprofv3's argparse rules; the
// subcommands are ordinary cobra commands.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "rocprof-go [options] -- <app> [args...]",
		Short:         "GPU profiler for AMD GPUs with rocprofv3's command line",
		SilenceUsage:  true,
		SilenceErrors: true,
		// Profiling options follow argparse rules that cobra's flag parser
		// cannot express ([BOOL] values, multi-word lists); see runProfile.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runProfileErr(args)
		},
	}
	root.SetHelpFunc(func(cmd *cobra.Command, _ []string) {
		if cmd == root {
			writeHelp(os.Stdout, root)
			return
		}
		fmt.Fprint(os.Stdout, cmd.UsageString())
		if cmd.Long != "" {
			fmt.Fprintln(os.Stdout, "\n"+cmd.Long)
		}
	})
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err.Error()} })
	for _, f := range subcommandFactories {
		root.AddCommand(f())
	}
	return root
}

// execute runs the CLI and returns the process exit status.
func execute(args []string) int {
	root := newRootCmd()
	if len(args) > 0 && isSubcommand(root, args[0]) {
		root.SetArgs(args)
		return exitCode(root.Execute())
	}
	return runProfile(args)
}

func isSubcommand(root *cobra.Command, name string) bool {
	if name == "help" {
		return true
	}
	for _, c := range root.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return true
		}
	}
	return false
}

// exitStatusError carries the app's exit status through cobra's error return.
type exitStatusError struct{ status int }

func (e *exitStatusError) Error() string { return fmt.Sprintf("exit status %d", e.status) }

// exitCode prints err (if any) as one line and maps it to an exit status.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var es *exitStatusError
	if errors.As(err, &es) {
		return es.status
	}
	fmt.Fprintln(os.Stderr, "rocprof-go: error:", err)
	var ue *options.UsageError
	var nf *launch.AppNotFoundError
	switch {
	case errors.As(err, &ue), errors.Is(err, options.ErrNoApplication), isCobraUsage(err):
		return exitUsage
	case errors.As(err, &nf):
		return launch.ExitNotFound
	}
	return exitError
}

// usageError marks errors of subcommand arguments (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func isCobraUsage(err error) bool {
	var u *usageError
	return errors.As(err, &u)
}
