package hosts

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// bareApp is a sample app run on the virtual GPU without the profiler.
type bareApp struct {
	bin    string   // under the runtime's apps directory
	args   []string // "@name": a file of the apps directory
	env    []string
	stdout string // a regular expression its output matches
	newer  bool   // needs ROCm 6 or later (gfx942)
}

var bareApps = []bareApp{
	{bin: "devices", stdout: `devices=1\ndevice 0 name=AMD Instinct MI210 arch=gfx90a`},
	{bin: "features", args: []string{"@module_kernels.co"}, stdout: `module launch ok\nmanaged ok value=42\ncooperative launch ok`},
	{bin: "multistream", args: []string{"4", "8"}, stdout: `streams=4 iterations=8 dispatches=64 copies=128`},
	{bin: "memcheck", stdout: `all copies and memsets round-trip`},
	{bin: "multithread", args: []string{"4", "50"}, stdout: `threads=4 dispatches=200`},
	{bin: "hsa_queues", args: []string{"6"}, stdout: `queues=6 packets=10 memory=ok`},
	{bin: "gfx942/devices", env: []string{"ROCPROF_VGPU_ARCH=gfx942"}, stdout: `name=AMD Instinct MI300X arch=gfx942`, newer: true},
}

// A host whose sysfs has no CPU cache entries (/sys/devices/system/cpu/cpuN/
// cache absent, as on many KVM guests, microVMs and containers) runs rocminfo,
// the sample apps and a profiled run on the virtual GPU under every runtime
// of the matrix. ROCm 5.2's thunk fails its topology there unless the KFD CPU
// node lists the caches itself (vgpu/src/topology.c).
func TestNoCPUCacheSysfsOnEveryRuntime(t *testing.T) {
	vgpu := testsys.Artifact(t, "vgpu/librocprof-go-vgpu.so")
	cli := testsys.Artifact(t, "rocprof-go")
	for _, rt := range matrix(t) {
		t.Run(rt.Name, func(t *testing.T) {
			hidden := func(env []string, prog string, args ...string) outcome {
				cmd := command(t, rt, env, prog, args...)
				testsys.InMountNamespace(cmd, testsys.HideCPUCaches)
				return run(t, cmd)
			}
			// The condition holds where the runtime looks: no cache entry.
			o := hidden(baseEnv(), "/bin/sh", "-c", "ls -A /sys/devices/system/cpu/cpu0/cache /sys/devices/system/cpu/cpu1/cache 2>/dev/null | grep -c index || true")
			require.Equal(t, 0, o.code, o.stderr)
			require.Equal(t, "0\n", o.stdout, "the CPU cache entries are still visible")

			bare := append(baseEnv(), "LD_PRELOAD="+vgpu)
			o = hidden(bare, "rocminfo")
			require.Equal(t, 0, o.code, "rocminfo: %s\n%s", o.stdout, o.stderr)
			require.Contains(t, o.stdout, "amdgcn-amd-amdhsa--gfx90a", "rocminfo lists no GPU agent")
			require.Regexp(t, `(?s)Device Type:\s+CPU.*Cache Info:\s+L1:`, o.stdout, "the CPU agent has no cache")
			require.NotContains(t, o.stdout+o.stderr, "Fail to get cache info")

			for _, a := range bareApps {
				if a.newer && rt.Name == rocmmatrix.HostName {
					continue
				}
				args := make([]string, len(a.args))
				for i, x := range a.args {
					if x[0] == '@' {
						x = filepath.Join(rt.Apps, x[1:])
					}
					args[i] = x
				}
				o := hidden(append(append([]string(nil), bare...), a.env...), filepath.Join(rt.Apps, a.bin), args...)
				require.Equal(t, 0, o.code, "%s: %s\n%s", a.bin, o.stdout, o.stderr)
				require.Regexp(t, regexp.MustCompile(a.stdout), o.stdout, a.bin)
			}

			out := t.TempDir()
			o = hidden(baseEnv(), cli, profileArgs(rt, out)...)
			requireEveryRecord(t, o, out, "ROCm "+rt.Name+" without CPU cache sysfs")
		})
	}
}
