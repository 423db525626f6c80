package topology

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Agent is one GPU as the profiler will see it.
type Agent struct {
	Index  int    // 0-based GPU index (HIP device order)
	NodeID int    // KFD node id (absolute agent id)
	Arch   string // gfx name without features, e.g. "gfx90a"
	// Properties holds the KFD node properties (simd_count, cu_per_simd_array, ...).
	Properties map[string]uint64
	Virtual    bool
}

// ErrNoGPU is returned when neither a GPU nor a virtual GPU is available.
var ErrNoGPU = errors.New("no AMD GPU found (no KFD topology in /sys/class/kfd): run on rocprof-go's virtual GPU with --virtual-gpu")

// VirtualCountEnv sets how many virtual GPUs the virtual GPU reports.
const VirtualCountEnv = "ROCPROF_VGPU_COUNT"

// VirtualEnvPrefix begins the names of the virtual GPU's settings
// (docs/virtual-gpu.md); VirtualFaultEnv breaks its KFD topology on
// purpose, for tests of a GPU stack that finds no GPU.
const (
	VirtualEnvPrefix = "ROCPROF_VGPU_"
	VirtualFaultEnv  = "ROCPROF_VGPU_TOPOLOGY_FAULT"
)

// DefaultSysfs is where the amdgpu driver publishes the KFD topology.
const DefaultSysfs = "/sys/class/kfd/kfd/topology/nodes"

// Detect returns the GPU agents: virtualArch's when the run uses the virtual
// GPU, otherwise the ones in the KFD topology under sysfs.
func Detect(virtualArch string, lookupEnv func(string) (string, bool), sysfs string) ([]Agent, error) {
	if virtualArch != "" {
		n := 1
		if v, ok := lookupEnv(VirtualCountEnv); ok && v != "" {
			c, err := strconv.Atoi(v)
			if err != nil || c < 1 || c > 8 {
				return nil, fmt.Errorf("%s=%q: the virtual GPU has 1 to 8 GPUs", VirtualCountEnv, v)
			}
			n = c
		}
		agents := make([]Agent, n)
		for i := range agents {
			agents[i] = Agent{Index: i, NodeID: i + 1, Arch: virtualArch, Virtual: true}
		}
		return agents, nil
	}
	return fromSysfs(sysfs)
}

func fromSysfs(root string) ([]Agent, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, ErrNoGPU
	}
	var agents []Agent
	for _, e := range entries {
		node, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		props, err := readProperties(filepath.Join(root, e.Name(), "properties"))
		if err != nil {
			continue
		}
		if props["simd_count"] == 0 {
			continue // a CPU node
		}
		agents = append(agents, Agent{NodeID: node, Arch: ArchFromTargetVersion(props["gfx_target_version"]), Properties: props})
	}
	if len(agents) == 0 {
		return nil, ErrNoGPU
	}
	sort.Slice(agents, func(i, j int) bool { return agents[i].NodeID < agents[j].NodeID })
	for i := range agents {
		agents[i].Index = i
	}
	return agents, nil
}

func readProperties(path string) (map[string]uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	props := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			continue
		}
		if v, err := strconv.ParseUint(fields[1], 10, 64); err == nil {
			props[fields[0]] = v
		}
	}
	return props, sc.Err()
}

// ArchFromTargetVersion turns KFD's gfx_target_version (major*10000 +
// minor*100 + stepping, e.g. 90010) into the gfx name ("gfx90a"): minor and
// stepping are single hexadecimal digits in gfx names.
func ArchFromTargetVersion(v uint64) string {
	major, minor, step := v/10000, (v/100)%100, v%100
	return fmt.Sprintf("gfx%d%x%x", major, minor, step)
}
