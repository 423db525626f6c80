package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// When the GPU stack finds no GPU — its KFD topology unreadable, so hsa_init
// fails; a topology without a GPU node, so the runtime has no GPU agent; a
// GPU the thunk rejects (a bad HSA_OVERRIDE_GFX_VERSION) — a profiled run
// says so, with the thunk's own words where it has any, records it in
// run.json's no_gpu, exits non-zero, and never says the app launched no
// kernel. The topology is broken on purpose with the virtual GPU's
// ROCPROF_VGPU_TOPOLOGY_FAULT (docs/virtual-gpu.md), on every runtime of the
// matrix.
func TestNoGPUIsReportedOnEveryRuntime(t *testing.T) {
	cli := shippedBinary(t)
	onRuntimes(t, nil, func(t *testing.T, rt rocmmatrix.Runtime, cache string) {
		run := func(out string, env ...string) (stderr string, code int) {
			return shippedOnRuntime(t, rt, cli, cache, 3*time.Minute, env, "--virtual-gpu", "--kernel-trace", "--hip-trace", "-f", "csv",
				"-d", out, "-o", "run", "--", filepath.Join(rt.Apps, "multistream"), "1", "1")
		}
		check := func(what string, env []string, reason string, diagnosis string) {
			out := t.TempDir()
			stderr, code := run(out, env...)
			t.Logf("%s, ROCm %s: exit %d\n%s", what, rt.Name, code, stderr)
			require.NotEqual(t, 0, code, "%s, ROCm %s: %s", what, rt.Name, stderr)
			require.Contains(t, stderr, "rocprof-go: error: the GPU stack found no GPU, so nothing ran on one (this is not the app's doing):",
				"%s, ROCm %s", what, rt.Name)
			require.Regexp(t, `pid \d+: `+reason, stderr, "%s, ROCm %s", what, rt.Name)
			require.NotContains(t, stderr, "launched no kernel", "%s, ROCm %s", what, rt.Name)
			require.NotContains(t, stderr, "recorded nothing", "%s, ROCm %s", what, rt.Name)
			require.NotContains(t, stderr, "did not load rocprof-go's shim", "%s, ROCm %s", what, rt.Name)
			m, err := rocprof.LoadManifest(out)
			require.NoError(t, err, "%s, ROCm %s: %s", what, rt.Name, stderr)
			require.NotEmpty(t, m.NoGPU, "%s, ROCm %s: run.json's no_gpu", what, rt.Name)
			require.Regexp(t, "^"+reason, m.NoGPU[0].Reason, "%s, ROCm %s", what, rt.Name)
			require.Contains(t, m.Error, "the GPU stack found no GPU")
			if diagnosis != "" {
				require.Contains(t, stderr, "the thunk (libhsakmt, HSAKMT_DEBUG_LEVEL=3) says: ", "%s, ROCm %s", what, rt.Name)
				require.Contains(t, strings.Join(m.NoGPU[0].Diagnosis, "\n"), diagnosis, "%s, ROCm %s", what, rt.Name)
			}
		}
		check("unreadable topology", []string{"ROCPROF_VGPU_TOPOLOGY_FAULT=unreadable"},
			`hsa_init failed: HSA_STATUS_ERROR_OUT_OF_RESOURCES \(0x1008\)`, "")
		check("no GPU node", []string{"ROCPROF_VGPU_TOPOLOGY_FAULT=no-gpu"},
			`(the HSA runtime found 1 agent, none of them a GPU|hsa_init failed: HSA_STATUS_ERROR_OUT_OF_RESOURCES \(0x1008\))`, "")
		check("a GPU the thunk rejects", []string{"HSA_OVERRIDE_GFX_VERSION=bogus"},
			`hsa_init failed: HSA_STATUS_ERROR_OUT_OF_RESOURCES \(0x1008\)`, "HSA_OVERRIDE_GFX_VERSION bogus is invalid")
	})
}
