package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Thread trace of the fill3d dispatches only: one raw .att file per
// dispatch for SE 0 (rocprofv3's default SE mask), holding AQLprofile's
// 8-byte gfx9 header and then the virtual GPU's synthetic SQTT data for
// exactly that dispatch (its waves on SE 0: 64 workgroups over 8 SEs).
func TestThreadTraceWritesOneFilePerTracedDispatchAndSE(t *testing.T) {
	out := t.TempDir()
	r := runApp(t, []string{"ROCPROF_ADVANCED_THREAD_TRACE=1", "ROCPROF_OUTPUT_PATH=" + out,
		"ROCPROF_KERNEL_FILTER_INCLUDE_REGEX=fill3d", "ROCPROF_KERNEL_TRACE=1"}, "multistream", "run", "0")
	require.Equal(t, 0, r.exitCode, r.stderr)
	rs := readSpools(t, r.spools)
	var want []string
	for _, d := range rs.dispatches {
		if rs.kernelName(d) == "_Z6fill3dPff.kd" {
			want = append(want, fmt.Sprintf("_agent_1_shader_engine_0_%d.att", d.DispatchID))
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
		require.Equal(t, uint32(1), binary.LittleEndian.Uint32(data[16:]), "one dispatch per trace")
		require.Equal(t, uint64(8), binary.LittleEndian.Uint64(data[24:]), "waves on SE 0")
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
	require.Contains(t, r.stderr, "librocprof-trace-decoder.so was not found")
}

// Thread trace alone (no tracing domain) still selects by kernel name.
func TestThreadTraceAloneHonoursTheFilters(t *testing.T) {
	out := t.TempDir()
	r := runApp(t, []string{"ROCPROF_ADVANCED_THREAD_TRACE=1", "ROCPROF_OUTPUT_PATH=" + out,
		"ROCPROF_KERNEL_FILTER_INCLUDE_REGEX=vadd", "ROCPROF_KERNEL_FILTER_RANGE=[1-3]",
		"ROCPROF_ATT_PARAM_SHADER_ENGINE_MASK=0x3"}, "multistream", "run", "0")
	require.Equal(t, 0, r.exitCode, r.stderr)
	files, err := filepath.Glob(filepath.Join(out, "*.att"))
	require.NoError(t, err)
	require.Len(t, files, 3*2, "vadd iterations 1..3, SEs 0 and 1")
}

func TestATTRequestParsing(t *testing.T) {
	env := map[string]string{"ROCPROF_ADVANCED_THREAD_TRACE": "1", "ROCPROF_ATT_PARAM_TARGET_CU": "0x3",
		"ROCPROF_ATT_PARAM_BUFFER_SIZE": "0x1000000", "ROCPROF_ATT_PARAM_GPU_INDEX": "0, 2"}
	r, err := parseATTRequest(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, uint32(3), r.cfg.TargetCU)
	require.Equal(t, uint64(0x1000000), r.cfg.BufferSize)
	require.Equal(t, map[int]bool{0: true, 2: true}, r.gpus)
	env["ROCPROF_ATT_PARAM_TARGET_CU"] = "99"
	_, err = parseATTRequest(func(k string) string { return env[k] })
	require.ErrorContains(t, err, "ROCPROF_ATT_PARAM_TARGET_CU")
	r, err = parseATTRequest(func(string) string { return "" })
	require.NoError(t, err)
	require.Nil(t, r)
}
