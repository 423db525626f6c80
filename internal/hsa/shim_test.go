package main

import (
	"bufio"
	"cmp"
	"debug/buildinfo"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

var allDomains = []string{
	"ROCPROF_KERNEL_TRACE=1", "ROCPROF_MEMORY_COPY_TRACE=1", "ROCPROF_MEMORY_ALLOCATION_TRACE=1",
	"ROCPROF_HSA_CORE_API_TRACE=1", "ROCPROF_HSA_AMD_EXT_API_TRACE=1",
	"ROCPROF_HSA_IMAGE_EXT_API_TRACE=1", "ROCPROF_HSA_FINALIZER_EXT_API_TRACE=1",
}

// The multistream app's known work: stream s (0..3) runs s+1 vadd, 2 scale
// and 1 fill3d, plus one H2D and one D2H copy of 4 KiB.
func TestMultiStreamYieldsExactlyItsDispatchesCopiesAndCalls(t *testing.T) {
	r := runApp(t, allDomains, "multistream", "run", "7")
	require.Equal(t, 7, r.exitCode, "the app's exit code is preserved")
	require.Contains(t, r.stdout, "done")
	rs := readSpools(t, r.spools)
	require.Zero(t, rs.torn)

	type shape struct {
		grid, wg [3]uint32
		lds      uint32
	}
	want := map[string]shape{
		"_Z4vaddPKfS0_Pfi.kd": {[3]uint32{1024, 1, 1}, [3]uint32{256, 1, 1}, 0},
		"_Z5scalePffi.kd":     {[3]uint32{1024, 1, 1}, [3]uint32{128, 1, 1}, 512},
		"_Z6fill3dPff.kd":     {[3]uint32{64, 8, 4}, [3]uint32{16, 2, 1}, 256},
	}
	counts := map[string]int{}
	perQueue := map[uint64]int{}
	ids := map[uint64]bool{}
	start := uint64(0)
	for _, d := range rs.dispatches {
		name := rs.kernelName(d)
		counts[name]++
		s, ok := want[name]
		require.True(t, ok, "unexpected kernel %q", name)
		require.Equal(t, s.grid, d.Grid, name)
		require.Equal(t, s.wg, d.Workgroup, name)
		require.Equal(t, s.lds, d.GroupSegmentSize, name)
		require.Zero(t, d.PrivateSegmentSize, name)
		require.NotZero(t, d.VGPRCount, name)
		require.NotZero(t, d.SGPRCount, name)
		require.Equal(t, uint32(1), d.AgentNode, "the GPU is KFD node 1")
		require.NotZero(t, d.CorrelationID)
		require.NotZero(t, d.TID)
		require.Less(t, d.Start, d.End, name)
		require.False(t, ids[d.DispatchID], "dispatch id %d twice", d.DispatchID)
		ids[d.DispatchID] = true
		perQueue[d.QueueID]++
		if start == 0 || d.Start < start {
			start = d.Start
		}
	}
	require.Equal(t, map[string]int{"_Z4vaddPKfS0_Pfi.kd": 10, "_Z5scalePffi.kd": 8,
		"_Z6fill3dPff.kd": 4}, counts)
	require.Len(t, rs.dispatches, 22)
	for id := uint64(1); id <= 22; id++ {
		require.True(t, ids[id], "dispatch ids run 1..22, %d missing", id)
	}
	var sizes []int
	for _, n := range perQueue {
		sizes = append(sizes, n)
	}
	require.ElementsMatch(t, []int{4, 5, 6, 7}, sizes, "one queue per stream")
	// Timestamps are CLOCK_BOOTTIME ns: after the spool was created, before now.
	var ts syscall.Timespec
	require.NoError(t, clockGettime(&ts))
	require.Less(t, start, uint64(ts.Nano()))

	require.Len(t, rs.copies, 8)
	dirs := map[tracing.CopyDirection]int{}
	for _, c := range rs.copies {
		dirs[c.Direction]++
		require.Equal(t, uint64(4096), c.Bytes)
		require.Less(t, c.Start, c.End)
		require.NotZero(t, c.CorrelationID)
		if c.Direction == tracing.CopyHostToDevice {
			require.Equal(t, [2]uint32{0, 1}, [2]uint32{c.SrcAgentNode, c.DstAgentNode})
		} else {
			require.Equal(t, [2]uint32{1, 0}, [2]uint32{c.SrcAgentNode, c.DstAgentNode})
		}
	}
	require.Equal(t, map[tracing.CopyDirection]int{tracing.CopyHostToDevice: 4,
		tracing.CopyDeviceToHost: 4}, dirs)

	calls := map[string]int{}
	corr := map[uint64]bool{}
	for _, a := range rs.api {
		name, ok := rs.strings[uint32(a.Domain)][uint64(a.Function)]
		require.True(t, ok, "function %d of domain %v has a name in the spool", a.Function, a.Domain)
		calls[name]++
		require.LessOrEqual(t, a.Start, a.End)
		require.False(t, corr[a.CorrelationID], "correlation id %d twice", a.CorrelationID)
		corr[a.CorrelationID] = true
	}
	require.Equal(t, 4, calls["hsa_queue_create"])
	require.Equal(t, 8, calls["hsa_amd_memory_async_copy"])
	require.Equal(t, 1, calls["hsa_iterate_agents"])
	require.Positive(t, calls["hsa_executable_freeze"])
	require.Equal(t, "hsa_agent_get_info", rs.strings[uint32(tracing.DomainHSACore)][6])
	require.Equal(t, "hsa_amd_memory_async_copy", rs.strings[uint32(tracing.DomainHSAAMDExt)][15])

	var allocated int
	for _, a := range rs.allocs {
		if a.Operation == tracing.AllocAllocate {
			allocated++
			require.NotZero(t, a.Address)
			require.NotZero(t, a.Size)
		}
	}
	require.Positive(t, allocated)
	require.Equal(t, calls["hsa_amd_memory_pool_allocate"], allocated)

	require.Len(t, rs.agents, 2)
	cpu, gpu := rs.agents[0], rs.agents[1]
	require.Equal(t, tracing.AgentCPU, cpu.Type())
	require.Equal(t, tracing.AgentGPU, gpu.Type())
	require.Positive(t, cpu.Values[tracing.AgentCPUCoresCount])
	require.Zero(t, cpu.Values[tracing.AgentSIMDCount])
	require.Equal(t, uint64(1), gpu.NodeID())
	require.Equal(t, uint64(104), gpu.Values[agentCUCount])
	require.Equal(t, uint64(90010), gpu.Values[agentGfxTargetVersion])
	require.Equal(t, uint64(64), gpu.Values[agentWaveFrontSize])
	require.Equal(t, "gfx90a", gpu.Name)

	var uris []string
	for _, c := range rs.codeObjs {
		if c.Operation == tracing.CodeObjectLoad {
			uris = append(uris, string(c.URI))
			require.NotZero(t, c.LoadBase)
		}
	}
	require.True(t, strings.Contains(strings.Join(uris, " "), "multistream#offset="), "%v", uris)
}

func clockGettime(ts *syscall.Timespec) error {
	const clockBoottime = 7
	_, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockBoottime, uintptr(unsafe.Pointer(ts)), 0)
	if e != 0 {
		return e
	}
	return nil
}

// HIP's correlation id, when a wrapper set one on the thread, becomes the
// parent of the HSA calls made under it (first u64 of the argument blob);
// without one the blob is empty.
func TestAPICallsCarryNoParentWithoutHIPWrapper(t *testing.T) {
	r := runApp(t, []string{"ROCPROF_HSA_CORE_API_TRACE=1"}, "agentinfo", "1000")
	require.Zero(t, r.exitCode)
	rs := readSpools(t, r.spools)
	n := 0
	for _, a := range rs.api {
		if a.Function == 6 && a.Domain == tracing.DomainHSACore {
			n++
		}
		if len(a.Args) >= 8 {
			require.NotZero(t, binary.LittleEndian.Uint64(a.Args))
		}
	}
	// The loop's 1000 calls, plus the app's one in its agent search.
	require.GreaterOrEqual(t, n, 1001)
	require.Empty(t, rs.dispatches, "kernel tracing was off")
	require.Len(t, rs.agents, 2)
	for _, a := range rs.api {
		require.Equal(t, tracing.DomainHSACore, a.Domain, "only the core domain was on")
	}
}

// Under the HIP interposers, a dispatch or copy carries the correlation id
// and stream of the HIP call that enqueued it, and HSA calls made inside a
// HIP call name it as their parent.
func TestDispatchesAndCopiesCarryTheirHIPCall(t *testing.T) {
	r := runApp(t, append([]string{"ROCPROF_HIP_RUNTIME_API_TRACE=1", "ROCPROF_HIP_COMPILER_API_TRACE=1"},
		allDomains...),
		"multistream", "run", "0")
	require.Zero(t, r.exitCode)
	rs := readSpools(t, r.spools)
	hip := map[uint64]tracing.APICall{}
	for _, h := range rs.hip {
		hip[h.CorrelationID] = h
	}
	require.NotEmpty(t, hip)
	streamOfQueue := map[uint64]uint64{}
	for _, d := range rs.dispatches {
		h, ok := hip[d.CorrelationID]
		require.True(t, ok, "dispatch %d: correlation id %d is a HIP call's", d.DispatchID, d.CorrelationID)
		require.Equal(t, h.TID, d.TID)
		require.LessOrEqual(t, h.Start, d.Start, "enqueued before it ran")
		require.NotZero(t, d.StreamID, "the app launches on created streams only")
		if s, seen := streamOfQueue[d.QueueID]; seen {
			require.Equal(t, s, d.StreamID, "one stream per queue")
		}
		streamOfQueue[d.QueueID] = d.StreamID
	}
	require.Len(t, streamOfQueue, 4)
	for _, c := range rs.copies {
		_, ok := hip[c.CorrelationID]
		require.True(t, ok, "copy correlation id %d is a HIP call's", c.CorrelationID)
		require.NotZero(t, c.StreamID)
	}
	parents := 0
	for _, a := range rs.api {
		require.NotContains(t, hip, a.CorrelationID, "HSA calls get their own ids")
		if len(a.Args) >= 8 {
			_, ok := hip[binary.LittleEndian.Uint64(a.Args)]
			require.True(t, ok, "parent %d of HSA call %s is a HIP call",
				binary.LittleEndian.Uint64(a.Args), rs.strings[uint32(a.Domain)][uint64(a.Function)])
			parents++
		}
	}
	require.Positive(t, parents)
}

func TestAbortKeepsCompletedDispatches(t *testing.T) {
	r := runApp(t, []string{"ROCPROF_KERNEL_TRACE=1"}, "multistream", "abort", "300")
	require.True(t, r.signaled, "the app aborts")
	rs := readSpools(t, r.spools)
	require.Len(t, rs.dispatches, 300)
	for _, d := range rs.dispatches {
		require.Equal(t, "_Z4vaddPKfS0_Pfi.kd", rs.kernelName(d))
	}
}

func TestSIGKILLKeepsCompletedDispatches(t *testing.T) {
	spools := t.TempDir()
	cmd := exec.Command(artifact(t, "test/shim/multistream"), "hang", "300")
	cmd.Env = appEnv(t, spools, false, "ROCPROF_KERNEL_TRACE=1")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	rs := readSpools(t, spools)
	require.Len(t, rs.dispatches, 300, "every dispatch the app saw complete")
}

func TestNothingRecordedWithoutDomains(t *testing.T) {
	r := runApp(t, nil, "multistream", "run", "0")
	require.Zero(t, r.exitCode)
	paths, err := filepath.Glob(filepath.Join(r.spools, "*"))
	require.NoError(t, err)
	require.Empty(t, paths, "no domain on: no spool")
}

func TestShimDeclinesWithoutPreloadLibrary(t *testing.T) {
	cmd := exec.Command(artifact(t, "test/shim/multistream"), "run", "3")
	env := appEnv(t, t.TempDir(), true)
	cmd.Env = append(env, "HSA_TOOLS_LIB="+artifact(t, "lib/librocprof-go-shim.so"),
		"ROCPROF_KERNEL_TRACE=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 3, ee.ExitCode(), "the app runs unprofiled: %s", out)
	require.Contains(t, string(out), "needs librocprof-go-preload.so")
}

// A preload library from another build (its hot-path layout differs from
// the one the shim's tracers were compiled with) is refused at OnLoad, and
// the app runs unprofiled, instead of the tracers writing through a wrong
// layout.
func TestShimDeclinesPreloadLibraryOfAnotherBuild(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "other.c")
	require.NoError(t, os.WriteFile(src, []byte(`#include <stdint.h>
uint32_t rpg_domains = 1;
int rpg_record_api(void) { return 0; }
int rpg_api_end(void) { return 0; }
static const uint32_t abi[16] = {8, 1};
const void *rpg_inline_abi_get(void) { return abi; }
`), 0o600))
	lib := filepath.Join(dir, "librocprof-go-preload.so")
	out, err := exec.Command("cc", "-shared", "-fPIC", "-o", lib, src).CombinedOutput()
	require.NoError(t, err, string(out))
	cmd := exec.Command(artifact(t, "test/shim/multistream"), "run", "3")
	env := appEnv(t, t.TempDir(), true)
	cmd.Env = append(env, vgpuPreload(t, lib),
		"HSA_TOOLS_LIB="+artifact(t, "lib/librocprof-go-shim.so"), "ROCPROF_KERNEL_TRACE=1")
	out, err = cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 3, ee.ExitCode(), "the app runs unprofiled: %s", out)
	require.Contains(t, string(out), "from another rocprof-go build")
}

// asyncpreemptoff=1 keeps SIGURG out of the app's threads. It is set through
// an internal runtime variable at link time (-trimpath keeps -ldflags out of
// the build info), so check that the runtime's default GODEBUG string in the
// built library carries it.
func TestShimIsBuiltWithAsyncPreemptOff(t *testing.T) {
	lib := artifact(t, "lib/librocprof-go-shim.so")
	info, err := buildinfo.ReadFile(lib)
	require.NoError(t, err)
	var mode string
	for _, s := range info.Settings {
		if s.Key == "-buildmode" {
			mode = s.Value
		}
	}
	require.Equal(t, "c-shared", mode)
	b, err := os.ReadFile(lib)
	require.NoError(t, err)
	require.Contains(t, string(b), "asyncpreemptoff=1")
}

// The library must export OnLoad/OnUnload and nothing that could shadow libc.
func TestShimExportsNoLibcNames(t *testing.T) {
	out, err := exec.Command("nm", "-D", "--defined-only", artifact(t, "lib/librocprof-go-shim.so")).Output()
	require.NoError(t, err)
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		names = append(names, f[len(f)-1])
	}
	require.Contains(t, names, "OnLoad")
	require.Contains(t, names, "OnUnload")
	libc, err := exec.Command("nm", "-D", "--defined-only", "/lib/x86_64-linux-gnu/libc.so.6").Output()
	require.NoError(t, err)
	libcNames := map[string]bool{}
	for _, l := range strings.Split(string(libc), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			libcNames[strings.SplitN(f[len(f)-1], "@", 2)[0]] = true
		}
	}
	for _, n := range names {
		require.False(t, libcNames[n], "the shim exports libc's %s", n)
	}
}

// Register counts as rocprofv3 decodes the descriptor: arch VGPRs from the
// VGPR granule (4 per granule, 8 in wave32) or, on gfx90a/gfx94x, from
// ACCUM_OFFSET; accumulation VGPRs the rest of the unified file in granules
// of 8 (gfx90a/gfx94x) or the arch count again (gfx908); SGPRs the 8-register
// granule rounded up to 16, or 128 on gfx10 and later.
func TestDescriptorRegisterCounts(t *testing.T) {
	const wave32 = 1 << 10
	for _, c := range []struct {
		name                string
		major, minor        uint32
		rsrc1, rsrc3, props uint32
		want                [3]uint32 // arch VGPRs, accum VGPRs, SGPRs
	}{
		{"gfx90a, 4 arch VGPRs in a granule of 8", 9, 0x0a, 1 | 1<<6, 0, 0, [3]uint32{4, 12, 16}},
		{"gfx90a, no AGPRs yet 4 (the 8-granule)", 9, 0x0a, 0, 0, 0, [3]uint32{4, 4, 16}},
		{"gfx90a, ACCUM_OFFSET at the end", 9, 0x0a, 1 | 1<<6, 3, 0, [3]uint32{16, 0, 16}},
		{"gfx90a, rocprofiler-sdk's own example", 9, 0x0a, 5 | 6<<6, 7, 0, [3]uint32{32, 16, 64}},
		{"gfx942", 9, 0x42, 5 | 6<<6, 7, 0, [3]uint32{32, 16, 64}},
		{"gfx90a, malformed ACCUM_OFFSET past the allocation", 9, 0x0a, 0, 63, 0, [3]uint32{256, 0, 16}},
		{"gfx908 mirrors its VGPRs in AGPRs", 9, 0x08, 1 | 1<<6, 0, 0, [3]uint32{8, 8, 16}},
		{"gfx906, 24 SGPRs encoded read as 32", 9, 0x06, 1 | 2<<6, 3, 0, [3]uint32{8, 0, 32}},
		{"gfx900", 9, 0x00, 7 | 5<<6, 0, 0, [3]uint32{32, 0, 48}},
		{"gfx1030 wave32", 10, 0x30, 4 | 3<<6, 0, wave32, [3]uint32{40, 0, 128}},
		{"gfx1030 wave64", 10, 0x30, 4, 0, 0, [3]uint32{20, 0, 128}},
		{"gfx1100 wave32", 11, 0x00, 2, 0, wave32, [3]uint32{24, 0, 128}},
		{"gfx1151 wave32 (rocprofiler-sdk's own example)", 11, 0x51, 4, 0, wave32, [3]uint32{40, 0, 128}},
		{"gfx803, decoded like any GCN", 8, 0x03, 1 | 1<<6, 0, 0, [3]uint32{8, 0, 16}},
	} {
		kd := make([]byte, 64)
		binary.LittleEndian.PutUint32(kd[44:], c.rsrc3)
		binary.LittleEndian.PutUint32(kd[48:], c.rsrc1)
		binary.LittleEndian.PutUint16(kd[56:], uint16(c.props))
		v, a, s := decodeDescriptor(kd, c.major, c.minor)
		require.Equal(t, c.want, [3]uint32{v, a, s}, c.name)
	}
}

// agent_info.csv column indexes this test checks beyond tracing's named ones.
const (
	agentWaveFrontSize    = 11
	agentCUCount          = 13
	agentGfxTargetVersion = 20
)

// hipMemset and device-to-device hipMemcpy run ROCclr's own blit kernels on
// the app's queue; rocprofv3 lists them under their symbol names.
func TestROCclrBlitKernelsAreNamed(t *testing.T) {
	r := runApp(t, []string{"ROCPROF_KERNEL_TRACE=1"}, "multistream", "blit", "5")
	require.Equal(t, 5, r.exitCode)
	rs := readSpools(t, r.spools)
	// In dispatch order: the records come from the queue's completion thread
	// or from the app thread whose wait finished them (shim_queue_assist),
	// each in its own part of the spool.
	ds := slices.Clone(rs.dispatches)
	slices.SortFunc(ds, func(a, b tracing.KernelDispatch) int { return cmp.Compare(a.DispatchID, b.DispatchID) })
	var names []string
	for _, d := range ds {
		names = append(names, rs.kernelName(d))
	}
	require.Equal(t, []string{"__amd_rocclr_fillBufferAligned.kd", "__amd_rocclr_copyBuffer.kd",
		"_Z4vaddPKfS0_Pfi.kd"}, names)
}

// A raw HSA app with cross-queue barrier-AND/OR dependencies checks the HSA
// ordering rules itself; under kernel tracing they must still hold, its
// dispatches must be recorded, and hsa_shut_down (OnUnload) must leave no
// signal of ours behind.
func TestRawHSAQueuesKeepTheirSemantics(t *testing.T) {
	r := runBuilt(t, []string{"ROCPROF_KERNEL_TRACE=1", "ROCPROF_MEMORY_COPY_TRACE=1"},
		"testdata/hsa_queues")
	require.Zero(t, r.exitCode, r.stderr)
	require.Regexp(t, `queues=4 packets=\d+ memory=ok`, r.stdout)
	require.NotContains(t, r.stderr, "leak")
	rs := readSpools(t, r.spools)
	var grids []uint32
	queues := map[uint64]bool{}
	for _, d := range rs.dispatches {
		grids = append(grids, d.Grid[0])
		require.Equal(t, [3]uint32{64, 1, 1}, d.Workgroup)
		require.Less(t, d.Start, d.End)
		queues[d.QueueID] = true
	}
	// The app's four cross-queue dispatches (it may add others, e.g. a
	// profiled one whose timestamps it checks on its own signal).
	require.Subset(t, grids, []uint32{4096, 64})
	require.GreaterOrEqual(t, len(grids), 4)
	require.Len(t, queues, 4)
	require.NotEmpty(t, rs.copies)
}

// On a real machine the KFD topology fills the agent_info columns HSA has
// no attribute for (a fake topology directory stands in for sysfs here).
func TestAgentInfoTakesKFDTopology(t *testing.T) {
	topo := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(topo, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	}
	write("nodes/0/properties", "cpu_cores_count 2\ncpu_core_id_base 7\nsimd_count 0\n")
	write("nodes/1/properties", "simd_count 416\nsimd_id_base 2147487744\ndrm_render_minor 128\n"+
		"num_sdma_engines 2\nsdma_fw_version 8\nfw_version 59\ncapability 671588992\nnum_gws 64\n")
	write("nodes/1/gpu_id", "53124\n")
	r := runApp(t, []string{"ROCPROF_HSA_CORE_API_TRACE=1", "ROCPROF_GO_KFD_TOPOLOGY=" + topo},
		"agentinfo", "10")
	require.Zero(t, r.exitCode)
	rs := readSpools(t, r.spools)
	require.Len(t, rs.agents, 2)
	cpu, gpu := rs.agents[0].Values, rs.agents[1].Values
	require.Equal(t, uint64(7), cpu[5], "cpu_core_id_base")
	require.Equal(t, uint64(2147487744), gpu[6], "simd_id_base")
	require.Equal(t, uint64(64), gpu[10], "num_gws")
	require.Equal(t, uint64(128), gpu[25], "drm_render_minor")
	require.Equal(t, uint64(2), gpu[26], "num_sdma_engines")
	require.Equal(t, uint64(8), gpu[32], "sdma_fw_version")
	require.Equal(t, uint64(59), gpu[33], "fw_version")
	require.Equal(t, uint64(671588992), gpu[34], "capability")
	require.Equal(t, uint64(53124), gpu[42], "gpu_id")
	require.Equal(t, uint64(104), gpu[agentCUCount], "HSA values stay where KFD is silent")
}

// An app that returns from main without synchronising still gets the
// dispatches that complete while the process exits.
func TestDispatchesWithoutSyncAreDrainedAtExit(t *testing.T) {
	r := runApp(t, []string{"ROCPROF_KERNEL_TRACE=1"}, "multistream", "nosync", "500")
	require.Zero(t, r.exitCode)
	rs := readSpools(t, r.spools)
	require.Len(t, rs.dispatches, 500)
}

// hipModuleLoad kernels, cooperative launches (their own queue) and hipEvent
// timing (which reads the timestamps of the app's signals) under tracing.
func TestModuleCooperativeAndEventTimingUnderTracing(t *testing.T) {
	r := runBuilt(t, []string{"ROCPROF_KERNEL_TRACE=1", "ROCPROF_MEMORY_COPY_TRACE=1"},
		"testdata/features", artifact(t, "testdata/module_kernels.co"))
	require.Zero(t, r.exitCode, r.stderr)
	require.Contains(t, r.stdout, "cooperative launch ok")
	require.Contains(t, r.stdout, "event timing ok")
	rs := readSpools(t, r.spools)
	names := map[string]int{}
	for _, d := range rs.dispatches {
		names[rs.kernelName(d)]++
		require.Less(t, d.Start, d.End)
	}
	require.Equal(t, 1, names["module_fill.kd"])
	require.Equal(t, 2, names["_Z4coopPi.kd"])
}

// OnLoad replaces every slot that both the running runtime (minor_id) and
// the shim's headers know, and nothing past either: an older runtime's
// shorter tables and a newer runtime's longer ones are both safe.
func TestOnLoadWrapsOnlyTheSlotsBothSidesKnow(t *testing.T) {
	for mode, want := range map[string]string{
		"short": "ok 167\n", // 10, 10, 3 and 2 functions fewer than the headers
		"long":  "ok 192\n", // all 125 + 48 + 13 + 6 known functions
	} {
		cmd := exec.Command(artifact(t, "test/shim/onload_sizes"),
			artifact(t, "lib/librocprof-go-shim.so"), mode)
		cmd.Env = append(os.Environ(), "LD_PRELOAD="+artifact(t, "lib/librocprof-go-preload.so"))
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("%s: %s", mode, ee.Stderr)
		}
		require.NoError(t, err)
		require.Equal(t, want, string(out), mode)
	}
}

// A runtime whose API tables rocprof-go does not know: OnLoad declines, says
// why on stderr, and notes it in the spool, so that the CLI reports the
// requested domains as lost instead of writing files that look complete.
func TestOnLoadDeclineIsNotedInTheSpool(t *testing.T) {
	spools := t.TempDir()
	cmd := exec.Command(artifact(t, "test/shim/onload_sizes"), artifact(t, "lib/librocprof-go-shim.so"), "unknown")
	cmd.Env = append(os.Environ(), "LD_PRELOAD="+artifact(t, "lib/librocprof-go-preload.so"),
		"ROCPROF_GO_SPOOL_DIR="+spools, "ROCPROF_KERNEL_TRACE=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	require.Equal(t, "declined\n", string(out))
	require.Contains(t, stderr.String(), "HSA tracing, kernels, copies and counters are off")
	paths, err := tracing.List(spools)
	require.NoError(t, err)
	require.Len(t, paths, 1)
	r, err := tracing.Open(paths[0])
	require.NoError(t, err)
	defer r.Close()
	var declined string
	for r.Next() {
		if r.Kind() == tracing.KindString {
			if s := r.String(); s.Table == tracing.TableStatus && s.ID == tracing.StatusShimDeclined {
				declined = string(s.Value)
			}
		}
	}
	require.Contains(t, declined, "99", "the reason names the unknown version")
}

// ML libraries load tens of thousands of kernels: the kernel-object map
// grows, and every symbol stays findable.
func TestKernelObjectMapGrows(t *testing.T) {
	const n = 200000
	for i := uint64(1); i <= n; i++ {
		kmapPut(i*64, i)
	}
	kmapPut(64, 7) // a reused address: the newest symbol wins
	for i := uint64(2); i <= n; i++ {
		id, ok := kmapGet(i * 64)
		require.True(t, ok, "kernel object %d", i*64)
		require.Equal(t, i, id)
	}
	id, ok := kmapGet(64)
	require.True(t, ok)
	require.Equal(t, uint64(7), id)
	_, ok = kmapGet(3)
	require.False(t, ok)
}

// A pass tracing only HIP or marker calls loads the shim for the agents
// alone: it records them and wraps nothing. Whether to intercept comes from
// the configuration, not the live domain mask: --selected-regions clears
// that mask outside its regions, where the runtime may well load the shim,
// and the kernels of later regions must still be traced.
func TestShimAgentsOnlyForHIPTracing(t *testing.T) {
	r := runApp(t, []string{"ROCPROF_HIP_RUNTIME_API_TRACE=1", "ROCPROF_GO_SHIM_DEBUG=1"}, "multistream", "run", "0")
	require.Equal(t, 0, r.exitCode, r.stderr)
	require.NotContains(t, r.stderr, "rocprof-go shim: tables", "nothing wrapped")
	rs := readSpools(t, r.spools)
	require.NotEmpty(t, rs.agents)
	require.Empty(t, rs.dispatches)
	require.Empty(t, rs.symbols)

	// Kernel trace with --selected-regions, no region open when HSA starts.
	r = runApp(t, []string{"ROCPROF_KERNEL_TRACE=1", "ROCPROF_SELECTED_REGIONS=1", "ROCPROF_GO_SHIM_DEBUG=1"},
		"multistream", "run", "0")
	require.Equal(t, 0, r.exitCode, r.stderr)
	require.Contains(t, r.stderr, "rocprof-go shim: tables", "the tables are wrapped for the regions to come")
}
