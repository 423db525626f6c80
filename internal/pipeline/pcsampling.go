package pipeline

import (
	"fmt"

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/topology"
)

// errPCSamplingNotCollected is what a valid stochastic PC-sampling request
// ends in: the virtual GPU and ROCR 6.4+ accept the session, but no sample
// reaches the outputs yet, and a run must never look as if it sampled
// nothing. Host trap is collected (docs/pc-sampling.md).
const errPCSamplingNotCollected = "PC sampling: stochastic sampling is not collected yet in this build"

// validatePCSampling checks a PC-sampling request before the app starts:
// the runtime the app will load must offer PC sampling (ROCR 6.4 and
// later), and some GPU must offer the method, unit and interval asked for.
// A stochastic request that passes is refused all the same, since its
// samples are not collected yet (docs/pc-sampling.md); host trap goes on.
func validatePCSampling(plan *options.Plan, agents []topology.Agent, agentsErr error, environ []string) error {
	var cfg *options.Config
	for i := range plan.Passes {
		if plan.Passes[i].PCSampling() {
			cfg = plan.Passes[i]
			break
		}
	}
	if cfg == nil {
		return nil
	}
	if rocr, offers := launch.PCSamplingRuntime(plan.App, "", environ); rocr != "" && !offers {
		return fmt.Errorf("PC sampling: the ROCm runtime the app will load, %s, has no PC sampling "+
			"(ROCm 5.x and 6.1 do not offer it); ROCm 6.4 or later (7.x included) offers it on %s; the app was not started",
			rocr, options.PCSamplingArchs)
	}
	if agentsErr == nil && len(agents) > 0 {
		var first error
		ok := false
		for _, ag := range agents {
			if err := cfg.CheckPCSamplingOn(ag.Arch, fmt.Sprintf("GPU %d", ag.Index)); err != nil {
				if first == nil {
					first = err
				}
				continue
			}
			ok = true
		}
		if !ok {
			return first
		}
	}
	if cfg.PcSamplingMethod == "host_trap" {
		return nil
	}
	return fmt.Errorf("%s (--pc-sampling-method %s --pc-sampling-unit %s --pc-sampling-interval %d is valid here, "+
		"but no sample would reach the outputs); use --pc-sampling-method host_trap --pc-sampling-unit time, "+
		"or run without the --pc-sampling-* options", errPCSamplingNotCollected,
		cfg.PcSamplingMethod, cfg.PcSamplingUnit, cfg.PcSamplingInterval)
}
