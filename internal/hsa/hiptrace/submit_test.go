package hiptrace

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// probeSrc is a second preloaded library standing in for the HSA shim: it
// intercepts the HSA calls HIP submits work with (AQL slot reservation,
// doorbells, async copies) and prints, for each, the thread, the current
// correlation id and the current HIP stream the preload library exposes.
const probeSrc = `
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>

uint64_t rpg_correlation_current(void);
uint64_t rpg_hip_current_stream(void);
const char *rpg_roctx_thread_range(size_t *len);

static void note(const char *fn) {
    size_t len = 0;
    const char *range = rpg_roctx_thread_range(&len);
    fprintf(stderr, "probe %s %ld %llu %llu %.*s\n", fn, (long)syscall(SYS_gettid),
            (unsigned long long)rpg_correlation_current(),
            (unsigned long long)rpg_hip_current_stream(), range ? (int)len : 1,
            range ? range : "-");
}
#define NEXT(name) static void *real; if (!real) real = dlvsym(RTLD_NEXT, #name, "ROCR_1")

uint64_t hsa_queue_add_write_index_screlease(void *q, uint64_t v) {
    NEXT(hsa_queue_add_write_index_screlease);
    note("hsa_queue_add_write_index_screlease");
    return ((uint64_t (*)(void *, uint64_t))real)(q, v);
}
int hsa_amd_memory_async_copy(void *dst, uint64_t da, const void *src, uint64_t sa, size_t n,
                              uint32_t nd, const void *deps, uint64_t done) {
    NEXT(hsa_amd_memory_async_copy);
    note("hsa_amd_memory_async_copy");
    return ((int (*)(void *, uint64_t, const void *, uint64_t, size_t, uint32_t, const void *,
                     uint64_t))real)(dst, da, src, sa, n, nd, deps, done);
}
`

type probeLine struct {
	fn           string
	tid          uint32
	corr, stream uint64
	rangeMsg     string // rpg_roctx_thread_range(), "-" for none
}

func buildProbe(t *testing.T) string {
	dir := t.TempDir()
	src, so := filepath.Join(dir, "probe.c"), filepath.Join(dir, "probe.so")
	vs := filepath.Join(dir, "probe.map")
	require.NoError(t, os.WriteFile(src, []byte(probeSrc), 0o600))
	require.NoError(t, os.WriteFile(vs, []byte("ROCR_1 { global: hsa_*; };\n"), 0o600))
	out, err := exec.Command("cc", "-O1", "-fPIC", "-shared", "-Wl,--version-script="+vs,
		"-Wl,--unresolved-symbols=ignore-all", "-o", so, src).CombinedOutput()
	require.NoError(t, err, string(out))
	return so
}

// HIP 5.2 submits kernel dispatches and copies on the calling thread, inside
// the HIP call: so the shim, reading the thread's current correlation id,
// stream and open ROCTx range, attributes each to the call that caused it.
func TestHIPSubmitsOnTheCallersThreadInsideTheCall(t *testing.T) {
	probe := buildProbe(t)
	spools := t.TempDir()
	cmd := exec.Command(artifact(t, "testdata/hip_calls_counts"))
	cmd.Env = append(os.Environ(),
		"ROCPROF_GO_SPOOL_DIR="+spools, "ROCPROF_HIP_RUNTIME_API_TRACE=1",
		"ROCPROF_MARKER_API_TRACE=1",
		"LD_PRELOAD="+artifact(t, "vgpu/librocprof-go-vgpu.so")+":"+artifact(t, "lib/librocprof-go-preload.so")+":"+probe)
	var lines []probeLine
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 6 || f[0] != "probe" {
			continue
		}
		tid, _ := strconv.ParseUint(f[2], 10, 32)
		corr, _ := strconv.ParseUint(f[3], 10, 64)
		stream, _ := strconv.ParseUint(f[4], 10, 64)
		lines = append(lines, probeLine{f[1], uint32(tid), corr, stream, f[5]})
	}
	require.NoError(t, cmd.Wait())
	tr := readTrace(t, spools)

	byCorr := map[uint64][]probeLine{}
	for _, l := range lines {
		byCorr[l.corr] = append(byCorr[l.corr], l)
	}
	launches := 0
	for _, c := range tr.calls {
		if c.Domain != tracing.DomainHIPRuntime {
			continue
		}
		subs := byCorr[c.CorrelationID]
		switch tr.name(c) {
		case "hipLaunchKernel":
			launches++
			require.NotEmpty(t, subs, "launch %d submitted nothing under its id", c.CorrelationID)
			for _, s := range subs {
				require.Equal(t, c.TID, s.tid, "submitted on the caller's thread")
				require.Equal(t, "inner", s.rangeMsg, "the innermost open ROCTx range at submission")
			}
			// Four on the null stream (0), then one on each created stream.
			require.EqualValues(t, max(0, launches-4), subs[0].stream, "launch %d", launches)
		case "hipMemcpy":
			require.NotEmpty(t, subs, "copy %d submitted nothing under its id", c.CorrelationID)
			for _, s := range subs {
				require.Equal(t, c.TID, s.tid)
			}
		}
	}
	require.Equal(t, 6, launches)
	for _, c := range tr.calls {
		for _, s := range byCorr[c.CorrelationID] {
			t.Logf("%s -> %s stream=%d", tr.name(c), s.fn, s.stream)
		}
	}
	t.Logf("%d HSA submissions, %d outside any HIP call", len(lines), len(byCorr[0]))
	for _, l := range byCorr[0] {
		t.Logf("outside a HIP call: %+v", l)
	}
}

// With the HSA shim loaded, every kernel dispatch names the hipLaunchKernel
// that caused it (and its stream), and every copy a hipMemcpy; the ROCTx
// range each dispatch ran under follows from the ids alone.
func TestDispatchesAndCopiesNameTheirHIPCall(t *testing.T) {
	_, dir := run{app: "testdata/hip_calls_counts", preload: true, shim: true,
		env: []string{"ROCPROF_HIP_RUNTIME_API_TRACE=1", "ROCPROF_KERNEL_TRACE=1",
			"ROCPROF_MEMORY_COPY_TRACE=1", "ROCPROF_MARKER_API_TRACE=1"}}.exec(t)
	tr := readTrace(t, dir)
	byCorr := map[uint64]tracing.APICall{}
	launchNo := map[uint64]int{} // correlation id -> 1..6 in program order
	for _, c := range tr.calls {
		byCorr[c.CorrelationID] = c
		if tr.name(c) == "hipLaunchKernel" {
			launchNo[c.CorrelationID] = len(launchNo) + 1
		}
	}
	var launched []uint64
	for _, d := range tr.dispatches {
		c, ok := byCorr[d.CorrelationID]
		require.True(t, ok, "dispatch %d has correlation id %d, no HIP call", d.DispatchID, d.CorrelationID)
		if tr.name(c) != "hipLaunchKernel" {
			continue // HIP's own blit kernels, under the hipMemcpy that needed them
		}
		launched = append(launched, d.CorrelationID)
		require.Equal(t, c.TID, d.TID)
		// --kernel-rename would name each of these after the range "inner".
		name, ok := innermostRange(tr, d.TID, d.CorrelationID)
		require.True(t, ok)
		require.Equal(t, "inner", name)
		// Launches 1-4 on the null stream, 5 and 6 on streams 1 and 2.
		require.EqualValues(t, max(0, launchNo[d.CorrelationID]-4), d.StreamID)
	}
	t.Logf("%d dispatches (%d from hipLaunchKernel), %d copies", len(tr.dispatches), len(launched), len(tr.copies))
	require.Len(t, launched, 6, "one dispatch per hipLaunchKernel")
	require.NotEmpty(t, tr.copies)
	for _, cp := range tr.copies {
		c, ok := byCorr[cp.CorrelationID]
		require.True(t, ok, "copy with correlation id %d, no HIP call", cp.CorrelationID)
		require.Equal(t, "hipMemcpy", tr.name(c))
	}
}

// Module and cooperative launches too: testdata/apps/features (the virtual
// GPU's feature app) makes one hipModuleLaunchKernel, one
// hipLaunchCooperativeKernel and one hipLaunchKernel, and every dispatch
// names its call.
func TestModuleAndCooperativeLaunchesNameTheirCall(t *testing.T) {
	_, dir := run{app: "testdata/features", args: []string{artifact(t, "testdata/module_kernels.co")},
		preload: true, shim: true,
		env: []string{"ROCPROF_HIP_RUNTIME_API_TRACE=1", "ROCPROF_KERNEL_TRACE=1"}}.exec(t)
	tr := readTrace(t, dir)
	byCorr := map[uint64]string{}
	for _, c := range tr.calls {
		byCorr[c.CorrelationID] = tr.name(c)
	}
	under := map[string]int{}
	for _, d := range tr.dispatches {
		name, ok := byCorr[d.CorrelationID]
		require.True(t, ok, "dispatch %d with correlation id %d, no HIP call", d.DispatchID, d.CorrelationID)
		under[name]++
	}
	require.Equal(t, 1, under["hipModuleLaunchKernel"])
	// HIP 5.2 runs an internal kernel of its own before a cooperative one:
	// both are that call's work and carry its id.
	require.Equal(t, 2, under["hipLaunchCooperativeKernel"])
	require.Equal(t, 1, under["hipLaunchKernel"])
}
