package request

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/kernelname"

	"github.com/rocprof-go/rocprof-go/internal/toolenv"
)

// PMC is the counter request a profiled process reads from the
// environment the CLI composed (internal/options/env.go).
type PMC struct {
	Groups   [][]string // one counter list per pmc: line
	Interval int        // dispatches per device before the next group
	Include  *regexp.Regexp
	Exclude  *regexp.Regexp
	Ranges   [][2]uint64 // 1-based inclusive iteration intervals; nil: all
	Mangled  bool        // match regexes on mangled names (ROCPROF_DEMANGLE_KERNELS=0)
	Truncate bool        // match regexes on truncated names (-T, ROCPROF_TRUNCATE_KERNELS=1)
	Defs     string      // counter definitions replacing the built-in ones: a file's path ($ROCPROFILER_METRICS_PATH's copy)
	Extra    string      // -E counter definitions: a file's path (the run's copy)
	ATT      *ATT        // thread trace instead of counters (--att)
}

// ParsePMC reads ROCPROF_COUNTERS or ROCPROF_COUNTER_GROUPS (+
// _INTERVAL), the kernel filters and the counter definitions files.
func ParsePMC(getenv func(string) string) (*PMC, error) {
	r := &PMC{Interval: 1}
	src := getenv(toolenv.CounterGroups)
	if src == "" {
		src = getenv(toolenv.Counters)
	}
	for _, line := range strings.Split(src, "\n") {
		if names := parsePMCLine(line); len(names) > 0 {
			r.Groups = append(r.Groups, names)
		}
	}
	var err error
	if r.ATT, err = ParseATT(getenv); err != nil {
		return nil, err
	}
	if len(r.Groups) == 0 && r.ATT == nil {
		return nil, fmt.Errorf("no counters requested (ROCPROF_COUNTERS is empty)")
	}
	if s := getenv(toolenv.CounterGroupsInterval); s != "" {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("ROCPROF_COUNTER_GROUPS_INTERVAL=%q is not a positive integer", s)
		}
		r.Interval = n
	}
	if s := getenv(toolenv.KernelFilterIncludeRegex); s != "" {
		if r.Include, err = regexp.Compile(s); err != nil {
			return nil, fmt.Errorf("kernel include regex %q: %w", s, err)
		}
	}
	if s := getenv(toolenv.KernelFilterExcludeRegex); s != "" {
		if r.Exclude, err = regexp.Compile(s); err != nil {
			return nil, fmt.Errorf("kernel exclude regex %q: %w", s, err)
		}
	}
	if r.Ranges, err = parseIterationRange(getenv(toolenv.KernelFilterRange)); err != nil {
		return nil, err
	}
	r.Mangled = getenv(toolenv.DemangleKernels) == "0"
	r.Truncate = getenv(toolenv.TruncateKernels) == "1"
	r.Defs = getenv(toolenv.GoCounterDefsFile)
	r.Extra = getenv(toolenv.GoExtraCountersFile)
	return r, nil
}

// parsePMCLine splits "pmc: A B,C" into counter names.
func parsePMCLine(line string) []string {
	line = strings.TrimSpace(line)
	if rest, ok := strings.CutPrefix(line, "pmc:"); ok {
		line = rest
	}
	return strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })
}

// parseIterationRange parses rocprofv3's --kernel-iteration-range syntax:
// tokens separated by brackets, commas and spaces, each an integer or an
// inclusive "A-B" range; "[1, 3, [5-8]]" selects 1, 3 and 5..8.
func parseIterationRange(s string) ([][2]uint64, error) {
	tokens := strings.FieldsFunc(s, func(r rune) bool {
		return r == '[' || r == ']' || r == ',' || r == ' ' || r == '\t'
	})
	var out [][2]uint64
	for _, t := range tokens {
		lo, hi, isRange := strings.Cut(t, "-")
		a, err := strconv.ParseUint(lo, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("kernel iteration range %q: %q is not a number or an A-B range", s, t)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 64); err != nil || b < a {
				return nil, fmt.Errorf("kernel iteration range %q: %q is not an A-B range with A <= B", s, t)
			}
		}
		out = append(out, [2]uint64{a, b})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out, nil
}

// Filtered reports whether the regexes can leave a kernel out.
func (r *PMC) Filtered() bool { return r.Include != nil || r.Exclude != nil }

// Selects applies the include then the exclude regex, as substring
// searches on the kernel's formatted name.
func (r *PMC) Selects(symbol string) bool {
	if !r.Filtered() {
		return true
	}
	name := formatForFilter(symbol, r.Mangled, r.Truncate)
	if r.Include != nil && !r.Include.MatchString(name) {
		return false
	}
	return r.Exclude == nil || !r.Exclude.MatchString(name)
}

// formatForFilter is the name rocprofv3 matches its kernel filters against
// (kernelname.ForFilter): the name the outputs show, truncated with -T.
func formatForFilter(symbol string, mangled, truncate bool) string {
	return kernelname.ForFilter(symbol, mangled, truncate)
}
