package att

import (
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// BuildFakeDecoder compiles testdata/fake_decoder.c into dir as
// librocprof-trace-decoder.so and returns its path.
func buildFakeDecoder(t testing.TB, dir string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "testdata", "fake_decoder.c")
	out := filepath.Join(dir, LibraryName)
	cmd := exec.Command("cc", "-shared", "-fPIC", "-O1", "-o", out, src)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, string(b))
	return out
}

// vgpuTrace builds one SE's raw file as the shim writes it on gfx9: the
// 8-byte AQLprofile header, then the virtual GPU's synthetic SQTT (32-byte
// header, user-data words, one 32-byte record per dispatch).
func vgpuTrace(se uint32, kernelObjects []uint64, waves uint64, extraWords ...uint32) []byte {
	b := binary.LittleEndian.AppendUint64(nil, 0x11|4<<13|0xF<<16|uint64(se)<<26)
	b = append(b, "VGPUSQTT"...)
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint32(b, se)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(kernelObjects)))
	words := append([]uint32{0x434F5200, 0x00080201, 5, 1, 2, 3}, extraWords...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(words)))
	b = binary.LittleEndian.AppendUint64(b, waves*uint64(len(kernelObjects)))
	ud := make([]byte, (len(words)*4+31)/32*32)
	for i, w := range words {
		binary.LittleEndian.PutUint32(ud[4*i:], w)
	}
	b = append(b, ud...)
	for i, k := range kernelObjects {
		b = binary.LittleEndian.AppendUint64(b, k)
		b = binary.LittleEndian.AppendUint64(b, waves)
		b = binary.LittleEndian.AppendUint64(b, 5000)
		b = binary.LittleEndian.AppendUint64(b, uint64(i))
	}
	return b
}

const testLoadBase = 0x7f1200000000

// decodeFixture lays out a directory as a traced run leaves it: one raw
// file per SE for dispatch 7 of pid 100 on agent 1, the code object dump and
// the code-object index. The traced "kernel object" is vadd's entry, so the
// fake decoder's instructions are vadd's first four.
func decodeFixture(t *testing.T) string {
	dir := t.TempDir()
	_, file, _, _ := runtime.Caller(0)
	co, err := os.ReadFile(filepath.Join(filepath.Dir(file), "testdata", "multistream_gfx90a.co"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "100_agent_1_code_object_id_2.out"), co, 0o644))
	idx, err := json.Marshal(CodeObject{ID: 2, Agent: 1, LoadBase: testLoadBase, LoadSize: 0x3000,
		LoadDelta: testLoadBase, File: "100_agent_1_code_object_id_2.out", URI: "memory://100#offset=1&size=2"})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, CodeObjectIndexName(100)), append(idx, '\n'), 0o644))
	for se := uint32(0); se < 2; se++ {
		name := fmt.Sprintf("100_agent_1_shader_engine_%d_7.att", se)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), vgpuTrace(se, []uint64{testLoadBase + 0x1b00}, 8), 0o644))
	}
	return dir
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, v), path)
}

func TestDecodeDirWritesRocprofv3Outputs(t *testing.T) {
	dir := decodeFixture(t)
	lib := buildFakeDecoder(t, t.TempDir())
	res, err := DecodeDir(DirOptions{Dir: dir, Library: lib, Counters: []string{"SQ_WAVES", "SQ_BUSY_CYCLES:3"}})
	require.NoError(t, err)
	ui := filepath.Join(dir, "ui_output_agent_1_dispatch_7")
	require.Equal(t, []string{ui}, res.Dispatches)

	// code.json: vadd's name line, then its first four instructions as
	// llvm-objdump disassembles them, each hit by two waves on each of 2 SEs.
	var code struct {
		Code    [][]any `json:"code"`
		Header  string  `json:"header"`
		Version string  `json:"version"`
	}
	readJSON(t, filepath.Join(ui, "code.json"), &code)
	require.Equal(t, codeHeader, code.Header)
	require.Len(t, code.Code, 5)
	require.Equal(t, "; _Z4vaddPKfS0_Pfi", code.Code[0][0])
	require.Equal(t, "vadd(float const*, float const*, float*, int)", code.Code[0][3])
	want := []struct {
		text  string
		vaddr float64
	}{{"s_load_dword s0, s[4:5], 0x4", 0x1b00}, {"s_load_dword s1, s[4:5], 0xc", 0x1b08},
		{"s_load_dword s2, s[6:7], 0x18", 0x1b10}, {"s_waitcnt lgkmcnt(0)", 0x1b18}}
	for i, w := range want {
		row := code.Code[i+1]
		require.Equal(t, w.text, row[0])
		require.EqualValues(t, i+2, row[2], "line number")
		require.EqualValues(t, 2, row[4], "code object id")
		require.Equal(t, w.vaddr, row[5])
		require.EqualValues(t, 4, row[6], "hit count: 2 waves x 2 SEs")
		require.EqualValues(t, 4*(20+10*i), row[7], "latency: the durations summed")
		require.EqualValues(t, 4*5*i, row[8], "stall")
	}

	// stats CSV next to the directory, same numbers.
	f, err := os.Open(filepath.Join(dir, "stats_ui_output_agent_1_dispatch_7.csv"))
	require.NoError(t, err)
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	require.NoError(t, err)
	require.Equal(t, []string{"CodeObj", "Vaddr", "Instruction", "Hitcount", "Latency", "Stall", "Idle", "Source"}, rows[0])
	require.Equal(t, []string{"2", "6912", "; _Z4vaddPKfS0_Pfi", "0", "0", "0", "0", "vadd(float const*, float const*, float*, int)"}, rows[1])
	require.Equal(t, []string{"2", "6912", "s_load_dword s0, s[4:5], 0x4", "4", "80", "0", "32", ""}, rows[2])
	require.Len(t, rows, 6)

	// occupancy.json: 4 waves x start/end per SE, kernel 1 = vadd's entry.
	var occ map[string]any
	readJSON(t, filepath.Join(ui, "occupancy.json"), &occ)
	require.Len(t, occ["0"], 8)
	require.Len(t, occ["1"], 8)
	require.Equal(t, []any{1000.0, 0.0, 0.0, 0.0, 1.0, 1.0}, occ["0"].([]any)[0])
	require.Equal(t, map[string]any{"0": "0 / 0x0", "1": "_Z4vaddPKfS0_Pfi"}, occ["dispatches"])

	// filenames.json lists every wave file, which exist.
	var names struct {
		GFXIP    int                                               `json:"gfxip"`
		Gfxv     string                                            `json:"gfxv"`
		Counters []string                                          `json:"counter_names"`
		Waves    map[string]map[string]map[string]map[string][]any `json:"wave_filenames"`
	}
	readJSON(t, filepath.Join(ui, "filenames.json"), &names)
	require.Equal(t, 9, names.GFXIP)
	require.Equal(t, "vega", names.Gfxv)
	require.Equal(t, []string{"SQ_WAVES", "SQ_BUSY_CYCLES:3"}, names.Counters)
	n := 0
	for se, simds := range names.Waves {
		for _, slots := range simds {
			for _, ids := range slots {
				for _, e := range ids {
					n++
					require.FileExists(t, filepath.Join(ui, e[0].(string)), se)
				}
			}
		}
	}
	require.Equal(t, 4, n, "2 waves on each of 2 SEs")
	var wave struct {
		Name string `json:"name"`
		Wave struct {
			Instructions [][]float64 `json:"instructions"`
			Timeline     [][]float64 `json:"timeline"`
			Begin, End   int64
		} `json:"wave"`
	}
	readJSON(t, filepath.Join(ui, "se1_sm1_sl0_wv0.json"), &wave)
	require.Equal(t, "SE1", wave.Name)
	require.Len(t, wave.Wave.Instructions, 4)
	require.Equal(t, []float64{1018, 2, 0, 20, 2}, wave.Wave.Instructions[0], "time, category, stall, duration, line")
	require.Equal(t, [][]float64{{2, 100}, {4, 50}, {2, 250}}, wave.Wave.Timeline)

	// wstates: exec (2) and stall (4) only.
	require.FileExists(t, filepath.Join(ui, "wstates2.json"))
	require.FileExists(t, filepath.Join(ui, "wstates4.json"))
	require.NoFileExists(t, filepath.Join(ui, "wstates1.json"))
	var ws struct {
		Time  []int64 `json:"time"`
		State []int64 `json:"state"`
	}
	readJSON(t, filepath.Join(ui, "wstates4.json"), &ws)
	require.Equal(t, []int64{1100, 1110, 1150, 1160}, ws.Time)
	require.Equal(t, []int64{2, 4, 2, 0}, ws.State, "two SEs' waves stall together")
	require.NoFileExists(t, filepath.Join(ui, "se0_perfcounter.json"), "no perf events without counters in the trace")
}

func TestDecodeDirPerfEventsAndRawWords(t *testing.T) {
	dir := decodeFixture(t)
	// Trace the kernel descriptor instead: not code, so the raw words come back.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "100_agent_1_shader_engine_0_7.att"),
		vgpuTrace(0, []uint64{testLoadBase + 0x9c0}, 1), 0o644))
	require.NoError(t, os.Remove(filepath.Join(dir, "100_agent_1_shader_engine_1_7.att")))
	t.Setenv("FAKE_DECODER_PERFEVENTS", "1")
	lib := buildFakeDecoder(t, t.TempDir())
	_, err := DecodeDir(DirOptions{Dir: dir, Library: lib})
	require.NoError(t, err)
	ui := filepath.Join(dir, "ui_output_agent_1_dispatch_7")
	var perf struct {
		Data [][]float64 `json:"data"`
	}
	readJSON(t, filepath.Join(ui, "se0_perfcounter.json"), &perf)
	require.Equal(t, [][]float64{{1100, 1, 2, 3, 4, 0, 0}, {1200, 5, 6, 7, 8, 0, 1}}, perf.Data)
	var code struct {
		Code [][]any `json:"code"`
	}
	readJSON(t, filepath.Join(ui, "code.json"), &code)
	require.Equal(t, "; _Z4vaddPKfS0_Pfi.kd", code.Code[0][0])
	require.Regexp(t, `^\.long 0x[0-9a-f]{8}$`, code.Code[1][0])
}

func TestDecodeReportsBadDataAndInfos(t *testing.T) {
	lib := buildFakeDecoder(t, t.TempDir())
	dec, err := Open(lib)
	require.NoError(t, err)
	defer dec.Close()
	_, err = dec.Decode(0, []byte("not a trace at all, definitely not"), nil)
	require.ErrorContains(t, err, "fake decoder: invalid shader data")
	tr, err := dec.Decode(3, vgpuTrace(3, nil, 0), nil)
	require.NoError(t, err)
	require.Equal(t, []string{"fake decoder: data lost"}, tr.Infos)
	require.Equal(t, 3, tr.SE)
}

func TestOpenAndFind(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(filepath.Join(dir, LibraryName))
	require.ErrorContains(t, err, "cannot load the thread-trace decoder")
	// A library without the entry point is refused by name.
	src := filepath.Join(dir, "x.c")
	require.NoError(t, os.WriteFile(src, []byte("int unrelated;\n"), 0o644))
	other := filepath.Join(dir, "other.so")
	b, err := exec.Command("cc", "-shared", "-fPIC", "-o", other, src).CombinedOutput()
	require.NoError(t, err, string(b))
	_, err = Open(other)
	require.ErrorContains(t, err, "rocprof_trace_decoder_parse_data")

	require.Equal(t, "", Find([]string{dir}, ""))
	lib := buildFakeDecoder(t, dir)
	require.Equal(t, lib, Find([]string{"/nonexistent", dir}, ""))
	require.Equal(t, lib, Find(nil, "/nonexistent:"+dir))
}

// markerWords are the USERDATA_2 words of a "loaded from start" code-object
// marker, as aql.BuildCodeObjMarkers writes them.
func markerWords(id, addr, size uint64) []uint32 {
	return []uint32{0x204, uint32(addr), 0x304, uint32(addr >> 32), 0x104, uint32(size), 0x404, uint32(size >> 32),
		0x004, uint32(id)<<2 | 2}
}

// With code-object markers in the trace the decoder reports (code object,
// ELF vaddr) PCs: no index is needed to place them.
func TestDecodeDirWithCodeObjectMarkers(t *testing.T) {
	dir := decodeFixture(t)
	require.NoError(t, os.Remove(filepath.Join(dir, CodeObjectIndexName(100))))
	// The index still names code object 2's dump but not where it was
	// loaded: the markers alone place the PCs.
	idx, err := json.Marshal(CodeObject{ID: 2, Agent: 1, File: "100_agent_1_code_object_id_2.out"})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, CodeObjectIndexName(100)), append(idx, '\n'), 0o644))
	words := append(markerWords(1, 0x7f0000000000, 0x1000), markerWords(2, testLoadBase, 0x3000)...)
	for se := uint32(0); se < 2; se++ {
		name := fmt.Sprintf("100_agent_1_shader_engine_%d_7.att", se)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), vgpuTrace(se, []uint64{testLoadBase + 0x1b00}, 8, words...), 0o644))
	}
	lib := buildFakeDecoder(t, t.TempDir())
	_, err = DecodeDir(DirOptions{Dir: dir, Library: lib})
	require.NoError(t, err)
	var code struct {
		Code [][]any `json:"code"`
	}
	readJSON(t, filepath.Join(dir, "ui_output_agent_1_dispatch_7", "code.json"), &code)
	require.Equal(t, "; _Z4vaddPKfS0_Pfi", code.Code[0][0])
	require.Equal(t, "s_load_dword s0, s[4:5], 0x4", code.Code[1][0])
	require.EqualValues(t, 2, code.Code[1][4])
	require.EqualValues(t, 0x1b00, code.Code[1][5])
}

// A raw PC resolves through the load ranges; a range reused by a later load
// resolves to the latest code object.
func TestCodeObjectsResolve(t *testing.T) {
	c := NewCodeObjects(t.TempDir(), []CodeObject{
		{ID: 3, LoadBase: 0x5000, LoadSize: 0x1000, LoadDelta: 0x5000},
		{ID: 1, LoadBase: 0x1000, LoadSize: 0x1000, LoadDelta: 0x1000},
		{ID: 2, LoadBase: 0x5000, LoadSize: 0x1000, LoadDelta: 0x5000},
	})
	require.Equal(t, PC{Addr: 0x10, CodeObj: 1}, c.Normalize(PC{Addr: 0x1010}))
	require.Equal(t, PC{Addr: 0x20, CodeObj: 3}, c.Normalize(PC{Addr: 0x5020}))
	require.Equal(t, PC{Addr: 0x3000}, c.Normalize(PC{Addr: 0x3000}), "in no range: unchanged")
	require.Equal(t, PC{Addr: 0x44, CodeObj: 2}, c.Normalize(PC{Addr: 0x44, CodeObj: 2}), "already placed")
	_, err := c.Instruction(PC{Addr: 0x3000})
	require.ErrorContains(t, err, "in no loaded code object")
}
