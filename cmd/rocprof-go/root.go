package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// execute runs the CLI and returns the process exit status.
func execute(args []string) int {
	root := &cobra.Command{Use: "rocprof-go", SilenceUsage: true, SilenceErrors: true}
	for _, f := range subcommandFactories {
		root.AddCommand(f())
	}
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "rocprof-go:", err)
		return 1
	}
	return 0
}
