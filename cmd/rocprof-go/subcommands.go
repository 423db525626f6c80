package main

import "github.com/spf13/cobra"

// subcommandFactories holds the constructors of every subcommand. Each
// subcommand's file registers itself from an init function, so adding one never
// touches root.go.
var subcommandFactories []func() *cobra.Command

// registerSubcommand adds a subcommand constructor; call it from init.
func registerSubcommand(newCmd func() *cobra.Command) {
	subcommandFactories = append(subcommandFactories, newCmd)
}
