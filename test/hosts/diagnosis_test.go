package hosts

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// The field's case, recreated: a host without CPU cache sysfs and a CPU node
// that lists no cache (the virtual GPU before it listed them, or a real KFD
// whose CPU node has none: ROCPROF_VGPU_TOPOLOGY_FAULT=host-cpu-caches). ROCm
// 5.2's thunk then fails its topology; the run must say that the GPU stack
// found no GPU, with the thunk's own message, and never blame the app. The
// thunks of 6.1 and later do without the CPU caches: the run keeps every
// record there.
func TestCPUCacheTopologyFailureIsDiagnosed(t *testing.T) {
	cli := testsys.Artifact(t, "rocprof-go")
	for _, rt := range matrix(t) {
		t.Run(rt.Name, func(t *testing.T) {
			out := t.TempDir()
			env := append(baseEnv(), "ROCPROF_VGPU_TOPOLOGY_FAULT=host-cpu-caches")
			cmd := command(t, rt, env, cli, profileArgs(rt, out)...)
			testsys.InMountNamespace(cmd, testsys.HideCPUCaches)
			o := run(t, cmd)
			if rt.Name != rocmmatrix.HostName {
				requireEveryRecord(t, o, out, "ROCm "+rt.Name+", a CPU node without caches on a host without CPU cache sysfs")
				return
			}
			require.NotEqual(t, 0, o.code, o.stderr)
			require.Contains(t, o.stderr, "the GPU stack found no GPU")
			require.Contains(t, o.stderr, "Fail to get cache info for node 0", "the thunk's own reason")
			require.NotContains(t, o.stderr, "launched no kernel")
			require.NotContains(t, o.stderr, "recorded nothing")
			data, err := os.ReadFile(filepath.Join(out, "run.json"))
			require.NoError(t, err)
			var m struct {
				NoGPU []struct {
					Reason    string   `json:"reason"`
					Diagnosis []string `json:"diagnosis"`
				} `json:"no_gpu"`
			}
			require.NoError(t, json.Unmarshal(data, &m))
			require.NotEmpty(t, m.NoGPU, "run.json's no_gpu: %s", data)
			require.Contains(t, strings.Join(m.NoGPU[0].Diagnosis, "\n"), "Fail to get cache info for node 0")
		})
	}
}
