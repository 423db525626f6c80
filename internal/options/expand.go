package options

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/domain"
	"github.com/rocprof-go/rocprof-go/internal/output/format"
)

// expandAggregates applies rocprofv3's "set if unset" expansion: --sys-trace
// implies --hip-trace and --hsa-trace, --kokkos-trace --kernel-rename, and
// each aggregate switches on the domains whose row in the domain table
// (internal/domain) names it. An explicit sub-option (true or false) always
// wins. It returns warnings for domains an aggregate asked for that this
// build cannot trace.
func (c *Config) expandAggregates() []string {
	if c.KokkosTrace.On() {
		c.KernelRename.setIfUnset(True)
	}
	if c.SysTrace.On() {
		c.HipTrace.setIfUnset(True)
		c.HsaTrace.setIfUnset(True)
	}
	c.expandDomains()
	// rocprof v1's --hip-trace traced the kernels and copies HIP issued as
	// well as its calls: its results.csv and results.copy_stats.csv need
	// them recorded.
	if c.V1Results() && c.HipTrace.On() {
		c.KernelTrace.setIfUnset(True)
		c.MemoryCopyTrace.setIfUnset(True)
	}
	// rocDecode and rocJPEG are in no runtime of the ROCm matrix, so no
	// process can call them: the aggregates, which rocprofv3 has switch
	// them on, leave them off (explicit use was rejected by
	// checkSupported: their rows in the domain table are Refused).
	c.RocdecodeTrace, c.RocjpegTrace = False, False
	return nil
}

// applyDefaults fills rocprofv3's defaults for options still unset.
func (c *Config) applyDefaults() {
	for i := range Specs {
		s := &Specs[i]
		if s.Default == "" || c.IsSet(s.Dest) {
			continue
		}
		_ = s.setValue(c, s.Default)
		delete(c.set, s.Dest) // a default is not "given"
	}
	// With -o NAME.csv the run writes rocprof v1's files; rocprofv3's own
	// formats only when -f asks for them.
	if len(c.OutputFormat) == 0 && !c.V1Results() {
		c.OutputFormat = []string{string(format.ROCpd)}
	}
	c.OutputFormat = dedupe(c.OutputFormat)
}

// V1Results reports whether -o names a ".csv" file: the run then writes
// rocprof v1's results.csv and stats files at that path, from every pass.
func (c *Config) V1Results() bool {
	return strings.HasSuffix(strings.ToLower(c.OutputFile), ".csv")
}

func dedupe(in []string) []string {
	var out []string
	for _, s := range in {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// TracingDomains lists the domains of the domain table the pass collects,
// by option name.
func (c *Config) TracingDomains() []string {
	var on []string
	for _, d := range domain.Switches {
		if c.Collects(d) {
			on = append(on, d.Option)
		}
	}
	return on
}

// CollectsCounters reports whether this pass collects hardware counters.
func (c *Config) CollectsCounters() bool { return len(c.Pmc) > 0 || len(c.PmcGroups) > 0 }

// CounterGroups returns the pass's counter groups: --pmc's (or a pmc line's)
// one group, or an input file's pmc_groups; nil when it collects none.
func (c *Config) CounterGroups() [][]string {
	if len(c.Pmc) > 0 {
		return [][]string{c.Pmc}
	}
	return c.PmcGroups
}

// CountersLabel renders the pass's counters for people: "pmc A B", or
// "pmc_groups A B | C D"; "" when it collects none.
func (c *Config) CountersLabel() string {
	if !c.CollectsCounters() {
		return ""
	}
	key := "pmc"
	if len(c.Pmc) == 0 {
		key = "pmc_groups"
	}
	groups := make([]string, 0, len(c.CounterGroups()))
	for _, g := range c.CounterGroups() {
		groups = append(groups, strings.Join(g, " "))
	}
	return key + " " + strings.Join(groups, " | ")
}

// validate checks the combinations rocprofv3 rejects. withApp says whether an
// application will run; lookup reads the environment the app inherits. It
// returns the warnings and the notes (options accepted that change nothing
// here).
func (c *Config) validate(withApp bool, lookup func(string) (string, bool)) (warnings, notes []string, err error) {
	fail := func(err error) ([]string, []string, error) { return nil, nil, err }
	if len(c.Pmc) > 0 && len(c.PmcGroups) > 0 {
		return fail(&UsageError{Option: "--pmc", Msg: "cannot be combined with pmc_groups from an input file: use one or the other"})
	}
	w, err := c.validateAttach(withApp)
	if err != nil {
		return fail(err)
	}
	warnings = append(warnings, w...)
	if err := c.validatePCSampling(); err != nil {
		return fail(err)
	}
	w, err = c.validateATT(withApp)
	if err != nil {
		return fail(err)
	}
	warnings = append(warnings, w...)
	w, n, err := c.validatePerfetto()
	if err != nil {
		return fail(err)
	}
	warnings, notes = append(warnings, w...), append(notes, n...)
	if c.IsSet("benchmark_mode") {
		notes = append(notes, fmt.Sprintf("--benchmark-mode %s changes nothing in rocprof-go: it measures rocprofiler-sdk's own internals, "+
			"which rocprof-go does not have; the run profiles as it would without it (make bench measures rocprof-go's cost)", c.BenchmarkMode))
	}
	if err := c.checkOutputPath(lookup); err != nil {
		return fail(err)
	}
	if _, err := c.RocmLibDirs(); err != nil {
		return fail(err)
	}
	for _, r := range []struct{ opt, re string }{
		{"--kernel-include-regex", c.KernelIncludeRegex}, {"--kernel-exclude-regex", c.KernelExcludeRegex},
	} {
		if _, err := regexp.Compile(r.re); err != nil {
			return fail(&UsageError{Option: r.opt, Msg: fmt.Sprintf("invalid regular expression: %v", err)})
		}
	}
	for _, g := range c.SummaryGroups {
		if _, err := regexp.Compile("^(?:" + g + ")$"); err != nil {
			return fail(&UsageError{Option: "--summary-groups", Msg: fmt.Sprintf("invalid regular expression %q: %v", g, err)})
		}
	}
	if _, err := ParseIterationRanges(c.KernelIterationRange); err != nil {
		return fail(&UsageError{Option: "--kernel-iteration-range", Msg: err.Error()})
	}
	if _, err := c.CollectionPeriodsNs(); err != nil {
		return fail(&UsageError{Option: "--collection-period", Msg: err.Error()})
	}
	if c.MinimumOutputData < 0 {
		return fail(&UsageError{Option: "--minimum-output-data", Msg: "must not be negative"})
	}
	tracing := len(c.TracingDomains()) > 0 || c.CollectsCounters() || c.AdvancedThreadTrace.On() ||
		c.PcSamplingBetaEnabled.On() || c.GroupByQueue.On()
	if withApp && !tracing {
		summaryOpts := []string{}
		for _, d := range []string{"stats", "summary", "summary_per_domain", "summary_groups", "summary_output_file", "summary_units"} {
			if c.IsSet(d) {
				s, _ := SpecByDest(d)
				summaryOpts = append(summaryOpts, s.Flag())
			}
		}
		if len(summaryOpts) > 0 {
			return fail(&UsageError{Option: summaryOpts[0], Msg: fmt.Sprintf("%s need a tracing option (e.g. --kernel-trace, --hip-trace, --sys-trace)", strings.Join(summaryOpts, ", "))})
		}
		warnings = append(warnings, "no tracing options were enabled")
	}
	return warnings, notes, nil
}

// IterationRange is an inclusive range of 1-based dispatch iterations.
type IterationRange struct{ First, Last uint64 }

// ParseIterationRanges parses --kernel-iteration-range values: tokens separated
// by '[', ']', ',' or spaces; "A-B" is an inclusive range, otherwise an integer.
func ParseIterationRanges(values []string) ([]IterationRange, error) {
	var out []IterationRange
	for _, v := range values {
		for _, tok := range strings.FieldsFunc(v, func(r rune) bool {
			return r == '[' || r == ']' || r == ',' || r == ' ' || r == '\t'
		}) {
			if a, b, ok := strings.Cut(tok, "-"); ok {
				lo, err1 := strconv.ParseUint(a, 10, 64)
				hi, err2 := strconv.ParseUint(b, 10, 64)
				if err1 != nil || err2 != nil || lo == 0 || hi < lo {
					return nil, fmt.Errorf("invalid range %q: write A-B with 1 <= A <= B, e.g. \"[1, 3, [5-8]]\"", tok)
				}
				out = append(out, IterationRange{lo, hi})
				continue
			}
			n, err := strconv.ParseUint(tok, 10, 64)
			if err != nil || n == 0 {
				return nil, fmt.Errorf("invalid iteration %q: iterations are positive integers or A-B ranges, e.g. \"[1, 3, [5-8]]\"", tok)
			}
			out = append(out, IterationRange{n, n})
		}
	}
	return out, nil
}

var periodUnitNs = map[string]float64{"hour": 3600e9, "min": 60e9, "sec": 1e9, "msec": 1e6, "usec": 1e3, "nsec": 1}

// Period is one --collection-period triplet in nanoseconds.
type Period struct {
	DelayNs, DurationNs uint64
	Repeat              uint64 // 0 = forever
}

// CollectionPeriodsNs converts -P DELAY:DURATION:REPEAT values to nanoseconds.
func (c *Config) CollectionPeriodsNs() ([]Period, error) {
	unit := c.CollectionPeriodUnit
	if unit == "" {
		unit = "sec"
	}
	scale := periodUnitNs[unit]
	var out []Period
	for _, p := range c.CollectionPeriod {
		parts := strings.Split(p, ":")
		if len(parts) != 3 {
			return nil, fmt.Errorf("invalid period %q: write DELAY:DURATION:REPEAT, e.g. 0.5:1:0", p)
		}
		delay, err1 := strconv.ParseFloat(parts[0], 64)
		dur, err2 := strconv.ParseFloat(parts[1], 64)
		rep, err3 := strconv.ParseUint(parts[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || delay < 0 || dur <= 0 {
			return nil, fmt.Errorf("invalid period %q: DELAY >= 0 and DURATION > 0 are numbers in %s, REPEAT a whole number", p, unit)
		}
		out = append(out, Period{uint64(delay * scale), uint64(dur * scale), rep})
	}
	return out, nil
}
