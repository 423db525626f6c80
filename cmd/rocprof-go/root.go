package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/textdist"
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
		// Profiling never reaches cobra: execute hands every command line
		// whose first word is no subcommand to runProfile, which parses it
		// with internal/options (args.go: argparse's rules, [BOOL] values,
		// multi-word lists, which cobra's flag parser cannot express). So the
		// root has no RunE; cobra runs only the subcommands, `help` and
		// completion, and DisableFlagParsing hands completeProfile the words
		// of a profiling command line unparsed.
		DisableFlagParsing: true,
		// Any words: without this, cobra's completion would take the app
		// for an unknown subcommand.
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: completeProfile,
		// `completion` is ours (completion.go), listed with the others.
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
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
	root.SetErr(stderrDiag)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err.Error()} })
	for _, f := range subcommandFactories {
		root.AddCommand(f())
	}
	registerFlagCompletions(root)
	return root
}

// execute runs the CLI and returns the process exit status.
func execute(args []string) int {
	stderrDiag.setFormat(logFormatOf(args, os.LookupEnv))
	root := newRootCmd()
	if len(args) == 0 {
		writeShortUsage(stderrDiag, root)
		return exitUsage
	}
	if isSubcommand(root, args[0]) {
		root.SetArgs(args)
		return exitCode(root.Execute())
	}
	if err := misspelledSubcommand(root, args[0]); err != nil {
		return exitCode(err)
	}
	return runProfile(args)
}

func isSubcommand(root *cobra.Command, name string) bool {
	if name == "help" || isCompletionRequest(name) {
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
	fmt.Fprintln(stderrDiag, "rocprof-go: error:", err)
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

// misspelledSubcommand returns a usage error when the first word, which
// would otherwise be the application to profile, is no program on PATH but
// is close to a subcommand's name ("sumary"): running it would only end in
// "application not found", while the user most likely meant the command.
func misspelledSubcommand(root *cobra.Command, word string) error {
	if word == "" || strings.HasPrefix(word, "-") || strings.Contains(word, "/") {
		return nil
	}
	if _, err := exec.LookPath(word); err == nil {
		return nil // a real program: profile it
	}
	best, bestD := "", 1<<30
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() {
			continue
		}
		for _, name := range append([]string{c.Name()}, c.Aliases...) {
			d := textdist.Levenshtein(word, name)
			if len(word) >= 3 && strings.HasPrefix(name, word) {
				d = min(d, 1)
			}
			if d < bestD {
				best, bestD = name, d
			}
		}
	}
	if best == "" || bestD > 2 || bestD >= len(word) {
		return nil
	}
	return &usageError{fmt.Sprintf("unknown command %q: did you mean %q? (rocprof-go --help lists the commands; "+
		"to profile a program of that name, give its path: rocprof-go [options] -- ./%s)", word, best, word)}
}
