package options

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ATTActivityCounters are the eight SQ counters --att-activity streams into
// the thread trace (rocprofv3's fixed list).
var ATTActivityCounters = []string{
	"SQ_BUSY_CU_CYCLES", "SQ_VALU_MFMA_BUSY_CYCLES", "SQ_ACTIVE_INST_VALU", "SQ_ACTIVE_INST_LDS",
	"SQ_ACTIVE_INST_VMEM", "SQ_ACTIVE_INST_FLAT", "SQ_ACTIVE_INST_SCA", "SQ_ACTIVE_INST_MISC",
}

// MaxATTCounters is how many counters a thread trace can stream.
const MaxATTCounters = 8

// ATTDecoderLibrary is the decoder's file name --att-library-path must hold.
const ATTDecoderLibrary = "librocprof-trace-decoder.so"

// ATTCounter is one SQ counter streamed into the thread trace.
type ATTCounter struct {
	Name     string
	SIMDMask uint32 // 1..0xF
}

// String is NAME, or NAME:<hex mask> when not every SIMD is counted (the
// form rocprofv3 lists in filenames.json).
func (a ATTCounter) String() string {
	if a.SIMDMask == 0xF {
		return a.Name
	}
	return a.Name + ":" + strconv.FormatUint(uint64(a.SIMDMask), 16)
}

// ParseATTCounters parses --att-perfcounters: NAME[:SIMDMASK] entries (mask
// in hex, 0x optional, default 0xF) separated by spaces or commas; names are
// upper-cased.
func ParseATTCounters(s string) ([]ATTCounter, error) {
	var out []ATTCounter
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' }) {
		name, mask, hasMask := strings.Cut(f, ":")
		c := ATTCounter{Name: strings.ToUpper(name), SIMDMask: 0xF}
		if c.Name == "" {
			return nil, fmt.Errorf("%q has no counter name", f)
		}
		if !strings.HasPrefix(c.Name, "SQ_") {
			return nil, fmt.Errorf("%s: only SQ counters can be streamed into a thread trace", c.Name)
		}
		if hasMask {
			v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(mask), "0x"), 16, 32)
			if err != nil || v == 0 || v > 0xF {
				return nil, fmt.Errorf("%s: SIMD mask %q must be a hex value 1..f", c.Name, mask)
			}
			c.SIMDMask = uint32(v)
		}
		out = append(out, c)
	}
	if len(out) > MaxATTCounters {
		return nil, fmt.Errorf("%d counters given; a thread trace streams at most %d", len(out), MaxATTCounters)
	}
	return out, nil
}

// ATTStreamedCounters returns the counters this pass streams into its thread
// trace and their sampling period (--att-activity, else --att-perfcounters
// with --att-perfcounter-ctrl). A zero period means none are programmed.
func (c *Config) ATTStreamedCounters() ([]ATTCounter, int, error) {
	if c.AttActivity != 0 {
		out := make([]ATTCounter, len(ATTActivityCounters))
		for i, n := range ATTActivityCounters {
			out[i] = ATTCounter{Name: n, SIMDMask: 0xF}
		}
		return out, c.AttActivity, nil
	}
	cs, err := ParseATTCounters(c.AttPerfcounters)
	return cs, c.AttPerfcounterCtrl, err
}

// validateATT checks the thread-trace options as rocprofv3 does.
func (c *Config) validateATT(withApp bool) ([]string, error) {
	var warnings []string
	if c.AttActivity != 0 {
		if c.AttActivity < 1 || c.AttActivity > 16 {
			return nil, &UsageError{Option: "--att-activity", Msg: "must be between 1 and 16"}
		}
		if c.CollectsCounters() || c.AttPerfcounters != "" || c.AttPerfcounterCtrl != 0 {
			return nil, &UsageError{Option: "--att-activity", Msg: "cannot be combined with --pmc, --att-perfcounters or --att-perfcounter-ctrl"}
		}
	}
	if c.AttPerfcounters != "" && c.CollectsCounters() {
		return nil, &UsageError{Option: "--att-perfcounters", Msg: "cannot be combined with --pmc"}
	}
	if c.AttPerfcounterCtrl < 0 || c.AttPerfcounterCtrl > 32 {
		return nil, &UsageError{Option: "--att-perfcounter-ctrl", Msg: "must be between 1 and 32"}
	}
	if c.AttPerfcounters != "" {
		cs, err := ParseATTCounters(c.AttPerfcounters)
		if err != nil {
			return nil, &UsageError{Option: "--att-perfcounters", Msg: err.Error()}
		}
		if len(cs) > 0 && c.AttPerfcounterCtrl == 0 {
			warnings = append(warnings, "--att-perfcounters: no counter is streamed without --att-perfcounter-ctrl (the sampling period, 1..32), as in rocprofv3")
		}
	}
	if withApp && c.AdvancedThreadTrace.On() && len(c.AttLibraryPath) > 0 {
		found := false
		for _, d := range c.AttLibraryPath {
			for _, dir := range filepath.SplitList(d) {
				if st, err := os.Stat(filepath.Join(dir, ATTDecoderLibrary)); err == nil && !st.IsDir() {
					found = true
				}
			}
		}
		if !found {
			return nil, &UsageError{Option: "--att-library-path", Msg: fmt.Sprintf("no %s in %s: give the directory that holds AMD's thread-trace decoder",
				ATTDecoderLibrary, strings.Join(c.AttLibraryPath, ", "))}
		}
	}
	return warnings, nil
}

// attEnv adds the streamed-counter variables: --att-activity exports its
// fixed counter list and period the way --att-perfcounters and
// --att-perfcounter-ctrl do.
func (c *Config) attEnv(env map[string]string) {
	cs, period, err := c.ATTStreamedCounters()
	if err != nil || len(cs) == 0 {
		return
	}
	names := make([]string, len(cs))
	for i, a := range cs {
		names[i] = a.String()
	}
	env[optionEnv("att_perfcounters")] = strings.Join(names, " ")
	if period != 0 {
		env[optionEnv("att_perfcounter_ctrl")] = strconv.Itoa(period)
	}
}
