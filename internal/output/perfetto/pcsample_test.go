package perfetto

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
)

// pcInstants writes in's trace and returns its instants of one category,
// and the trace.
func pcInstants(t *testing.T, in *model.Input, category string) ([]outputtest.PerfettoInstant, []byte) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, in))
	var pcs []outputtest.PerfettoInstant
	for _, e := range outputtest.PerfettoInstants(t, buf.Bytes()) {
		if e.Category == category {
			pcs = append(pcs, e)
		}
	}
	return pcs, buf.Bytes()
}

// PC samples are instants on a "PC samples" track per agent, named by
// their instruction (kernel+offset when it has no text), at their time
// within their dispatch, with the dispatch's ids and the PC as arguments.
func TestPerfettoPCSamples(t *testing.T) {
	pcs, trace := pcInstants(t, outputtest.PCSampleInput(t), "PC_SAMPLING_HOST_TRAP")
	require.Len(t, pcs, 9)
	va := "vectorAdd_float(float*, float const*, float const*, int)"
	args := func(d, corr, co, off uint64, mask, kernel string) map[string]string {
		return map[string]string{"dispatch_id": u(d), "corr_id": u(corr), "code_object_id": u(co), "offset": u(off),
			"exec_mask": mask, "kernel": kernel}
	}
	all := "18446744073709551615"
	require.Equal(t, outputtest.PerfettoInstant{Track: "PC samples (Agent 1)", Category: "PC_SAMPLING_HOST_TRAP",
		Name: "s_nop 0x10", TS: 100_002_050, Args: args(1, 1, 1, 0x10, all, va)}, pcs[0])
	require.Equal(t, outputtest.PerfettoInstant{Track: "PC samples (Agent 1)", Category: "PC_SAMPLING_HOST_TRAP",
		Name: va + "+0x1234", TS: 100_002_050, Args: args(1, 1, 0, 0x1234, all, va)}, pcs[3])
	require.Equal(t, outputtest.PerfettoInstant{Track: "PC samples (Agent 2)", Category: "PC_SAMPLING_HOST_TRAP",
		Name: "s_nop 0x30", TS: 100_012_100, Args: args(2, 3, 1, 0x30, "15", "void rocprim::detail::scan_kernel<false>(int*, int*, unsigned int)")}, pcs[6])
	require.Equal(t, outputtest.PerfettoInstant{Track: "PC samples (Agent 2)", Category: "PC_SAMPLING_HOST_TRAP",
		Name: "s_nop 0x40", TS: 100_032_100, Args: args(4, 7, 1, 0x40, "255", va)}, pcs[8])
	// The slices still nest, and each sample lies within a slice of its
	// kernel.
	slices := outputtest.ImportSlices(t, trace)
	for _, pc := range pcs {
		within := false
		for _, sl := range slices {
			within = within || sl.Name == pc.Args["kernel"] && sl.Start <= pc.TS && pc.TS <= sl.End
		}
		require.True(t, within, "%+v", pc)
	}
}

// Stochastic samples carry the stall reason.
func TestPerfettoPCSamplesStochastic(t *testing.T) {
	in := &model.Input{Spools: []string{outputtest.PCSampleStochasticSpool(t, t.TempDir())}}
	pcs, _ := pcInstants(t, in, "PC_SAMPLING_STOCHASTIC")
	require.Len(t, pcs, 7)
	// No disassembler configured: kernel+offset.
	require.Equal(t, "vectorAdd_float(float*, float const*, float const*, int)+0x10", pcs[1].Name)
	require.Equal(t, map[string]string{"dispatch_id": "1", "corr_id": "1", "code_object_id": "1", "offset": "16",
		"exec_mask": "65535", "kernel": "vectorAdd_float(float*, float const*, float const*, int)",
		"wave_issued": "0", "inst_type": "VALU", "stall_reason": "WAITCNT", "wave_count": "12"}, pcs[1].Args)
	require.Equal(t, "ALU_DEPENDENCY", pcs[4].Args["stall_reason"])
}

// A capped buffer keeps whole samples, and the track descriptors of the
// samples it keeps (PerfettoInstants fails on an instant whose track was
// left out), whichever records fit. (The ring buffer kept the oldest
// records here before a record that writes nothing, a counter sample,
// stopped making a bundle of the process descriptor alone after a
// rollback: the bundles written no longer matched those measured.)
func TestPerfettoPCSamplesCapped(t *testing.T) {
	var full bytes.Buffer
	require.NoError(t, Write(&full, outputtest.PCSampleInput(t)))
	for _, ring := range []bool{false, true} {
		for _, size := range []uint64{1 << 20, uint64(full.Len()) * 3 / 4, uint64(full.Len()) / 4, 2000} {
			in := outputtest.PCSampleInput(t)
			in.Config.PerfettoBufferBytes, in.Config.PerfettoRingBuffer = size, ring
			pcs, trace := pcInstants(t, in, "PC_SAMPLING_HOST_TRAP")
			n := len(pcs)
			// The samples are the trace's last records: the ring buffer
			// keeps them (they take under 2,000 bytes), the discard
			// policy only when everything fits.
			if ring || size == 1<<20 {
				require.Equal(t, 9, n, "ring %v, %d bytes", ring, size)
			} else {
				require.Zero(t, n, "ring %v, %d bytes", ring, size)
			}
			require.LessOrEqual(t, uint64(len(trace)), size+1024, "ring %v, %d bytes", ring, size)
			t.Logf("ring %v, cap %d: %d bytes, %d samples", ring, size, len(trace), n)
		}
	}
}

func u(v uint64) string { return strconv.FormatUint(v, 10) }

// With --kernel-rename the trace's dispatch slices keep their kernel's
// name, as rocprofv3's Perfetto output does, and so do the samples'
// kernel argument and kernel+offset names: each sample names the slice it
// lies in, the range's name appears nowhere.
func TestPerfettoPCSamplesKernelRename(t *testing.T) {
	for _, rename := range []bool{false, true} {
		in := &model.Input{Spools: []string{outputtest.PCSampleRenameSpool(t, t.TempDir())}}
		in.Config.KernelRename = rename
		pcs, trace := pcInstants(t, in, "PC_SAMPLING_HOST_TRAP")
		require.Len(t, pcs, 9)
		va := "vectorAdd_float(float*, float const*, float const*, int)"
		require.Equal(t, "4", pcs[8].Args["dispatch_id"])
		require.Equal(t, va, pcs[8].Args["kernel"], "rename %v", rename)
		require.Equal(t, va+"+0x1234", pcs[3].Name, "no instruction text: the kernel's name and the offset")
		slices := outputtest.ImportSlices(t, trace)
		for _, pc := range pcs {
			require.NotContains(t, pc.Args["kernel"], outputtest.PCSampleRenameRange)
			within := false
			for _, sl := range slices {
				within = within || strings.HasPrefix(sl.Track, "STREAM") && sl.Name == pc.Args["kernel"] && sl.Start <= pc.TS && pc.TS <= sl.End
			}
			require.True(t, within, "rename %v: %+v", rename, pc)
		}
	}
}
