// Package pcsprobe asks a ROCm runtime which PC-sampling configurations
// its GPUs offer (ROCR's hsa_ven_amd_pcs_iterate_configuration, ROCm 6.4
// and later), as rocprofv3 -L lists them. It loads the runtime with dlopen
// and initialises HSA, so it runs in a probe process of its own (the CLI's
// hidden __pcs-probe command, started with the app's environment: the
// virtual GPU preloaded when the run uses it), never in the CLI itself.
// Without cgo it answers that it cannot ask (the CLI then lists its
// built-in table).
package pcsprobe

import "strconv"

// Config is one configuration a GPU offers, in the runtime's terms
// (hsa_ven_amd_pcs_configuration_t).
type Config struct {
	Method string `json:"method"` // host_trap or stochastic
	Unit   string `json:"unit"`   // time, cycles or instructions
	Min    uint64 `json:"min"`
	Max    uint64 `json:"max"`
	Pow2   bool   `json:"pow2"` // HSA_VEN_AMD_PCS_CONFIGURATION_FLAGS_INTERVAL_POWER_OF_2
}

// GPU is one GPU agent of the runtime, in its enumeration order.
type GPU struct {
	Node    uint32   `json:"node"` // the KFD node id (HSA_AMD_AGENT_INFO_DRIVER_NODE_ID)
	Name    string   `json:"name"` // HSA_AGENT_INFO_NAME, e.g. gfx942
	Configs []Config `json:"configs"`
	// Err is the runtime's answer when iterating failed (status code).
	Err string `json:"error,omitempty"`
}

var methods = map[int]string{0: "host_trap", 1: "stochastic"}
var units = map[int]string{0: "time", 1: "cycles", 2: "instructions"}

func methodName(m int) string {
	if s, ok := methods[m]; ok {
		return s
	}
	return "method_" + strconv.Itoa(m)
}

func unitName(u int) string {
	if s, ok := units[u]; ok {
		return s
	}
	return "unit_" + strconv.Itoa(u)
}
