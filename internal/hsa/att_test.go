package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/aql"
)

// Thread trace of the fill3d dispatches only: one raw .att file per
// dispatch for SE 0 (rocprofv3's default SE mask), holding AQLprofile's
// 8-byte gfx9 header and then the virtual GPU's synthetic SQTT data, which
// lists every dispatch that ran while the trace was on: the traced one with
// its waves on SE 0 (64 workgroups over 8 SEs), and, as on hardware, any
// dispatch another queue ran meanwhile (only --att-serialize-all keeps
// those out; multistream's streams run concurrently).
func TestThreadTraceWritesOneFilePerTracedDispatchAndSE(t *testing.T) {
	out := t.TempDir()
	r := runApp(t, []string{"ROCPROF_ADVANCED_THREAD_TRACE=1", "ROCPROF_OUTPUT_PATH=" + out,
		"ROCPROF_KERNEL_FILTER_INCLUDE_REGEX=fill3d", "ROCPROF_KERNEL_TRACE=1"}, "multistream", "run", "0")
	// The shim leaves the thread-trace files beside the spools; the CLI
	// places them in the output directory (internal/pipeline).
	out = filepath.Join(r.spools, "att")
	require.Equal(t, 0, r.exitCode, r.stderr)
	rs := readSpools(t, r.spools)
	var want []string
	var fill3d uint64 // its kernel object
	for _, d := range rs.dispatches {
		if rs.kernelName(d) == "_Z6fill3dPff.kd" {
			want = append(want, fmt.Sprintf("_agent_1_shader_engine_0_%d.att", d.DispatchID))
			fill3d = rs.symbols[d.KernelID].KernelObject
		}
	}
	require.Len(t, want, 4)
	files, err := filepath.Glob(filepath.Join(out, "*.att"))
	require.NoError(t, err)
	require.Len(t, files, 4)
	for _, w := range want {
		m, err := filepath.Glob(filepath.Join(out, "*"+w))
		require.NoError(t, err)
		require.Len(t, m, 1, w)
		raw, err := os.ReadFile(m[0])
		require.NoError(t, err)
		require.Greater(t, len(raw), 8+32)
		hdr := binary.LittleEndian.Uint64(raw)
		require.Equal(t, uint64(0x11), hdr&0x1FFF, "AQLprofile's gfx9 header")
		data := raw[8:]
		require.Equal(t, "VGPUSQTT", string(data[:8]))
		require.Equal(t, uint32(0), binary.LittleEndian.Uint32(data[12:]), "SE 0")
		// The per-dispatch records follow the header and the userdata words.
		ndisp := int(binary.LittleEndian.Uint32(data[16:]))
		nuser := int(binary.LittleEndian.Uint32(data[20:]))
		off := 32 + (nuser*4+31)/32*32
		require.GreaterOrEqual(t, ndisp, 1)
		require.GreaterOrEqual(t, len(data), off+32*ndisp)
		traced := 0
		for i := 0; i < ndisp; i++ {
			rec := data[off+32*i:]
			if binary.LittleEndian.Uint64(rec) == fill3d {
				traced++
				require.Equal(t, uint64(8), binary.LittleEndian.Uint64(rec[8:]), "fill3d's waves on SE 0")
			}
		}
		require.Equal(t, 1, traced, "the traced dispatch, once, in its own trace")
		if ndisp == 1 {
			require.Equal(t, uint64(8), binary.LittleEndian.Uint64(data[24:]), "waves on SE 0")
		}
	}
	// The loaded code objects are dumped for the decoder: ELF files, one of
	// them holding the traced kernel.
	cos, err := filepath.Glob(filepath.Join(out, "*_agent_1_code_object_id_*.out"))
	require.NoError(t, err)
	require.NotEmpty(t, cos)
	found := false
	for _, c := range cos {
		raw, err := os.ReadFile(c)
		require.NoError(t, err)
		require.Equal(t, "\x7fELF", string(raw[:4]), c)
		found = found || bytes.Contains(raw, []byte("_Z6fill3dPff"))
	}
	require.True(t, found, "a code object holds fill3d")
	// The index says where each dumped code object was loaded: the traced
	// kernel objects fall inside one of them.
	idx, err := filepath.Glob(filepath.Join(out, "*_att_code_objects.jsonl"))
	require.NoError(t, err)
	require.Len(t, idx, 1)
	raw, err := os.ReadFile(idx[0])
	require.NoError(t, err)
	var entries []attCodeObjectEntry
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var e attCodeObjectEntry
		require.NoError(t, json.Unmarshal([]byte(l), &e))
		require.FileExists(t, filepath.Join(out, e.File))
		require.Greater(t, e.LoadSize, uint64(0))
		entries = append(entries, e)
	}
	require.Len(t, entries, len(cos))
	// Every traced dispatch's trace carries the loaded code objects'
	// "from start" markers (header word 4, then id << 2 | 2) among its
	// user-data words, the load address (low word) before it.
	for _, w := range want {
		m, err := filepath.Glob(filepath.Join(out, "*"+w))
		require.NoError(t, err)
		raw, err := os.ReadFile(m[0])
		require.NoError(t, err)
		data := raw[8:]
		n := binary.LittleEndian.Uint32(data[20:])
		words := make([]uint32, n)
		for i := range words {
			words[i] = binary.LittleEndian.Uint32(data[32+4*i:])
		}
		for _, e := range entries {
			require.True(t, containsWords(words, []uint32{0x204, uint32(e.LoadDelta)}), "code object %d's address in %s", e.ID, w)
			require.True(t, containsWords(words, []uint32{0x004, uint32(e.ID)<<2 | 2}), "code object %d's marker in %s", e.ID, w)
		}
	}
	for _, d := range rs.dispatches {
		if rs.kernelName(d) != "_Z6fill3dPff.kd" {
			continue
		}
		inside := false
		for _, e := range entries {
			ko := rs.symbols[d.KernelID].KernelObject
			inside = inside || (ko >= e.LoadBase && ko < e.LoadBase+e.LoadSize)
		}
		require.True(t, inside, "kernel object of dispatch %d in a loaded code object", d.DispatchID)
	}
	require.NotContains(t, r.stderr, "thread trace", "the app says nothing: the CLI reports, after the run")
}

// Thread trace alone (no tracing domain) still selects by kernel name.
func TestThreadTraceAloneHonoursTheFilters(t *testing.T) {
	out := t.TempDir()
	r := runApp(t, []string{"ROCPROF_ADVANCED_THREAD_TRACE=1", "ROCPROF_OUTPUT_PATH=" + out,
		"ROCPROF_KERNEL_FILTER_INCLUDE_REGEX=vadd", "ROCPROF_KERNEL_FILTER_RANGE=[1-3]",
		"ROCPROF_ATT_PARAM_SHADER_ENGINE_MASK=0x3"}, "multistream", "run", "0")
	// The shim leaves the thread-trace files beside the spools; the CLI
	// places them in the output directory (internal/pipeline).
	out = filepath.Join(r.spools, "att")
	require.Equal(t, 0, r.exitCode, r.stderr)
	files, err := filepath.Glob(filepath.Join(out, "*.att"))
	require.NoError(t, err)
	require.Len(t, files, 3*2, "vadd iterations 1..3, SEs 0 and 1")
}

// pmcTimingLine reads the "rocprof-go pmc:" line ROCPROF_GO_PMC_TIMING=1 prints.
func pmcTimingLine(t *testing.T, stderr string) map[string]uint64 {
	t.Helper()
	for _, l := range strings.Split(stderr, "\n") {
		rest, ok := strings.CutPrefix(l, "rocprof-go pmc: ")
		if !ok {
			continue
		}
		out := map[string]uint64{}
		for _, f := range strings.Fields(rest) {
			k, v, _ := strings.Cut(f, "=")
			n, err := strconv.ParseUint(v, 10, 64)
			require.NoError(t, err, f)
			out[k] = n
		}
		return out
	}
	t.Fatalf("no pmc statistics line in:\n%s", stderr)
	return nil
}

// --att-serialize-all: the dispatches the filters leave out also wait for
// the agent's previous dispatch and hold the slot until they complete (one
// slot use each, no trace), so nothing runs beside a traced dispatch.
// Without it only the traced dispatches use the slot.
func TestThreadTraceSerializeAll(t *testing.T) {
	for _, all := range []bool{false, true} {
		out := t.TempDir()
		vars := []string{"ROCPROF_ADVANCED_THREAD_TRACE=1", "ROCPROF_OUTPUT_PATH=" + out,
			"ROCPROF_KERNEL_FILTER_INCLUDE_REGEX=fill3d", "ROCPROF_GO_PMC_TIMING=1"}
		if all {
			vars = append(vars, "ROCPROF_ATT_PARAM_SERIALIZE_ALL=1")
		}
		r := runApp(t, vars, "multistream", "run", "0")
		// The shim leaves the thread-trace files beside the spools; the CLI
		// places them in the output directory (internal/pipeline).
		out = filepath.Join(r.spools, "att")
		require.Equal(t, 0, r.exitCode, r.stderr)
		st := pmcTimingLine(t, r.stderr)
		require.EqualValues(t, 4, st["profiled"], "the four fill3d dispatches are traced")
		require.Greater(t, st["filtered"], uint64(0))
		if all {
			require.Equal(t, st["profiled"]+st["filtered"], st["completed"], "every dispatch used the slot")
		} else {
			require.Equal(t, st["profiled"], st["completed"], "only traced dispatches use the slot")
		}
		files, err := filepath.Glob(filepath.Join(out, "*.att"))
		require.NoError(t, err)
		require.Len(t, files, 4, "untraced dispatches leave no trace file")
	}
}

// --att-perfcounters with a period: the SQ selects, masks and control are
// written before the trace starts (seen in the virtual GPU's register log),
// and tracing still produces its files.
func TestThreadTracePerfCountersProgrammed(t *testing.T) {
	out := t.TempDir()
	log := filepath.Join(t.TempDir(), "vgpu.jsonl")
	r := runApp(t, []string{"ROCPROF_ADVANCED_THREAD_TRACE=1", "ROCPROF_OUTPUT_PATH=" + out,
		"ROCPROF_KERNEL_FILTER_INCLUDE_REGEX=fill3d", "ROCPROF_KERNEL_FILTER_RANGE=[1]",
		"ROCPROF_ATT_PARAM_PERFCOUNTERS=SQ_WAVES SQ_BUSY_CYCLES:3", "ROCPROF_ATT_PARAM_PERFCOUNTER_CTRL=2",
		"ROCPROF_VGPU_LOG=" + log}, "multistream", "run", "0")
	// The shim leaves the thread-trace files beside the spools; the CLI
	// places them in the output directory (internal/pipeline).
	out = filepath.Join(r.spools, "att")
	require.Equal(t, 0, r.exitCode, r.stderr)
	require.NotContains(t, r.stderr, "unknown register", "the virtual GPU knows every register written")
	files, err := filepath.Glob(filepath.Join(out, "*.att"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	raw, err := os.ReadFile(log)
	require.NoError(t, err)
	writes := map[uint64][]uint64{}
	for _, l := range strings.Split(string(raw), "\n") {
		var rec struct {
			Type  string `json:"type"`
			Reg   uint64 `json:"reg"`
			Value uint64 `json:"value"`
		}
		if json.Unmarshal([]byte(l), &rec) == nil && rec.Type == "pm4_write" {
			writes[rec.Reg] = append(writes[rec.Reg], rec.Value)
		}
	}
	require.Contains(t, writes[0xD9C0], uint64(0x0F000004), "SQ_PERFCOUNTER0_SELECT = SQ_WAVES, all SIMDs")
	require.Contains(t, writes[0xD9C1], uint64(0x03000003), "SQ_PERFCOUNTER1_SELECT = SQ_BUSY_CYCLES, SIMDs 0-1")
	require.Contains(t, writes[0xD9E0], uint64(0xFFFF017F), "SQ_PERFCOUNTER_CTRL, period 2")
	require.Contains(t, writes[0xC334], uint64(0xFFFFFFFF), "SQ_THREAD_TRACE_PERF_MASK")
	require.Contains(t, writes[0xC333], uint64(0x000FFC6F), "TOKEN_MASK with the perf token")

	// An unknown or non-SQ counter is refused when the GPU is set up.
	r = runApp(t, []string{"ROCPROF_ADVANCED_THREAD_TRACE=1", "ROCPROF_OUTPUT_PATH=" + t.TempDir(),
		"ROCPROF_ATT_PARAM_PERFCOUNTERS=GRBM_COUNT", "ROCPROF_ATT_PARAM_PERFCOUNTER_CTRL=2"}, "multistream", "run", "0")
	require.Contains(t, r.stderr, "GRBM_COUNT is not an SQ hardware counter")
}

func containsWords(ws, seq []uint32) bool {
	for i := 0; i+len(seq) <= len(ws); i++ {
		if slices.Equal(ws[i:i+len(seq)], seq) {
			return true
		}
	}
	return false
}

// The "from start" marker set follows loads and unloads; an empty set sends
// none (C then injects no marker packet).
func TestATTMarkerSetFollowsLoadsAndUnloads(t *testing.T) {
	var sent [][]uint64
	a := &attAgent{}
	a.send = func(ms []aql.CodeObjMarker) {
		var ids []uint64
		for _, m := range ms {
			require.True(t, m.FromStart)
			ids = append(ids, m.ID)
		}
		sent = append(sent, ids)
	}
	a.addCodeObject(1, 0x1000, 0x100)
	a.addCodeObject(2, 0x3000, 0x100)
	a.removeCodeObject(1)
	a.removeCodeObject(9) // unknown: nothing resent
	a.removeCodeObject(2)
	require.Equal(t, [][]uint64{{1}, {1, 2}, {2}, nil}, sent)
}

// hipModuleLoad'ed code: the traced module kernel's trace carries its code
// object's marker. (HIP 5.2's hipModuleUnload does not destroy the
// executable, so the unload path is covered by the unit test above only.)
func TestThreadTraceModuleCodeObjectMarkers(t *testing.T) {
	out := t.TempDir()
	r := runBuilt(t, []string{"ROCPROF_ADVANCED_THREAD_TRACE=1", "ROCPROF_OUTPUT_PATH=" + out,
		"ROCPROF_KERNEL_FILTER_INCLUDE_REGEX=module_fill"}, "testdata/features", artifact(t, "testdata/module_kernels.co"))
	// The shim leaves the thread-trace files beside the spools; the CLI
	// places them in the output directory (internal/pipeline).
	out = filepath.Join(r.spools, "att")
	require.Zero(t, r.exitCode, r.stderr)
	require.NotContains(t, r.stderr, "thread trace: cannot")
	files, err := filepath.Glob(filepath.Join(out, "*.att"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	idx, err := filepath.Glob(filepath.Join(out, "*_att_code_objects.jsonl"))
	require.NoError(t, err)
	require.Len(t, idx, 1)
	raw, err := os.ReadFile(idx[0])
	require.NoError(t, err)
	var module attCodeObjectEntry
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var e attCodeObjectEntry
		require.NoError(t, json.Unmarshal([]byte(l), &e))
		dump, err := os.ReadFile(filepath.Join(out, e.File))
		require.NoError(t, err)
		if bytes.Contains(dump, []byte("module_fill")) {
			module = e
		}
	}
	require.NotZero(t, module.ID, "the module's code object is indexed: %s", raw)
	data, err := os.ReadFile(files[0])
	require.NoError(t, err)
	data = data[8:]
	words := make([]uint32, binary.LittleEndian.Uint32(data[20:]))
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(data[32+4*i:])
	}
	require.True(t, containsWords(words, []uint32{0x004, uint32(module.ID)<<2 | 2}), "module marker in the trace")
}
