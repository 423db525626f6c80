package rocprof_test

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// The virtual GPU's synthetic SQTT stream (docs/virtual-gpu.md, "Synthetic
// SQTT") and AQLprofile's user-data words at the start of every trace
// (internal/aql/att.go).
const (
	sqttMagic        = "VGPUSQTT"
	attTimestampTag  = 0x5        // user-data tag of a timestamp (lo, hi follow)
	attTimestampHigh = 0xffffffff // stands for a timestamp's high half in a shape
	sqttBlock        = 32         // header, padded user data and records are 32-byte blocks
	attUserdataMagic = 0x434F5200
	attUserdataInfo  = 0x00080201
)

// attTrace is one raw .att file taken apart.
type attTrace struct {
	header     uint64 // AQLprofile's gfx9 header
	size       int
	version    uint32
	se         uint32
	waves      uint64 // waves on this SE
	user       []uint32
	dispatches []attRecord
}

type attRecord struct {
	kernelObject, waves, durationNs, index uint64
}

func parseATT(t *testing.T, raw []byte) attTrace {
	t.Helper()
	require.Greater(t, len(raw), 8+sqttBlock)
	tr := attTrace{header: binary.LittleEndian.Uint64(raw), size: len(raw)}
	data := raw[8:]
	require.Equal(t, sqttMagic, string(data[:8]))
	tr.version = binary.LittleEndian.Uint32(data[8:])
	tr.se = binary.LittleEndian.Uint32(data[12:])
	ndisp := int(binary.LittleEndian.Uint32(data[16:]))
	nuser := int(binary.LittleEndian.Uint32(data[20:]))
	tr.waves = binary.LittleEndian.Uint64(data[24:])
	userBytes := (nuser*4 + sqttBlock - 1) / sqttBlock * sqttBlock
	require.Equal(t, sqttBlock+userBytes+sqttBlock*ndisp, len(data), "the stream is the header, the user data and the records, nothing more")
	for i := 0; i < nuser; i++ {
		tr.user = append(tr.user, binary.LittleEndian.Uint32(data[sqttBlock+4*i:]))
	}
	for i := 0; i < ndisp; i++ {
		r := data[sqttBlock+userBytes+sqttBlock*i:]
		tr.dispatches = append(tr.dispatches, attRecord{binary.LittleEndian.Uint64(r), binary.LittleEndian.Uint64(r[8:]),
			binary.LittleEndian.Uint64(r[16:]), binary.LittleEndian.Uint64(r[24:])})
	}
	return tr
}

// jsonKernelSymbol is a kernel of the JSON output's kernel_symbols.
type jsonKernelSymbol struct {
	KernelID     uint64 `json:"kernel_id"`
	CodeObjectID uint64 `json:"code_object_id"`
	KernelName   string `json:"kernel_name"`
	KernelObject uint64 `json:"kernel_object"`
}

func readJSONKernelSymbols(t *testing.T, dir string) map[string]jsonKernelSymbol {
	matches, err := filepath.Glob(filepath.Join(dir, "*_results.json"))
	require.NoError(t, err)
	require.Len(t, matches, 1)
	raw, err := os.ReadFile(matches[0])
	require.NoError(t, err)
	var doc struct {
		Tool []struct {
			Symbols []jsonKernelSymbol `json:"kernel_symbols"`
		} `json:"rocprofiler-sdk-tool"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	out := map[string]jsonKernelSymbol{}
	for _, tool := range doc.Tool {
		for _, s := range tool.Symbols {
			out[strconv.FormatUint(s.KernelID, 10)] = s
		}
	}
	return out
}

// attTraced is what a traced dispatch looks like on any runtime: the
// kernel, the raw file's size and header, and the stream's shape (user-data
// tags without their values, which hold addresses and timestamps).
type attTraced struct {
	Kernel     string
	Size       int
	Header     uint64
	Waves      uint64
	Dispatches []string
	Tags       []uint32
}

// The kernels the matrix test traces.
const attMatrixKernels = "vadd|scale"

// On every runtime of the matrix, --att (with the streamed SQ counters and
// the stand-in decoder att_test.go uses) of a multi-stream app, every
// dispatch serialised: one .att file per traced dispatch (SE 0, the
// default mask) named by its dispatch id, AQLprofile's header and then the
// virtual GPU's stream holding exactly the traced dispatch with the model's
// waves and duration, its kernel object the one the kernel trace names;
// every loaded code object dumped, indexed and marked in each trace once;
// the decoded output for exactly the traced dispatches, naming their
// kernels; and each trace the same as on ROCm 5.2.
func TestThreadTraceOnEveryRuntime(t *testing.T) {
	repo, rts := matrix(t)
	libEnv(t)
	t.Setenv("FAKE_DECODER_PERFEVENTS", "1") // read by the decoder, which runs in this process
	decoder := fakeDecoderDir(t)
	results := map[string][]attTraced{}
	for _, rt := range rts {
		t.Run(rt.Name, func(t *testing.T) {
			require.NoError(t, rt.Check())
			started := time.Now()
			out := t.TempDir()
			var stdout, stderr strings.Builder
			res, err := rocprof.Run(context.Background(), rocprof.Options{
				Args: []string{"--virtual-gpu", "--att", "--att-serialize-all", "--att-library-path", decoder,
					"--att-perfcounters", "SQ_WAVES SQ_BUSY_CYCLES:3", "--att-perfcounter-ctrl", "4",
					"--kernel-include-regex", attMatrixKernels, "--kernel-trace", "-f", "csv,json", "-d", out, "-o", "run"},
				Stdout: &stdout, Stderr: &stderr,
			}, matrixApp(repo, rt, "2", "2"))
			require.NoError(t, err)
			require.Equal(t, 0, res.ExitStatus, "stderr:\n%s", stderr.String())
			results[rt.Name] = checkThreadTrace(t, rt.Name, res, multistreamDispatches(t, stdout.String()))
			t.Logf("ROCm %s: traced and decoded in %.1f s", rt.Name, time.Since(started).Seconds())
		})
	}
	t.Run("same on every runtime", func(t *testing.T) {
		host := results[rocmmatrix.HostName]
		require.NotNil(t, host, "ROCm %s did not finish", rocmmatrix.HostName)
		require.Len(t, results, len(rts), "every runtime finished")
		for name, got := range results {
			require.Equal(t, host, got, "ROCm %s's traces against ROCm %s's", name, rocmmatrix.HostName)
		}
	})
}

func checkThreadTrace(t *testing.T, runtimeName string, res *rocprof.Result, appDispatches int) []attTraced {
	t.Helper()
	dir := res.Dir
	gpu := vgpuGPU(t, dir)
	symbols := readJSONKernelSymbols(t, dir)
	selected := regexp.MustCompile(attMatrixKernels)

	// The code-object index: every dumped code object, where it was loaded.
	idx, err := filepath.Glob(filepath.Join(dir, "*_att_code_objects.jsonl"))
	require.NoError(t, err)
	require.Len(t, idx, 1, "one process, one index")
	pid := strings.TrimSuffix(filepath.Base(idx[0]), "_att_code_objects.jsonl")
	raw, err := os.ReadFile(idx[0])
	require.NoError(t, err)
	var cos []attCodeObject
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var e attCodeObject
		require.NoError(t, json.Unmarshal([]byte(l), &e))
		require.Equal(t, gpu.node, strconv.FormatUint(uint64(e.Agent), 10))
		require.Equal(t, fmt.Sprintf("%s_agent_%s_code_object_id_%d.out", pid, gpu.node, e.ID), e.File)
		elf, err := os.ReadFile(filepath.Join(dir, e.File))
		require.NoError(t, err)
		require.Equal(t, "\x7fELF", string(elf[:4]), e.File)
		require.NotZero(t, e.LoadSize)
		cos = append(cos, e)
	}
	dumped, err := filepath.Glob(filepath.Join(dir, "*_code_object_id_*.out"))
	require.NoError(t, err)
	require.Len(t, dumped, len(cos), "every dumped code object is indexed")

	// The traced dispatches, from the kernel trace: the selected kernels'.
	kt := readTable(t, dir, "kernel_trace.csv")
	traced := map[string]bool{}
	var order []string // traced dispatch ids in dispatch order
	app := 0
	for _, r := range kt.rows {
		if appKernel(kt.get(r, "Kernel_Name")) {
			app++
		}
		if selected.MatchString(kt.get(r, "Kernel_Name")) {
			id := kt.get(r, "Dispatch_Id")
			traced[id] = true
			order = append(order, id)
		}
	}
	require.Equal(t, appDispatches, app, "ROCm %s: the app's dispatches in the kernel trace", runtimeName)
	require.Equal(t, appDispatches, len(traced), "every dispatch of %s is traced", attMatrixKernels)
	slices.SortFunc(order, func(a, b string) int { return cmp.Compare(atoi(t, a), atoi(t, b)) })

	// One raw file per traced dispatch (SE 0) and nothing else.
	raws, err := filepath.Glob(filepath.Join(dir, "*.att"))
	require.NoError(t, err)
	require.Len(t, raws, len(traced), "ROCm %s: one .att per traced dispatch", runtimeName)
	rows := map[string][]string{}
	for _, r := range kt.rows {
		rows[kt.get(r, "Dispatch_Id")] = r
	}
	// AQLprofile's gfx9 header: legacy version 0x11, version 4, SIMD mask,
	// CU, SE (the defaults: SIMDs 0xF, CU 1, SE 0).
	const wantHeader = 0x11 | 4<<13 | 0xF<<16 | 1<<20 | 0<<26
	var out []attTraced
	var userWords int
	for _, id := range order {
		name := filepath.Join(dir, fmt.Sprintf("%s_agent_%s_shader_engine_0_%s.att", pid, gpu.node, id))
		data, err := os.ReadFile(name)
		require.NoError(t, err, "ROCm %s: the trace of dispatch %s", runtimeName, id)
		tr := parseATT(t, data)
		r := rows[id]
		var d vgpuDispatch
		for i, axis := range []string{"X", "Y", "Z"} {
			d.grid[i] = atoi(t, kt.get(r, "Grid_Size_"+axis))
			d.wg[i] = atoi(t, kt.get(r, "Workgroup_Size_"+axis))
		}
		sym, ok := symbols[kt.get(r, "Kernel_Id")]
		require.True(t, ok, "dispatch %s's kernel %s in kernel_symbols", id, kt.get(r, "Kernel_Id"))
		require.Equal(t, uint64(wantHeader), tr.header, "dispatch %s", id)
		require.Equal(t, uint32(1), tr.version)
		require.Equal(t, uint32(0), tr.se)
		wavesSE0 := uint64(gpu.wavesOnSE(d, 0))
		require.Equal(t, wavesSE0, tr.waves, "dispatch %s: waves on SE 0", id)
		// Every dispatch serialised: the traced one alone, as the model runs it.
		require.Equal(t, []attRecord{{sym.KernelObject, wavesSE0, uint64(gpu.durationNs(d)), 0}}, tr.dispatches,
			"ROCm %s: dispatch %s (%s, %v) alone in its trace", runtimeName, id, sym.KernelName, d)
		inside := false
		for _, e := range cos {
			inside = inside || (e.ID == sym.CodeObjectID && sym.KernelObject >= e.LoadBase && sym.KernelObject < e.LoadBase+e.LoadSize)
		}
		require.True(t, inside, "dispatch %s's kernel object in its code object's loaded range", id)

		// User data: AQLprofile's two header words, then (tag, value)
		// pairs: timestamps and, once per loaded code object, its "from
		// start" marker (load address, then header word 4 with id << 2 | 2).
		require.GreaterOrEqual(t, len(tr.user), 2)
		require.Equal(t, []uint32{attUserdataMagic, attUserdataInfo}, tr.user[:2], "dispatch %s", id)
		require.Zero(t, (len(tr.user)-2)%2, "dispatch %s: (tag, value) pairs", id)
		var tags []uint32
		for i := 2; i < len(tr.user); i += 2 {
			require.NotEqual(t, uint32(attUserdataMagic), tr.user[i], "dispatch %s: one trace's user data only", id)
			tag := tr.user[i]
			if i >= 4 && tr.user[i-2] == attTimestampTag {
				// A timestamp takes two pairs: the second's first word is
				// the timestamp's high half, which moves every 43 s of a
				// 100 MHz clock, so it is not part of the stream's shape.
				tag = attTimestampHigh
			}
			tags = append(tags, tag)
		}
		for _, e := range cos {
			require.Equal(t, 1, countWords(tr.user, []uint32{0x204, uint32(e.LoadDelta)}), "dispatch %s: code object %d's address", id, e.ID)
			require.Equal(t, 1, countWords(tr.user, []uint32{0x004, uint32(e.ID)<<2 | 2}), "dispatch %s: code object %d's marker", id, e.ID)
		}
		if userWords == 0 {
			userWords = len(tr.user)
		}
		require.Equal(t, userWords, len(tr.user), "dispatch %s: every trace of the run holds the same user data", id)
		out = append(out, attTraced{Kernel: sym.KernelName, Size: tr.size, Header: tr.header, Waves: tr.waves,
			Dispatches: []string{fmt.Sprintf("%d waves %d ns", tr.dispatches[0].waves, tr.dispatches[0].durationNs)}, Tags: tags})
	}

	// Decoded: a directory and a stats CSV per traced dispatch, naming its
	// kernel; run.json lists them.
	uis, err := filepath.Glob(filepath.Join(dir, "ui_output_agent_*_dispatch_*"))
	require.NoError(t, err)
	require.Len(t, uis, len(traced), "ROCm %s: one decoded output per traced dispatch", runtimeName)
	for _, id := range order {
		ui := filepath.Join(dir, fmt.Sprintf("ui_output_agent_%s_dispatch_%s", gpu.node, id))
		var occ struct {
			Dispatches map[string]string `json:"dispatches"`
		}
		data, err := os.ReadFile(filepath.Join(ui, "occupancy.json"))
		require.NoError(t, err, "dispatch %s decoded", id)
		require.NoError(t, json.Unmarshal(data, &occ))
		want := symbols[kt.get(rows[id], "Kernel_Id")].KernelName
		// Kernel id 0 is the output's "no kernel" entry; the traced one is 1.
		require.Equal(t, map[string]string{"0": "0 / 0x0", "1": want}, occ.Dispatches, "ROCm %s: dispatch %s's decoded kernel", runtimeName, id)
		require.FileExists(t, filepath.Join(dir, "stats_"+filepath.Base(ui)+".csv"))
	}
	listed := 0
	for _, f := range res.Manifest.Files {
		if f.Domain == "thread_trace" {
			listed++
			require.FileExists(t, filepath.Join(dir, f.Path))
		}
	}
	require.Equal(t, 2*len(traced), listed, "a stats CSV and a code.json per traced dispatch in run.json")
	return out
}

// attCodeObject is one line of <pid>_att_code_objects.jsonl.
type attCodeObject struct {
	ID        uint64 `json:"id"`
	Agent     uint32 `json:"agent"`
	LoadBase  uint64 `json:"load_base"`
	LoadSize  uint64 `json:"load_size"`
	LoadDelta int64  `json:"load_delta"`
	File      string `json:"file"`
}

// countWords counts the places where seq appears in words.
func countWords(words, seq []uint32) int {
	n := 0
	for i := 0; i+len(seq) <= len(words); i++ {
		if slices.Equal(words[i:i+len(seq)], seq) {
			n++
		}
	}
	return n
}
