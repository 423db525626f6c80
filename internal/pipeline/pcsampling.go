package pipeline

import (
	"bytes"
	"fmt"
	"os"

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/topology"
)

// stochasticThread is the name ROCR gives its stochastic sampling thread
// (amd_gpu_agent.cpp, ROCm 7.x: PcSamplingStochasticThread beside
// PcSamplingHostTrapThread). ROCR 6.4 has one sampling thread, for host
// trap only: it creates a stochastic session with the driver but gives the
// trap handler no stochastic buffers, and faults when the session stops.
// The string in the library is how the CLI tells the two apart before the
// app starts.
var stochasticThread = []byte("PcSamplingStochasticThread")

// runtimeHasStochastic tells whether the ROCR library at path delivers
// stochastic samples (see stochasticThread); true when it cannot be read
// (nothing known: the run goes on).
func runtimeHasStochastic(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return true
	}
	return bytes.Contains(data, stochasticThread)
}

// validatePCSampling checks a PC-sampling request before the app starts:
// the runtime the app will load must offer PC sampling (ROCR 6.4 and
// later; stochastic: ROCR 7.x), and some GPU must offer the method, unit
// and interval asked for (docs/pc-sampling.md).
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
	if cfg.Attaching() {
		return validateAttachedPCSampling(cfg)
	}
	rocr, offers := launch.PCSamplingRuntime(plan.App, "", environ)
	if rocr != "" && !offers {
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
	if cfg.PcSamplingMethod == "stochastic" && rocr != "" && !runtimeHasStochastic(rocr) {
		return fmt.Errorf("PC sampling: the ROCm runtime the app will load, %s, has no stochastic sampling "+
			"(ROCm 6.4's runtime samples with host trap only); ROCm 7.x offers stochastic on gfx942 (MI300); "+
			"use --pc-sampling-method host_trap --pc-sampling-unit time here; the app was not started", rocr)
	}
	return nil
}

// validateAttachedPCSampling is validatePCSampling for --attach PID: the
// runtime the process has loaded must offer PC sampling (stochastic: ROCR
// 7.x), as for a launch; the GPUs' methods are the agent's to check (it
// notes a refusal in the spool).
func validateAttachedPCSampling(cfg *options.Config) error {
	rocr, readable, offers := launch.AttachedPCSamplingRuntime(cfg.AttachTarget())
	if rocr == "" {
		return nil // no runtime mapped (yet): the attach reports it
	}
	if !offers {
		return fmt.Errorf("PC sampling: the ROCm runtime process %d has loaded, %s, has no PC sampling "+
			"(ROCm 5.x and 6.1 do not offer it); ROCm 6.4 or later (7.x included) offers it on %s; nothing was attached",
			cfg.AttachTarget(), rocr, options.PCSamplingArchs)
	}
	if cfg.PcSamplingMethod == "stochastic" && !runtimeHasStochastic(readable) {
		return fmt.Errorf("PC sampling: the ROCm runtime process %d has loaded, %s, has no stochastic sampling "+
			"(ROCm 6.4's runtime samples with host trap only); ROCm 7.x offers stochastic on gfx942 (MI300); "+
			"use --pc-sampling-method host_trap --pc-sampling-unit time here; nothing was attached", cfg.AttachTarget(), rocr)
	}
	return nil
}
