package vgpu

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
)

// marketing is each architecture's agent name, as rocminfo prints it.
var marketing = map[string]string{
	"gfx90a": "AMD Instinct MI210", "gfx908": "AMD Instinct MI100", "gfx906": "AMD Instinct MI50",
	"gfx900": "Radeon Instinct MI25", "gfx942": "AMD Instinct MI300X", "gfx1030": "AMD Radeon RX 6800 XT",
	"gfx1100": "AMD Radeon RX 7900 XTX",
}

// Each runtime's own rocminfo lists the virtual agents of every emulated
// architecture it knows (ROCR 5.2.3 has no gfx94x or gfx11 in its ISA
// table: it starts and lists none), two of them with ROCPROF_VGPU_COUNT=2.
func TestRocminfoListsEveryArchitecture(t *testing.T) {
	for _, rt := range runtimes(t) {
		for _, arch := range rocmmatrix.AllArchs {
			t.Run(rt.Name+"/"+arch, func(t *testing.T) {
				r := runOn(t, rt, time.Minute, []string{"ROCPROF_VGPU_ARCH=" + arch, "ROCPROF_VGPU_COUNT=2"}, "rocminfo")
				require.Equalf(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
				require.NotContains(t, r.stderr, "rocprof-go virtual GPU:", "the emulation reported an error or a gap")
				isa := "amdgcn-amd-amdhsa--" + arch
				if !slices.Contains(rt.Archs(), arch) {
					require.NotContains(t, r.stdout, isa, "ROCm %s does not know %s", rt.Name, arch)
					return
				}
				require.Regexp(t, `(?s)Marketing Name:\s+`+marketing[arch]+`\s.*Marketing Name:\s+`+marketing[arch]+`\s`, r.stdout,
					"two agents named %q", marketing[arch])
				require.Contains(t, r.stdout, isa)
			})
		}
	}
}

// Two streams' kernels run at the same time on every runtime: with 30 ms
// kernels launched from two threads on their own streams, dispatches of
// different queues overlap in time.
func TestQueuesProgressConcurrently(t *testing.T) {
	for _, rt := range runtimes(t) {
		t.Run(rt.Name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "vgpu.jsonl")
			r := runOn(t, rt, time.Minute, []string{"ROCPROF_VGPU_LOG=" + log, "ROCPROF_VGPU_KERNEL_BASE_NS=30000000"},
				filepath.Join(rt.Apps, "multithread"), "2", "3")
			require.Equal(t, 0, r.code, r.stderr)
			ds := dispatches(readLog(t, log), "_Z4tinyPi")
			require.Len(t, ds, 6)
			overlap := false
			for i := range ds {
				for j := range ds {
					if ds[i].Queue != ds[j].Queue && ds[i].StartTS < ds[j].EndTS && ds[j].StartTS < ds[i].EndTS {
						overlap = true
					}
				}
			}
			require.True(t, overlap, "no two queues ever ran kernels at the same time: %+v", ds)
		})
	}
}
