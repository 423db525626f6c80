package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocprof-go/rocprof-go/internal/options"
)

// writeHelp prints the option reference generated from options.Specs, in
// rocprofv3's groups, followed by the subcommands.
func writeHelp(w io.Writer, root *cobra.Command) {
	fmt.Fprintln(w, "usage: rocprof-go [options] -- <app> [args...]")
	fmt.Fprintln(w, "       rocprof-go <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "rocprof-go profiles AMD GPU applications with rocprofv3's options, files and columns.")
	fmt.Fprintln(w, "[BOOL] options take an optional value: --kernel-trace, --kernel-trace=no, --kernel-trace false.")
	fmt.Fprintln(w, "Aggregate options (--sys-trace, --runtime-trace, --hip-trace, --hsa-trace) only switch on")
	fmt.Fprintln(w, "sub-options left unset: --sys-trace --hsa-trace=no traces everything but HSA.")
	fmt.Fprintln(w, "With --virtual-gpu the app runs on rocprof-go's virtual GPU: timings and counter values are emulated.")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  %-34s  %s\n", "-h, --help", "show this help and exit")
	fmt.Fprintf(w, "  %-34s  %s\n", "-v, --version", "print version information and exit")
	for _, g := range options.Groups {
		var lines []string
		for i := range options.Specs {
			s := &options.Specs[i]
			if s.Group != g || s.Hidden {
				continue
			}
			lines = append(lines, helpLine(s))
		}
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", g)
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
	}
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" {
			continue
		}
		fmt.Fprintf(w, "  %-32s  %s\n", c.Name(), c.Short)
	}
	fmt.Fprintln(w, "\nRun 'rocprof-go <command> --help' for a command's flags.")
}

func helpLine(s *options.Spec) string {
	var names []string
	if s.Short != "" {
		names = append(names, "-"+s.Short)
	}
	names = append(names, "--"+s.Long)
	if s.Alias != "" {
		names = append(names, "--"+s.Alias)
	}
	left := strings.Join(names, ", ")
	switch s.Kind {
	case options.KindBool:
		left += " [BOOL]"
	case options.KindStrings:
		left += " " + s.Metavar + " [" + s.Metavar + " ...]"
	case options.KindOptional:
		left += "[=" + s.Metavar + "]"
	default:
		left += " " + s.Metavar
	}
	help := s.Help
	if len(s.Choices) > 0 && s.Kind != options.KindStrings {
		help += " {" + strings.Join(s.Choices, ",") + "}"
	}
	if s.Default != "" {
		help += " (default " + s.Default + ")"
	}
	if s.NotSupported != "" {
		help += " [not supported yet]"
	}
	if len(left) > 34 {
		return "  " + left + "\n" + strings.Repeat(" ", 38) + help
	}
	return fmt.Sprintf("  %-34s  %s", left, help)
}

// writeShortUsage is what a bare `rocprof-go` prints: how to start, and
// where the full reference is.
func writeShortUsage(w io.Writer, root *cobra.Command) {
	var names []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	fmt.Fprintf(w, `usage: rocprof-go [options] -- <app> [args...]
       rocprof-go <command> [flags]   (commands: %s)
e.g.   rocprof-go --kernel-trace --stats -f csv -- ./app   (add --virtual-gpu on a machine without an AMD GPU)
rocprof-go --help lists every option and command.
`, strings.Join(names, ", "))
}
