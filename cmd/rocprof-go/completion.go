package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocprof-go/rocprof-go/internal/analysis/summary"
	"github.com/rocprof-go/rocprof-go/internal/counters"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/topology"
)

func init() { registerSubcommand(newCompletionCmd) }

// completionShells are the shells `rocprof-go completion` writes scripts for.
var completionShells = []string{"bash", "zsh", "fish"}

// newCompletionCmd prints a shell's completion script. The scripts call
// back into `rocprof-go __complete ...` (cobra's protocol), so the words
// offered are computed when the user presses TAB: the counters of the
// architecture on the command line, the subcommands of this binary.
func newCompletionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "print the shell completion script (options, subcommands, formats, counter names)",
		Long: `Prints a script that completes rocprof-go's options and their values (-f formats, --pmc
counter names of the --virtual-gpu architecture or of this machine's GPU, gfx90a when there
is none; --virtual-gpu architectures, choices of every option), the subcommands and their flags,
and the application after "--".

  rocprof-go completion bash

Load it into the current bash with: source <(rocprof-go completion bash). To keep it, save the
script as ~/.local/share/bash-completion/completions/rocprof-go (bash, with the bash-completion
package), as _rocprof-go in a directory of zsh's $fpath (zsh), or as
~/.config/fish/completions/rocprof-go.fish (fish).`,
		ValidArgs: completionShells,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 || !slices.Contains(completionShells, args[0]) {
				return &usageError{fmt.Sprintf("completion takes one shell: %s (e.g. rocprof-go completion bash)", strings.Join(completionShells, ", "))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			root, out := cmd.Root(), cmd.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(out, true)
			case "zsh":
				return root.GenZshCompletion(out)
			default:
				return root.GenFishCompletion(out, true)
			}
		},
	}
}

// isCompletionRequest tells whether args are a completion script's call
// back into the binary: cobra adds these hidden commands only when it
// executes, so the router cannot find them among root.Commands().
func isCompletionRequest(name string) bool {
	return name == cobra.ShellCompRequestCmd || name == cobra.ShellCompNoDescRequestCmd
}

// completeProfile completes the main command, whose options cobra does not
// parse (internal/options does, with argparse's rules): option names, the
// values of the option being typed, the subcommands, and after "--" (or
// the application's first word) files.
func completeProfile(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if slices.Contains(args, "--") || appStarted(args) {
		return nil, cobra.ShellCompDirectiveDefault // the app and its arguments
	}
	if strings.HasPrefix(toComplete, "-") {
		if name, _, ok := strings.Cut(toComplete, "="); ok {
			if s := specOf(name); s != nil {
				var out []cobra.Completion
				for _, v := range optionValues(s, args) {
					out = append(out, name+"="+v)
				}
				return filterPrefix(out, toComplete), valueDirective(s, out)
			}
		}
		return filterPrefix(optionNames(), toComplete), cobra.ShellCompDirectiveNoFileComp
	}
	if s := valueOption(args); s != nil {
		vals := optionValues(s, args)
		if s.Kind == options.KindStrings {
			vals = slices.DeleteFunc(vals, func(v cobra.Completion) bool { return slices.Contains(args, v) })
		}
		if s.Kind == options.KindStrings && len(args) > 0 && specOf(args[len(args)-1]) != s {
			// A list option already has a value: the next word may also
			// be another option or the application.
			vals = append(vals, "--")
		}
		return filterPrefix(vals, toComplete), valueDirective(s, vals)
	}
	// Cobra adds the subcommands itself when no word precedes; the
	// application may follow the options without "--": files too.
	return filterPrefix([]cobra.Completion{"--"}, toComplete), cobra.ShellCompDirectiveDefault
}

// appStarted tells whether a word of args (the words before the one being
// completed) is the application: the first word that is neither an option
// nor the value of the option before it.
func appStarted(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			continue
		}
		if i == 0 {
			return true
		}
		prev := specOf(args[i-1])
		if prev == nil {
			// A value of a list option taking several words, or the app.
			if s := valueOption(args[:i]); s != nil && s.Kind == options.KindStrings {
				continue
			}
			return true
		}
		if strings.Contains(args[i-1], "=") {
			return true // --opt=value: a word after it is the app
		}
		switch prev.Kind {
		case options.KindBool:
			if !options.IsTruthWord(a) {
				return true
			}
		case options.KindOptional:
			if !strings.HasPrefix(a, "gfx") {
				return true
			}
		}
	}
	return false
}

// specOf returns the option a word names ("--pmc", "-f", "--virtual-gpu=x").
func specOf(word string) *options.Spec {
	name, _, _ := strings.Cut(word, "=")
	switch {
	case strings.HasPrefix(name, "--"):
		s, _ := options.SpecByLong(name[2:])
		return s
	case strings.HasPrefix(name, "-") && len(name) == 2:
		s, _ := options.SpecByShort(name[1:])
		return s
	}
	return nil
}

// valueOption returns the option whose value the next word is: the last
// word if it is an option taking a value, or a list option (-f, --pmc)
// followed only by its values so far.
func valueOption(args []string) *options.Spec {
	for i := len(args) - 1; i >= 0; i-- {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			continue // a value: look further back for its option
		}
		s := specOf(a)
		if s == nil || strings.Contains(a, "=") {
			return nil
		}
		switch s.Kind {
		case options.KindStrings:
			return s
		case options.KindBool:
			return nil
		default:
			if i == len(args)-1 {
				return s
			}
			return nil
		}
	}
	return nil
}

// optionNames lists every visible option as the user types it.
func optionNames() []cobra.Completion {
	out := []cobra.Completion{"--help", "--version"}
	for i := range options.Specs {
		s := &options.Specs[i]
		if s.Hidden {
			continue
		}
		out = append(out, cobra.CompletionWithDesc("--"+s.Long, s.Help))
		if s.Alias != "" {
			out = append(out, cobra.CompletionWithDesc("--"+s.Alias, s.Help))
		}
		if s.Short != "" {
			out = append(out, cobra.CompletionWithDesc("-"+s.Short, s.Help))
		}
	}
	return out
}

// optionValues are the values offered for an option: its choices, counter
// names for --pmc, architectures for --virtual-gpu, truth words for [BOOL].
func optionValues(s *options.Spec, args []string) []cobra.Completion {
	switch {
	case s.Long == "pmc":
		return counterNames(virtualArchOf(args))
	case len(s.Choices) > 0:
		return s.Choices
	case s.Kind == options.KindBool:
		return []cobra.Completion{"true", "false"}
	}
	return nil
}

// valueDirective: files for options that take a path, nothing else for
// options with a fixed set of values.
func valueDirective(s *options.Spec, vals []cobra.Completion) cobra.ShellCompDirective {
	if len(vals) > 0 {
		return cobra.ShellCompDirectiveNoFileComp
	}
	if s.Long == "output-directory" {
		return cobra.ShellCompDirectiveFilterDirs
	}
	return cobra.ShellCompDirectiveDefault
}

// virtualArchOf returns the --virtual-gpu architecture given among args
// ("" when none; the default architecture when the option has no value).
func virtualArchOf(args []string) string {
	arch := ""
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "--virtual-gpu="):
			arch = strings.TrimPrefix(a, "--virtual-gpu=")
		case a == "--virtual-gpu":
			arch = options.VirtualGPUArchs[0]
			if i+1 < len(args) && strings.HasPrefix(args[i+1], "gfx") {
				arch = args[i+1]
			}
		}
	}
	return arch
}

// counterNames lists the counters --pmc accepts: of the virtual GPU's
// architecture when one is given, else of this machine's first GPU, else
// of the virtual GPU's default architecture (gfx90a).
func counterNames(virtualArch string) []cobra.Completion {
	var db *counters.DB
	if agents, err := topology.Detect(virtualArch, os.LookupEnv, topology.DefaultSysfs); err == nil && len(agents) > 0 {
		if dev, err := counters.DeviceFromProperties(agents[0].Arch, agents[0].Properties); err == nil {
			db, _ = counters.Load(dev, counters.WithProperties(counters.PropertiesFromKFD(agents[0].Properties)))
		}
	}
	if db == nil {
		arch := virtualArch
		if arch == "" {
			arch = options.VirtualGPUArchs[0]
		}
		var err error
		if db, err = counters.ForAgent(arch); err != nil {
			return nil
		}
	}
	var out []cobra.Completion
	for _, c := range db.Available() {
		out = append(out, c.Name)
	}
	return out
}

func filterPrefix(in []cobra.Completion, prefix string) []cobra.Completion {
	var out []cobra.Completion
	for _, c := range in {
		word, _, _ := strings.Cut(c, "\t")
		if strings.HasPrefix(word, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// registerFlagCompletions gives the subcommands' flags with a fixed set of
// values their completions (cobra completes the flag names itself).
func registerFlagCompletions(root *cobra.Command) {
	formats := strings.Split(convertFormatNames(), ", ")
	for _, r := range []struct {
		cmd, flag string
		values    func() []cobra.Completion
	}{
		{"convert", "output-format", func() []cobra.Completion { return formats }},
		{"convert", "agent-index", func() []cobra.Completion { return []cobra.Completion{"absolute", "relative", "type-relative"} }},
		{"summary", "format", func() []cobra.Completion { return []cobra.Completion{"text", "csv", "json"} }},
		{"summary", "summary-units", func() []cobra.Completion { return summary.Units }},
		{"avail", "arch", func() []cobra.Completion { return archNames() }},
		{"avail", "virtual-gpu", func() []cobra.Completion { return options.VirtualGPUArchs }},
		{"packets", "agent", func() []cobra.Completion { return archNames() }},
		{"packets", "format", func() []cobra.Completion { return []cobra.Completion{"json", "text", "bin"} }},
	} {
		for _, c := range root.Commands() {
			if c.Name() != r.cmd || c.Flags().Lookup(r.flag) == nil {
				continue
			}
			values := r.values
			_ = c.RegisterFlagCompletionFunc(r.flag, func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return filterPrefix(values(), toComplete), cobra.ShellCompDirectiveNoFileComp
			})
		}
	}
	for _, c := range root.Commands() {
		if c.Name() != "packets" || c.Flags().Lookup("pmc") == nil {
			continue
		}
		_ = c.RegisterFlagCompletionFunc("pmc", func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			arch, _ := cmd.Flags().GetString("agent")
			arch, _, _ = strings.Cut(arch, ":")
			if arch == "" {
				arch = options.VirtualGPUArchs[0]
			}
			return filterPrefix(counterNames(arch), toComplete), cobra.ShellCompDirectiveNoFileComp
		})
	}
}

// archNames are the architectures the counter database knows.
func archNames() []cobra.Completion {
	keys, err := counters.ArchKeys()
	if err != nil {
		return options.VirtualGPUArchs
	}
	return keys
}
