package vgpu

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// Host-trap samples through ROCR 6.4 and 7.2 (hsa_pcs samples: the app
// calls hsa_ven_amd_pcs_* itself): the model of docs/pc-sampling.md gives
// floor(D / I) instants per dispatch, every wave sampled at each. module_fill
// over 256 work-items is 4 waves; scaled by 20 it lasts (2000 + 8 x 4) x 20
// = 40,640 ns, so at 1 us 40 instants, 160 samples per dispatch, each naming
// its dispatch (doorbell, packet slot), inside its start and end, with a PC
// inside module_fill's code. A dispatch of 1,024 waves overflows the 1 MiB
// session buffer: ROCR counts the lost samples.
func TestPCSamplingHostTrapSamples(t *testing.T) {
	for _, rt := range runtimes(t) {
		rt := rt
		if rt.Name == rocmmatrix.HostName || rt.Name == "6.1" {
			continue
		}
		for _, arch := range []string{"gfx90a", "gfx942"} {
			arch := arch
			t.Run(rt.Name+"/"+arch, func(t *testing.T) {
				co := filepath.Join(rt.Apps, "module_kernels.co")
				if arch != "gfx90a" {
					co = filepath.Join(rt.Apps, arch, "module_kernels.co")
				}
				size := kernelCodeSize(t, co, "module_fill")
				env := []string{"ROCPROF_VGPU_ARCH=" + arch, "ROCPROF_VGPU_KERNEL_SCALE=module_fill=20"}
				bin := filepath.Join(rt.Apps, "hsa_pcs")
				r := runOn(t, rt, 2*time.Minute, env, bin, "samples", co, "1", "5", "256")
				require.Equalf(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
				out := keyValues(r.stdout)
				require.Equal(t, "800", out["samples"], r.stdout)
				require.Equal(t, "0", out["lost"], r.stdout)
				require.Equal(t, "160,160,160,160,160", out["per_dispatch"], r.stdout)
				require.Equal(t, "0", out["foreign"], r.stdout)
				require.Equal(t, "800", out["exec_ones"], r.stdout)
				require.Equal(t, "800", out["ts_in_dispatch"], r.stdout)
				require.Equal(t, "3", out["wg_max"], r.stdout)
				require.Equal(t, "0", out["pc_offset_min"], r.stdout)
				max, err := strconv.ParseUint(out["pc_offset_max"], 10, 64)
				require.NoError(t, err)
				require.Less(t, max, size, "a PC past module_fill's code")
				require.NotContains(t, r.stderr, "rocprof-go virtual GPU:")

				// 1,024 waves x 203 instants x 3 dispatches, in 8,192-sample buffers
				r = runOn(t, rt, 2*time.Minute, env, bin, "samples", co, "1", "3", "65536")
				require.Equalf(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
				out = keyValues(r.stdout)
				got, _ := strconv.Atoi(out["samples"])
				lost, _ := strconv.Atoi(out["lost"])
				require.Positive(t, lost, r.stdout)
				require.Positive(t, got, r.stdout)
				require.LessOrEqual(t, got+lost, 3*203*1024, r.stdout)
				require.Equal(t, "0", out["foreign"], r.stdout)
			})
		}
	}
}

// Host trap's intervals go up to 2^64-1 us (the configuration the driver
// reports, docs/pc-sampling.md, and what --pc-sampling-interval accepts):
// an interval longer than a dispatch samples nothing. Issue 41: the model
// multiplied the interval by 1,000 in 64 bits, so 2^61 us became 0 ns and
// the virtual GPU divided by zero (the app died of SIGFPE), and 2^64-1
// wrapped to a few microseconds' worth of samples in reach.
func TestPCSamplingHostTrapLongestIntervals(t *testing.T) {
	for _, rt := range runtimes(t) {
		rt := rt
		if rt.Name == rocmmatrix.HostName || rt.Name == "6.1" {
			continue
		}
		t.Run(rt.Name, func(t *testing.T) {
			co := filepath.Join(rt.Apps, "module_kernels.co")
			env := []string{"ROCPROF_VGPU_ARCH=gfx90a", "ROCPROF_VGPU_KERNEL_SCALE=module_fill=20"}
			bin := filepath.Join(rt.Apps, "hsa_pcs")
			for _, iv := range []string{"2305843009213693952", "18446744073709551615", "40"} {
				r := runOn(t, rt, 2*time.Minute, env, bin, "samples", co, iv, "2", "256")
				require.Equalf(t, 0, r.code, "interval %s\nstdout: %s\nstderr: %s", iv, r.stdout, r.stderr)
				out := keyValues(r.stdout)
				want := "0,0" // no dispatch lasts that long
				if iv == "40" {
					want = "4,4" // 40,640 ns: one instant of 4 waves
				}
				require.Equal(t, want, out["per_dispatch"], "interval %s: %s", iv, r.stdout)
				require.Equal(t, "0", out["lost"], r.stdout)
			}
		})
	}
}

// Stochastic samples through ROCR 6.4 and 7.2 on the virtual MI300X
// (hsa_pcs samples ... stochastic): the model of docs/pc-sampling.md turns
// the dispatch's modelled duration into shader-clock cycles at 2,100 MHz
// and samples one wave per CU holding a workgroup at every interval.
// module_fill over 256 work-items (4 workgroups of one wave) scaled by 20
// lasts 40,640 ns = 85,344 cycles, so at 256 cycles floor(85,344 / 256) =
// 333 instants x 4 CUs = 1,332 samples per dispatch, every one valid, the
// even ones (666) issued; each not-issued sample carries its
// instruction's reason, each issued one its type; the CU holds one wave.
// A dispatch of 1,024 workgroups samples 304 CUs at each of its 1,672
// instants and overflows the session's buffers: ROCR counts the loss.
//
// ROCR 6.4 creates and starts a stochastic session with the driver but has
// no stochastic buffers (its sampling thread serves host trap only; 7.x has
// a second one): the trap handler's memory has no stochastic data, which
// the virtual GPU reports at the start (and ROCR 6.4 then faults at stop);
// the CLI refuses stochastic on it.
func TestPCSamplingStochasticSamples(t *testing.T) {
	for _, rt := range runtimes(t) {
		rt := rt
		if rt.Name == rocmmatrix.HostName || rt.Name == "6.1" {
			continue
		}
		t.Run(rt.Name+"/gfx942", func(t *testing.T) {
			co := filepath.Join(rt.Apps, "gfx942", "module_kernels.co")
			size := kernelCodeSize(t, co, "module_fill")
			env := []string{"ROCPROF_VGPU_ARCH=gfx942", "ROCPROF_VGPU_KERNEL_SCALE=module_fill=20"}
			bin := filepath.Join(rt.Apps, "hsa_pcs")
			r := runOn(t, rt, 2*time.Minute, env, bin, "samples", co, "256", "5", "256", "stochastic")
			if rt.Name == "6.4" {
				require.Contains(t, r.stderr, "rocprof-go virtual GPU: error: PC sampling started on GPU 0 "+
					"without sample buffers in the trap handler's memory", r.stdout)
				require.NotContains(t, r.stdout, "samples=")
				return
			}
			require.Equalf(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			out := keyValues(r.stdout)
			// The model's 40,640 ns is the least a dispatch lasts: a virtual
			// GPU thread preempted on a loaded machine ends it later (CI saw
			// 189,180 ns). The samples follow the model either way.
			ns, err := strconv.ParseUint(out["dispatch_ns"], 10, 64)
			require.NoError(t, err, r.stdout)
			require.GreaterOrEqual(t, ns, uint64(40640), r.stdout)
			require.Equal(t, "6660", out["samples"], r.stdout)
			require.Equal(t, "0", out["lost"], r.stdout)
			require.Equal(t, "1332,1332,1332,1332,1332", out["per_dispatch"], r.stdout)
			require.Equal(t, "0", out["foreign"], r.stdout)
			require.Equal(t, "6660", out["exec_ones"], r.stdout)
			require.Equal(t, "6660", out["ts_in_dispatch"], r.stdout)
			require.Equal(t, "3", out["wg_max"], r.stdout)
			require.Equal(t, "6660", out["valid"], r.stdout)
			require.Equal(t, "3330", out["issued"], r.stdout)
			require.Equal(t, "0", out["dual"], r.stdout)
			require.Equal(t, "1", out["wave_count_min"], r.stdout)
			require.Equal(t, "1", out["wave_count_max"], r.stdout)
			max, err := strconv.ParseUint(out["pc_offset_max"], 10, 64)
			require.NoError(t, err)
			require.Less(t, max, size, "a PC past module_fill's code")
			// Issued samples per type and not-issued per reason add up;
			// not issued is never typed (the type field reads NO_INST,
			// code 13, only then).
			types, reasons := codeCounts(t, out["types"]), codeCounts(t, out["reasons"])
			require.Equal(t, 3330, sum(types), r.stdout)
			require.Equal(t, 3330, sum(reasons), r.stdout)
			require.Zero(t, types[13], r.stdout)
			// module_fill waits for its loads (s_waitcnt: WAITCNT, 2) and
			// computes (VALU: type 0 issued, ALU_DEPENDENCY 1 not).
			require.Positive(t, reasons[2], r.stdout)
			require.Positive(t, reasons[1], r.stdout)
			require.Positive(t, types[0], r.stdout)
			require.NotContains(t, r.stderr, "rocprof-go virtual GPU:")

			// 1,024 workgroups: 304 samples x 1,672 instants x 3 dispatches
			// against 8,192-sample buffers
			r = runOn(t, rt, 2*time.Minute, env, bin, "samples", co, "256", "3", "65536", "stochastic")
			require.Equalf(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			out = keyValues(r.stdout)
			got, _ := strconv.Atoi(out["samples"])
			lost, _ := strconv.Atoi(out["lost"])
			require.Positive(t, lost, r.stdout)
			require.Positive(t, got, r.stdout)
			require.LessOrEqual(t, got+lost, 3*1672*304, r.stdout)
			require.Equal(t, "0", out["foreign"], r.stdout)
		})
	}
}

// codeCounts reads hsa_pcs's "code:count,..." lists.
func codeCounts(t *testing.T, s string) map[int]int {
	m := map[int]int{}
	for _, f := range strings.Split(s, ",") {
		if f == "" {
			continue
		}
		c, n, ok := strings.Cut(f, ":")
		require.True(t, ok, s)
		ci, err := strconv.Atoi(c)
		require.NoError(t, err)
		ni, err := strconv.Atoi(n)
		require.NoError(t, err)
		m[ci] = ni
	}
	return m
}

func sum(m map[int]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// keyValues reads hsa_pcs's "k=v k=v" lines.
func keyValues(s string) map[string]string {
	m := map[string]string{}
	for _, f := range strings.Fields(s) {
		if k, v, ok := strings.Cut(f, "="); ok {
			m[k] = v
		}
	}
	return m
}

// kernelCodeSize is the size of the function symbol name in the amdgcn
// code object of a clang offload bundle (hipcc --genco).
func kernelCodeSize(t *testing.T, bundle, name string) uint64 {
	data, err := os.ReadFile(bundle)
	require.NoError(t, err)
	img := data
	if bytes.HasPrefix(data, []byte("__CLANG_OFFLOAD_BUNDLE__")) {
		n := binary.LittleEndian.Uint64(data[24:])
		o := uint64(32)
		for i := uint64(0); i < n; i++ {
			off, sz, idl := binary.LittleEndian.Uint64(data[o:]), binary.LittleEndian.Uint64(data[o+8:]), binary.LittleEndian.Uint64(data[o+16:])
			if bytes.Contains(data[o+24:o+24+idl], []byte("amdgcn")) {
				img = data[off : off+sz]
			}
			o += 24 + idl
		}
	}
	f, err := elf.NewFile(bytes.NewReader(img))
	require.NoError(t, err)
	syms, err := f.Symbols()
	require.NoError(t, err)
	for _, s := range syms {
		if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			return s.Size
		}
	}
	t.Fatalf("%s: no function symbol %s", bundle, name)
	return 0
}
