package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rocprof-go/rocprof-go/internal/launch"
)

func init() { registerSubcommand(newLibDirCmd) }

// newLibDirCmd is the hidden `rocprof-go libdir`: it unpacks the embedded
// libraries (as a run would) and prints their directory, for Go programs
// that use pkg/rocprof outside this repository and embed none.
func newLibDirCmd() *cobra.Command {
	return &cobra.Command{
		Use:    launch.LibDirCommand,
		Short:  "print the directory of the unpacked injected libraries",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			libs, err := launch.EmbeddedLibraries()
			if err != nil {
				return err
			}
			if libs.Warning != "" {
				// A private per-process copy would be gone when we exit.
				return fmt.Errorf("%s: set %s instead", libs.Warning, launch.LibDirEnv)
			}
			fmt.Fprintln(cmd.OutOrStdout(), libs.Dir)
			return nil
		},
	}
}
