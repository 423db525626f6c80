package testsys

import (
	"os"
	"strings"
)

// UnprofiledEnv is this process's environment without any variable of a
// profiler, a GPU runtime or the loader (ROCPROF*, ROCP_*, ROCTX*, HSA_*,
// HIP_*, LD_*, AMD_*, XDG_CACHE_HOME): what a program started by hand on a
// machine with ROCm has, for tests that attach to a process started plainly.
func UnprofiledEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "ROCPROF"), strings.HasPrefix(name, "ROCP_"), strings.HasPrefix(name, "ROCTX"),
			strings.HasPrefix(name, "HSA_"), strings.HasPrefix(name, "HIP_"), strings.HasPrefix(name, "LD_"),
			strings.HasPrefix(name, "AMD_"), name == "XDG_CACHE_HOME":
		default:
			env = append(env, kv)
		}
	}
	return env
}
