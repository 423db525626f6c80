package vgpu

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
)

// PC sampling's ioctl answers as amdkfd does, straight on /dev/kfd: the
// configurations of MI200 (host trap) and MI300 (host trap and stochastic),
// none elsewhere, and the sessions' life with the driver's errno values
// (vgpu/testdriver/pcs_ioctl.c lists them).
func TestPCSamplingIoctl(t *testing.T) {
	bin := artefact(t, "vgpu-tests/pcs_ioctl")
	full := "ok runtime-enable\nok query\nok create-refused\nok unknown-ids\nok session\nok shared\nok released\n"
	for arch, want := range map[string]string{
		"gfx90a":  full,
		"gfx942":  full,
		"gfx908":  "ok runtime-enable\nok unsupported\n",
		"gfx1100": "ok runtime-enable\nok unsupported\n",
	} {
		t.Run(arch, func(t *testing.T) {
			r := run(t, time.Minute, []string{"ROCPROF_VGPU_ARCH=" + arch}, bin)
			require.Equalf(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			require.Equal(t, want, r.stdout)
		})
	}
}

const (
	pcsHostTrap   = "config method=host_trap unit=time min=1 max=18446744073709551615 flags=0\n"
	pcsStochastic = "config method=stochastic unit=cycles min=256 max=2147483648 flags=1\n"
)

// Through each runtime of the matrix: ROCR 6.4 and 7.2 list the virtual
// MI210's and MI300X's PC-sampling configurations with
// hsa_ven_amd_pcs_iterate_configuration (two GPUs each), and create, start,
// stop and destroy a session with the first; ROCm 5.2 and 6.1 have no
// PC-sampling extension; a GPU without PC sampling lists none (ROCR answers
// HSA_STATUS_ERROR, as for a real one).
func TestPCSamplingConfigurationsOnEveryRuntime(t *testing.T) {
	for _, rt := range runtimes(t) {
		rt := rt
		bin := filepath.Join(rt.Apps, "hsa_pcs")
		if rt.Name == rocmmatrix.HostName || rt.Name == "6.1" {
			t.Run(rt.Name, func(t *testing.T) {
				r := runOn(t, rt, 2*time.Minute, nil, bin, "session")
				require.Equalf(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
				require.Equal(t, "pcs=absent\n", r.stdout)
			})
			continue
		}
		cases := []struct{ arch, want string }{
			{"gfx90a", "gpu 0 name=gfx90a configs=1\n" + pcsHostTrap + "session ok\n" +
				"gpu 1 name=gfx90a configs=1\n" + pcsHostTrap + "session ok\n"},
			{"gfx942", "gpu 0 name=gfx942 configs=2\n" + pcsHostTrap + pcsStochastic + "session ok\n" +
				"gpu 1 name=gfx942 configs=2\n" + pcsHostTrap + pcsStochastic + "session ok\n"},
			{"gfx1100", "gpu 0 name=gfx1100 iterate=0x1000\ngpu 1 name=gfx1100 iterate=0x1000\n"},
		}
		for _, c := range cases {
			c := c
			t.Run(rt.Name+"/"+c.arch, func(t *testing.T) {
				env := []string{"ROCPROF_VGPU_ARCH=" + c.arch, "ROCPROF_VGPU_COUNT=2"}
				r := runOn(t, rt, 2*time.Minute, env, bin, "session")
				require.Equalf(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
				require.Equal(t, c.want, r.stdout)
				require.NotContains(t, r.stderr, "rocprof-go virtual GPU:", "the emulation reported an error or a gap")
			})
		}
	}
}
