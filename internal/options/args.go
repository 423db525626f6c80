package options

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/textdist"
)

// UsageError is a mistake on the command line or in an input file's option
// values; the CLI exits 2 for it, as argparse does.
type UsageError struct {
	Option string // the option as the user wrote it, when known
	Msg    string
}

func (e *UsageError) Error() string {
	if e.Option == "" {
		return e.Msg
	}
	return fmt.Sprintf("option %s: %s", e.Option, e.Msg)
}

// ErrNoApplication is returned when no application follows the options and
// nothing else (--list-avail, --echo, --version) was asked for.
var ErrNoApplication = errors.New("no application provided: put the command to profile after --, e.g. rocprof-go --kernel-trace -- ./app")

// CommandLine is the parsed command line before input files, the environment
// and config files are merged in.
type CommandLine struct {
	Config  *Config
	App     []string // the application and its arguments
	Help    bool
	Version bool
}

var archWord = regexp.MustCompile(`^gfx[0-9a-f]+$`)

// ParseArgs parses rocprofv3-style arguments: [options] [--] app [args].
// [BOOL] options take an optional truth word (--kernel-trace, --kernel-trace=no,
// --kernel-trace false); list options take every following word up to the next
// option or "--". The first word that is not an option starts the application.
func ParseArgs(args []string) (*CommandLine, error) {
	cl := &CommandLine{Config: &Config{}}
	c := cl.Config
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			cl.App = args[i+1:]
			return cl, nil
		case arg == "-h" || arg == "--help":
			cl.Help = true
			continue
		case arg == "-v" || arg == "--version":
			cl.Version = true
			continue
		case strings.HasPrefix(arg, "--"):
			name, val, hasVal := strings.Cut(arg[2:], "=")
			spec, ok := SpecByLong(name)
			if !ok {
				return nil, unknownOption("--" + name)
			}
			next, err := spec.consume(c, "--"+name, val, hasVal, args[i+1:])
			if err != nil {
				return nil, err
			}
			i += next
		case strings.HasPrefix(arg, "-") && len(arg) > 1:
			n, err := parseShort(c, arg, args[i+1:])
			if err != nil {
				return nil, err
			}
			i += n
		default:
			cl.App = args[i:]
			return cl, nil
		}
	}
	return cl, nil
}

// parseShort handles -X, -Xvalue, -X=value and bundles of [BOOL] letters (-MT).
func parseShort(c *Config, arg string, rest []string) (int, error) {
	letter, tail := arg[1:2], arg[2:]
	spec, ok := SpecByShort(letter)
	if !ok {
		return 0, unknownOption("-" + letter)
	}
	if tail == "" {
		return spec.consume(c, "-"+letter, "", false, rest)
	}
	if tail[0] == '=' {
		return spec.consume(c, "-"+letter, tail[1:], true, rest)
	}
	if spec.Kind != KindBool {
		return spec.consume(c, "-"+letter, tail, true, rest)
	}
	// A bundle of [BOOL] letters.
	for _, r := range arg[1:] {
		s, ok := SpecByShort(string(r))
		if !ok || s.Kind != KindBool {
			return 0, &UsageError{Option: arg, Msg: fmt.Sprintf("-%c cannot be combined with other one-letter options", r)}
		}
		if err := s.setValue(c, "true"); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// consume applies one option occurrence and returns how many of the following
// words it used.
func (s *Spec) consume(c *Config, as, val string, hasVal bool, rest []string) (int, error) {
	wrap := func(err error) error {
		if err == nil {
			return nil
		}
		var ue *UsageError
		if errors.As(err, &ue) {
			return err
		}
		return &UsageError{Option: as, Msg: err.Error()}
	}
	used := 0
	switch s.Kind {
	case KindBool:
		switch {
		case hasVal:
		case len(rest) > 0 && IsTruthWord(rest[0]):
			val, used = rest[0], 1
		default:
			val = "true"
		}
		return used, wrap(s.setValue(c, val))
	case KindStrings:
		if hasVal && val != "" {
			if err := s.setValue(c, val); err != nil {
				return 0, wrap(err)
			}
		}
		for used < len(rest) && !looksLikeOption(rest[used]) {
			if err := s.setValue(c, rest[used]); err != nil {
				return used, wrap(err)
			}
			used++
		}
		c.markSet(s.Dest)
		return used, nil
	case KindOptional:
		switch {
		case hasVal:
		case len(rest) > 0 && archWord.MatchString(rest[0]):
			val, used = rest[0], 1
		default:
			val = "gfx90a"
		}
		return used, wrap(s.setValue(c, val))
	default:
		if !hasVal {
			if len(rest) == 0 || looksLikeOption(rest[0]) {
				return 0, &UsageError{Option: as, Msg: "expected one argument"}
			}
			val, used = rest[0], 1
		}
		return used, wrap(s.setValue(c, val))
	}
}

var negativeNumber = regexp.MustCompile(`^-\d`)

func looksLikeOption(s string) bool {
	return strings.HasPrefix(s, "-") && len(s) > 1 && !negativeNumber.MatchString(s)
}

// unknownOption builds the usage error for an option rocprofv3 does not have,
// with the nearest real option as a suggestion.
func unknownOption(opt string) error {
	name := strings.TrimLeft(opt, "-")
	best, bestD := "", 1<<30
	for _, s := range Specs {
		for _, cand := range []string{s.Long, s.Alias} {
			if cand == "" {
				continue
			}
			if d := textdist.Levenshtein(name, cand); d < bestD {
				best, bestD = cand, d
			}
		}
	}
	msg := "unrecognized option"
	if best != "" && bestD <= max(2, len(name)/3) {
		msg += fmt.Sprintf("; did you mean --%s?", best)
	} else {
		msg += "; see rocprof-go --help"
	}
	return &UsageError{Option: opt, Msg: msg}
}
