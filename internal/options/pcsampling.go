package options

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
)

// PCSamplingConfig is one PC-sampling configuration a GPU offers: a method,
// the unit of its interval, the interval's bounds, and whether the interval
// must be a power of two. Method and Unit are rocprofv3's option words.
type PCSamplingConfig struct {
	Method   string // host_trap, stochastic
	Unit     string // time (µs), cycles, instructions
	Min, Max uint64
	Pow2     bool
}

// pcSamplingConfigs are the configurations the ROCm driver (amdkfd's PC
// sampling query) reports per architecture: MI200 (gfx90a) host trap in
// microseconds; MI300 (gfx942) host trap and stochastic (hardware)
// sampling in shader-clock cycles, a power of two from 256 to 2^31. The
// virtual GPU reports the same (vgpu/src/pcsample.c).
var pcSamplingConfigs = map[string][]PCSamplingConfig{
	"gfx90a": {{Method: "host_trap", Unit: "time", Min: 1, Max: math.MaxUint64}},
	"gfx942": {
		{Method: "host_trap", Unit: "time", Min: 1, Max: math.MaxUint64},
		{Method: "stochastic", Unit: "cycles", Min: 256, Max: 1 << 31, Pow2: true},
	},
}

// PCSamplingConfigs returns the PC-sampling configurations of an
// architecture (gfx90a, or gfx90a:sramecc+:xnack-), none for one without
// PC sampling.
func PCSamplingConfigs(arch string) []PCSamplingConfig {
	arch, _, _ = strings.Cut(arch, ":")
	return pcSamplingConfigs[arch]
}

// PCSamplingArchs names the architectures with PC sampling, for messages.
const PCSamplingArchs = "gfx90a (MI200: host_trap) and gfx942 (MI300: host_trap, stochastic)"

// PCSampling says whether the pass asks for PC sampling.
func (c *Config) PCSampling() bool { return c.PcSamplingMethod != "" }

// validatePCSampling applies rocprofv3's rules to the PC-sampling options:
// the unit, method and interval (> 0) together, with the beta switch on
// (the option or ROCPROFILER_PC_SAMPLING_BETA_ENABLED), and a unit the method
// has on some GPU (host_trap: time; stochastic: cycles).
func (c *Config) validatePCSampling() error {
	given := c.PcSamplingUnit != "" || c.PcSamplingMethod != "" || c.PcSamplingInterval != 0
	if !given {
		return nil
	}
	if c.PcSamplingUnit == "" || c.PcSamplingMethod == "" || c.PcSamplingInterval == 0 {
		return &UsageError{Option: "--pc-sampling-*", Msg: "--pc-sampling-unit, --pc-sampling-method and --pc-sampling-interval (> 0) must be given together"}
	}
	if !c.PcSamplingBetaEnabled.On() {
		return &UsageError{Option: "--pc-sampling-beta-enabled", Msg: "PC sampling is a beta feature: add --pc-sampling-beta-enabled (or set ROCPROFILER_PC_SAMPLING_BETA_ENABLED=1) to use --pc-sampling-method, --pc-sampling-unit and --pc-sampling-interval"}
	}
	var units []string
	for _, arch := range []string{"gfx90a", "gfx942"} {
		for _, pc := range pcSamplingConfigs[arch] {
			if pc.Method != c.PcSamplingMethod {
				continue
			}
			if pc.Unit == c.PcSamplingUnit {
				return nil
			}
			units = append(units, pc.Unit)
		}
	}
	return &UsageError{Option: "--pc-sampling-unit", Msg: fmt.Sprintf("%s sampling has no interval in %s on any GPU: use --pc-sampling-unit %s",
		c.PcSamplingMethod, c.PcSamplingUnit, units[0])}
}

// CheckPCSamplingOn checks the pass's PC-sampling request against the
// configurations of one GPU (gpu names it in the message): its method and
// unit offered, its interval within the bounds, a power of two where
// required.
func (c *Config) CheckPCSamplingOn(arch, gpu string) error {
	cfgs := PCSamplingConfigs(arch)
	if len(cfgs) == 0 {
		return fmt.Errorf("PC sampling: %s (%s) has no PC sampling; it is offered on %s", gpu, arch, PCSamplingArchs)
	}
	iv := c.PcSamplingInterval
	var offered []string
	for _, pc := range cfgs {
		offered = append(offered, pc.Method+"/"+pc.Unit)
		if pc.Method != c.PcSamplingMethod || pc.Unit != c.PcSamplingUnit {
			continue
		}
		if iv < pc.Min || iv > pc.Max {
			return fmt.Errorf("PC sampling: --pc-sampling-interval %d is outside %s's range for %s sampling in %s: %d to %d",
				iv, gpu, pc.Method, pc.Unit, pc.Min, pc.Max)
		}
		if pc.Pow2 && iv&(iv-1) != 0 {
			return fmt.Errorf("PC sampling: --pc-sampling-interval %d must be a power of two for %s sampling on %s (e.g. %d)",
				iv, pc.Method, gpu, uint64(1)<<(63-bits.LeadingZeros64(iv)))
		}
		return nil
	}
	return fmt.Errorf("PC sampling: %s (%s) offers no %s sampling in %s; it offers %s (rocprof-go avail lists them)",
		gpu, arch, c.PcSamplingMethod, c.PcSamplingUnit, strings.Join(offered, ", "))
}
