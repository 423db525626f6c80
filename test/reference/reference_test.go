package reference

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// The app run: multistream STREAMS ITERATIONS N (testdata/apps/multistream.cpp)
// launches, per iteration, hipMemcpyAsync H2D twice, vadd and scale on
// (N+255)/256 workgroups of 256 work-items, hipMemcpyAsync D2D and D2H,
// every copy of N floats. N is not a multiple of 256, so the last
// workgroup is partial and the wave count needs the ceiling.
const (
	appStreams = 1
	appIters   = 2
	appN       = 33024
	appWG      = 256
	appBytes   = appN * 4
	waveSize   = 64 // gfx9 runs wave64 only
	runTimeout = 5 * time.Minute
)

// The rows of the app's hip_api_trace.csv the test follows, per iteration
// and in call order (one thread, so correlation ids ascend with the calls).
var (
	appKernels = []string{"vadd(float const*, float const*, float*, int)", "scale(float*, float, int)"}
	appCopies  = []string{"MEMORY_COPY_HOST_TO_DEVICE", "MEMORY_COPY_HOST_TO_DEVICE",
		"MEMORY_COPY_DEVICE_TO_DEVICE", "MEMORY_COPY_DEVICE_TO_HOST"}
)

// outputs are the CSV files checked against the specification's sections.
var outputs = map[string]string{
	"agent_info":         "4.1",
	"kernel_trace":       "4.2",
	"hip_api_trace":      "4.3",
	"memory_copy_trace":  "4.5",
	"counter_collection": "4.8",
}

// TestOutputsEqualRocprofv3s runs rocprof-go on every runtime and
// architecture and compares its CSV and JSON with the values derived
// independently (doc.go).
func TestOutputsEqualRocprofv3s(t *testing.T) {
	cli := testsys.Artifact(t, "rocprof-go")
	spec := specColumns(t)
	for _, rt := range matrix(t) {
		for _, arch := range []string{"gfx90a", "gfx942"} {
			if !supports(rt, arch) {
				continue
			}
			t.Run(rt.Name+"/"+arch, func(t *testing.T) {
				out, tmp := runApp(t, cli, rt, arch)
				for name, section := range outputs {
					header := firstLine(t, filepath.Join(out, "run_"+name+".csv"))
					require.Equal(t, quoteAll(spec[section]), header,
						"%s.csv: the header of output-formats.md §%s, every name quoted", name, section)
				}
				kernels := codeObjectKernels(t, rt, arch, tmp)
				var names []string
				for name := range kernels {
					names = append(names, name)
				}
				sort.Strings(names)
				for _, name := range names {
					r := kernels[name]
					t.Logf("%s: VGPR %d, accumulation VGPR %d, SGPR %d (from its descriptor)", name, r.vgpr, r.accum, r.sgpr)
				}
				checkRun(t, out, kernels)
			})
		}
	}
}

func supports(rt rocmmatrix.Runtime, arch string) bool {
	for _, a := range rt.Archs() {
		if a == arch {
			return true
		}
	}
	return false
}

// matrix is every runtime of the ROCm matrix, checked as built, with the
// test's temporary directory visible inside the roots.
func matrix(t *testing.T) []rocmmatrix.Runtime {
	rts, err := rocmmatrix.Ready(testsys.RepoRoot(t), testsys.BuildDir(t))
	require.NoError(t, err)
	if tmp, err := filepath.EvalSymlinks(os.TempDir()); err == nil && tmp != "/tmp" && !strings.HasPrefix(tmp, "/tmp/") {
		for i := range rts {
			rts[i] = rts[i].WithBinds(tmp)
		}
	}
	return rts
}

// appPath is multistream as the runtime's own hipcc built it for arch.
func appPath(rt rocmmatrix.Runtime, arch string) string {
	if arch == "gfx942" {
		return filepath.Join(rt.Apps, "gfx942", "multistream")
	}
	return filepath.Join(rt.Apps, "multistream")
}

// runApp profiles the app and returns the output directory and the
// directory comgr kept its work in: HIP compiles its blit kernels at run
// time with comgr, and AMD_COMGR_SAVE_TEMPS keeps each action's files
// (output/a.so is the code object HIP loads) in TMPDIR; the cache is off
// so that every run compiles.
func runApp(t *testing.T, cli string, rt rocmmatrix.Runtime, arch string) (out, tmp string) {
	dir := t.TempDir()
	out, tmp = filepath.Join(dir, "out"), filepath.Join(dir, "tmp")
	require.NoError(t, os.Mkdir(tmp, 0o755))
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := rt.Command(ctx, cli, "--virtual-gpu="+arch, "--kernel-trace", "--memory-copy-trace", "--hip-trace",
		"--pmc", "SQ_WAVES", "-f", "csv,json", "-d", out, "-o", "run", "--",
		appPath(rt, arch), strconv.Itoa(appStreams), strconv.Itoa(appIters), strconv.Itoa(appN))
	cmd.Dir = dir
	var env []string
	for _, e := range os.Environ() {
		name, _, _ := strings.Cut(e, "=")
		if !strings.HasPrefix(name, "ROCPROF_") && !strings.HasPrefix(name, "AMD_COMGR_") &&
			name != "HSA_TOOLS_LIB" && name != "LD_PRELOAD" && name != "TMPDIR" {
			env = append(env, e)
		}
	}
	cmd.Env = append(env, "TMPDIR="+tmp, "AMD_COMGR_SAVE_TEMPS=1", "AMD_COMGR_CACHE=0")
	o, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", o)
	return out, tmp
}

// specColumns reads each CSV file's columns from the shared specification
// of rocprofv3's outputs (written from rocprofiler-sdk's generateCSV.cpp
// and csv.hpp, and its docs' sample files source/docs/data/*.csv), by
// section number: either a "| # | Column |" table (a row "17-19 |
// `Workgroup_Size_X/Y/Z`" is three columns) or the section's list in
// backquotes, comma separated, from the line that opens it to the line
// that closes it.
func specColumns(t *testing.T) map[string][]string {
	path := filepath.Join(testsys.RepoRoot(t), "..", "shared", "docs", "output-formats.md")
	data, err := os.ReadFile(path)
	require.NoError(t, err, "the shared specifications must be at ../shared beside the checkout")
	sections := map[string][]string{}
	var cur string
	heading := regexp.MustCompile(`^### (\d+\.\d+) `)
	for _, l := range strings.Split(string(data), "\n") {
		if m := heading.FindStringSubmatch(l); m != nil {
			cur = m[1]
			continue
		}
		if strings.HasPrefix(l, "## ") {
			cur = ""
		}
		if cur != "" {
			sections[cur] = append(sections[cur], l)
		}
	}
	cols := map[string][]string{}
	count := regexp.MustCompile(`^### [0-9.]+ .*\((\d+) columns\)`)
	for _, section := range outputs {
		lines := sections[section]
		require.NotEmpty(t, lines, "output-formats.md has no section %s", section)
		var names []string
		if table := tableColumns(lines); table != nil {
			names = table
		} else {
			var para strings.Builder
			for _, l := range lines {
				if para.Len() == 0 && !strings.HasPrefix(l, "`") {
					continue
				}
				para.WriteString(l + " ")
				if strings.HasSuffix(strings.TrimSpace(l), "`") {
					break // the list's closing backquote
				}
			}
			text := strings.Trim(strings.TrimSpace(para.String()), "`")
			for _, n := range strings.Split(text, ",") {
				names = append(names, strings.TrimSpace(n))
			}
		}
		require.NotEmpty(t, names, "section %s", section)
		for _, n := range names {
			require.Regexp(t, `^[A-Z][A-Za-z_]*$`, n, "section %s: a column name", section)
		}
		// The heading's column count, where it gives one, checks the parse.
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "### "+section+" ") {
				if m := count.FindStringSubmatch(l); m != nil {
					require.Equal(t, m[1], strconv.Itoa(len(names)), "section %s: %v", section, names)
				}
			}
		}
		cols[section] = names
	}
	return cols
}

// tableColumns reads a "| # | Column | ... |" table's column names.
func tableColumns(lines []string) []string {
	var names []string
	in := false
	for _, l := range lines {
		cells := strings.Split(l, "|")
		if len(cells) < 4 {
			if in {
				break
			}
			continue
		}
		if strings.TrimSpace(cells[1]) == "#" && strings.TrimSpace(cells[2]) == "Column" {
			in = true
			continue
		}
		if !in || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[2]), "`")
		if base, dims, ok := strings.Cut(name, "_X/"); ok {
			for _, d := range append([]string{"X"}, strings.Split(dims, "/")...) {
				names = append(names, base+"_"+d)
			}
			continue
		}
		names = append(names, name)
	}
	return names
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = `"` + n + `"`
	}
	return strings.Join(q, ",")
}

func firstLine(t *testing.T, path string) string {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	require.True(t, sc.Scan(), "%s is empty", path)
	return sc.Text()
}

// registers is what rocprofv3 reports for a kernel.
type registers struct{ vgpr, accum, sgpr int }

// codeObjectKernels maps each kernel the run could dispatch (by demangled
// name) to its register counts, from the code objects themselves: the
// app's, unbundled from its .hip_fatbin for arch, and the blit kernels'
// that comgr compiled during the run (in tmp).
func codeObjectKernels(t *testing.T, rt rocmmatrix.Runtime, arch, tmp string) map[string]registers {
	objects := [][]byte{appCodeObject(t, appPath(rt, arch), arch)}
	blits, err := filepath.Glob(filepath.Join(tmp, "comgr-*", "output", "*.so"))
	require.NoError(t, err)
	require.NotEmpty(t, blits, "comgr kept no code object in %s: HIP compiled no blit kernel?", tmp)
	for _, b := range blits {
		data, err := os.ReadFile(b)
		require.NoError(t, err)
		objects = append(objects, data)
	}
	kernels := map[string]registers{}
	for _, co := range objects {
		descs := descriptors(t, co)
		var mangled []string
		for name := range descs {
			mangled = append(mangled, name)
		}
		sort.Strings(mangled)
		for i, d := range demangle(t, mangled) {
			r := rocprofv3Registers(arch, descs[mangled[i]])
			if prev, ok := kernels[d]; ok {
				require.Equal(t, prev, r, "%s: two code objects with different registers", d)
			}
			kernels[d] = r
		}
	}
	return kernels
}

// appCodeObject unbundles the app's code object for arch from the clang
// offload bundles in its .hip_fatbin section: "__CLANG_OFFLOAD_BUNDLE__",
// an entry count, then per entry its offset (from the bundle's start), size
// and target triple (…-amdgcn-amd-amdhsa--gfx90a[:features]).
func appCodeObject(t *testing.T, app, arch string) []byte {
	f, err := elf.Open(app)
	require.NoError(t, err)
	defer f.Close()
	sec := f.Section(".hip_fatbin")
	require.NotNil(t, sec, "%s has no .hip_fatbin", app)
	data, err := sec.Data()
	require.NoError(t, err)
	const magic = "__CLANG_OFFLOAD_BUNDLE__"
	var found [][]byte
	var triples []string
	for start := 0; ; {
		i := bytes.Index(data[start:], []byte(magic))
		if i < 0 {
			break
		}
		b := data[start+i:]
		p := len(magic)
		u64 := func() uint64 { v := binary.LittleEndian.Uint64(b[p:]); p += 8; return v }
		for n := u64(); n > 0; n-- {
			off, size, tlen := u64(), u64(), u64()
			triple := string(b[p : p+int(tlen)])
			p += int(tlen)
			triples = append(triples, triple)
			if _, target, ok := strings.Cut(triple, "amdgcn-amd-amdhsa--"); ok && strings.Split(target, ":")[0] == arch {
				found = append(found, b[off:off+size])
			}
		}
		start += i + len(magic)
	}
	require.Len(t, found, 1, "%s: one %s code object in %v", app, arch, triples)
	return found[0]
}

// descriptors reads each kernel's 64-byte descriptor (its NAME.kd symbol)
// from a code object, by the kernel's symbol name.
func descriptors(t *testing.T, co []byte) map[string][]byte {
	f, err := elf.NewFile(bytes.NewReader(co))
	require.NoError(t, err)
	syms, err := f.Symbols()
	require.NoError(t, err)
	out := map[string][]byte{}
	for _, s := range syms {
		name, ok := strings.CutSuffix(s.Name, ".kd")
		if !ok || s.Section == elf.SHN_UNDEF || int(s.Section) >= len(f.Sections) {
			continue
		}
		sec := f.Sections[s.Section]
		data, err := sec.Data()
		require.NoError(t, err)
		off := s.Value - sec.Addr
		require.LessOrEqual(t, off+64, uint64(len(data)), "%s: descriptor outside %s", s.Name, sec.Name)
		out[name] = data[off : off+64]
	}
	require.NotEmpty(t, out, "a code object without kernels")
	return out
}

// demangle runs llvm-cxxfilt (the names rocprofv3 writes are the symbols
// demangled; C names such as the blit kernels' stay as they are).
func demangle(t *testing.T, names []string) []string {
	cmd := exec.Command("llvm-cxxfilt")
	cmd.Stdin = strings.NewReader(strings.Join(names, "\n") + "\n")
	out, err := cmd.Output()
	require.NoError(t, err, "llvm-cxxfilt (Debian's llvm, in make deps)")
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, got, len(names))
	return got
}

// rocprofv3Registers computes the register columns as rocprofiler-sdk's
// code-object tracing does (source/lib/rocprofiler-sdk/code_object/
// code_object.cpp: arch_vgpr_count, accum_vgpr_count, sgpr_count, on the
// descriptor's compute_pgm_rsrc3 at byte 44 and compute_pgm_rsrc1 at 48),
// for the two architectures run here: on gfx90a and gfx94x the
// architected VGPRs are (ACCUM_OFFSET + 1) × 4 (rsrc3 bits 0-5), the
// accumulation VGPRs the rest of the unified file, (GRANULATED_WORKITEM_
// VGPR_COUNT + 1) × 8 (rsrc1 bits 0-5) minus those; gfx9 SGPRs are
// (GRANULATED_WAVEFRONT_SGPR_COUNT / 2 + 1) × 16 (rsrc1 bits 6-9).
func rocprofv3Registers(arch string, kd []byte) registers {
	if arch != "gfx90a" && !strings.HasPrefix(arch, "gfx94") {
		panic("the test derives registers for gfx90a and gfx94x only: " + arch)
	}
	rsrc3 := binary.LittleEndian.Uint32(kd[44:])
	rsrc1 := binary.LittleEndian.Uint32(kd[48:])
	vgpr := int(rsrc3&0x3f+1) * 4
	return registers{
		vgpr:  vgpr,
		accum: int(rsrc1&0x3f+1)*8 - vgpr,
		sgpr:  int((rsrc1>>6)&0xf/2+1) * 16,
	}
}

// table is a CSV file's rows as column -> cell maps.
func table(t *testing.T, path string) []map[string]string {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r := csv.NewReader(f)
	rows, err := r.ReadAll()
	require.NoError(t, err, "%s", path)
	require.NotEmpty(t, rows, "%s", path)
	var out []map[string]string
	for _, row := range rows[1:] {
		m := map[string]string{}
		for i, h := range rows[0] {
			m[h] = row[i]
		}
		out = append(out, m)
	}
	return out
}

func num(t *testing.T, s string) int {
	v, err := strconv.Atoi(s)
	require.NoError(t, err)
	return v
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// checkRun compares one run's outputs with the derived values.
func checkRun(t *testing.T, out string, kernels map[string]registers) {
	dispatches := table(t, filepath.Join(out, "run_kernel_trace.csv"))
	counters := table(t, filepath.Join(out, "run_counter_collection.csv"))
	hip := table(t, filepath.Join(out, "run_hip_api_trace.csv"))
	copies := table(t, filepath.Join(out, "run_memory_copy_trace.csv"))

	// The app's calls in call order: one thread, so correlation ids
	// (numbered 1, 2, ... by call start, as rocprofv3 numbers them) order
	// them.
	sort.Slice(hip, func(i, j int) bool { return num(t, hip[i]["Correlation_Id"]) < num(t, hip[j]["Correlation_Id"]) })
	var launches, memcpys []map[string]string
	for i, h := range hip {
		require.Equal(t, i+1, num(t, h["Correlation_Id"]), "correlation ids 1..N over the traced calls")
		switch h["Function"] {
		case "hipLaunchKernel":
			launches = append(launches, h)
		case "hipMemcpyAsync":
			memcpys = append(memcpys, h)
		}
	}
	require.Len(t, launches, appStreams*appIters*len(appKernels))
	require.Len(t, memcpys, appStreams*appIters*len(appCopies))

	// Dispatches: ids 1..N in the order the calls enqueued them; names
	// and registers those of the code objects; the app's own kernels at
	// its launch's correlation id with its grid and workgroup.
	byCorr := map[string][]map[string]string{}
	sort.Slice(dispatches, func(i, j int) bool {
		return num(t, dispatches[i]["Dispatch_Id"]) < num(t, dispatches[j]["Dispatch_Id"])
	})
	accum := 0
	for i, d := range dispatches {
		require.Equal(t, i+1, num(t, d["Dispatch_Id"]), "dispatch ids 1..N")
		if i > 0 {
			require.Greater(t, num(t, d["Correlation_Id"]), num(t, dispatches[i-1]["Correlation_Id"]),
				"dispatch ids follow the order of the calls that enqueued them")
		}
		byCorr[d["Correlation_Id"]] = append(byCorr[d["Correlation_Id"]], d)
		r, ok := kernels[d["Kernel_Name"]]
		require.True(t, ok, "%q is no kernel of the code objects (demangled): %v", d["Kernel_Name"], kernels)
		require.Equal(t, []int{r.vgpr, r.accum, r.sgpr},
			[]int{num(t, d["VGPR_Count"]), num(t, d["Accum_VGPR_Count"]), num(t, d["SGPR_Count"])},
			"%s: VGPR_Count, Accum_VGPR_Count, SGPR_Count", d["Kernel_Name"])
		accum += r.accum
		if strings.HasPrefix(d["Kernel_Name"], "__amd_rocclr_") {
			// The blit kernels' descriptors ask for 24 SGPRs (granule 2):
			// rocprofv3 reports 32 (docs/outputs.md).
			require.Equal(t, 32, r.sgpr, "%s", d["Kernel_Name"])
		}
	}
	require.Positive(t, accum, "no dispatch with accumulation VGPRs: the unified register file's split is not exercised")
	for i, l := range launches {
		ds := byCorr[l["Correlation_Id"]]
		require.Len(t, ds, 1, "launch %d (correlation id %s): one dispatch", i, l["Correlation_Id"])
		d := ds[0]
		require.Equal(t, appKernels[i%len(appKernels)], d["Kernel_Name"], "launch %d", i)
		require.Equal(t, l["Thread_Id"], d["Thread_Id"])
		require.Equal(t, []string{strconv.Itoa(appWG), "1", "1", strconv.Itoa(appN), "1", "1"},
			[]string{d["Workgroup_Size_X"], d["Workgroup_Size_Y"], d["Workgroup_Size_Z"],
				d["Grid_Size_X"], d["Grid_Size_Y"], d["Grid_Size_Z"]}, "%s: the app's launch", d["Kernel_Name"])
	}

	// Copies: each hipMemcpyAsync is a memory copy of the app's bytes in
	// its direction (the JSON carries the byte count, the CSV does not),
	// or HIP did it with blit kernels (always D2D; D2H on HIP 7 at times).
	copyBytes := jsonCopyBytes(t, out)
	copyByCorr := map[string]map[string]string{}
	for _, c := range copies {
		require.NotContains(t, copyByCorr, c["Correlation_Id"])
		copyByCorr[c["Correlation_Id"]] = c
	}
	for i, m := range memcpys {
		corr := m["Correlation_Id"]
		if c, ok := copyByCorr[corr]; ok {
			require.Equal(t, appCopies[i%len(appCopies)], c["Direction"], "copy %d", i)
			require.Equal(t, appBytes, copyBytes[num(t, corr)], "copy %d: bytes", i)
			delete(copyByCorr, corr)
			continue
		}
		require.NotEmpty(t, byCorr[corr], "copy %d (%s, correlation id %s): neither a memory copy nor a blit kernel", i, appCopies[i%len(appCopies)], corr)
		for _, d := range byCorr[corr] {
			require.True(t, strings.HasPrefix(d["Kernel_Name"], "__amd_rocclr_copyBuffer"), "copy %d: %s", i, d["Kernel_Name"])
		}
	}
	require.Empty(t, copyByCorr, "memory copies of no hipMemcpyAsync")
	for corr := range byCorr {
		found := false
		for _, h := range hip {
			found = found || h["Correlation_Id"] == corr
		}
		require.True(t, found, "a dispatch's correlation id %s is no traced call", corr)
	}

	// SQ_WAVES: one record per dispatch (no filter), ceil(grid / workgroup)
	// workgroups of ceil(workgroup / 64) waves; the app's kernels from its
	// launch parameters, the blit kernels from their rows' sizes.
	require.Len(t, counters, len(dispatches))
	byID := map[string]map[string]string{}
	for _, d := range dispatches {
		byID[d["Dispatch_Id"]] = d
	}
	for _, c := range counters {
		d, ok := byID[c["Dispatch_Id"]]
		require.True(t, ok, "counters of dispatch %s, not traced", c["Dispatch_Id"])
		require.Equal(t, "SQ_WAVES", c["Counter_Name"])
		grid := num(t, d["Grid_Size_X"]) * num(t, d["Grid_Size_Y"]) * num(t, d["Grid_Size_Z"])
		wg := num(t, d["Workgroup_Size_X"]) * num(t, d["Workgroup_Size_Y"]) * num(t, d["Workgroup_Size_Z"])
		if d["Kernel_Name"] == appKernels[0] || d["Kernel_Name"] == appKernels[1] {
			grid, wg = appN, appWG
		}
		waves := ceilDiv(grid, wg) * ceilDiv(wg, waveSize)
		require.Equal(t, fmt.Sprintf("%d.000000", waves), c["Counter_Value"], "%s", d["Kernel_Name"])
		r := kernels[d["Kernel_Name"]]
		require.Equal(t, []string{d["Correlation_Id"], d["Kernel_Name"], strconv.Itoa(grid), strconv.Itoa(wg),
			strconv.Itoa(r.vgpr), strconv.Itoa(r.accum), strconv.Itoa(r.sgpr)},
			[]string{c["Correlation_Id"], c["Kernel_Name"], c["Grid_Size"], c["Workgroup_Size"],
				c["VGPR_Count"], c["Accum_VGPR_Count"], c["SGPR_Count"]}, "counter record of dispatch %s", c["Dispatch_Id"])
	}
}

// jsonCopyBytes maps the JSON's memory copies' correlation ids to their
// byte counts (rocprofv3's buffer_records.memory_copy[].bytes).
func jsonCopyBytes(t *testing.T, out string) map[int]int {
	data, err := os.ReadFile(filepath.Join(out, "run_results.json"))
	require.NoError(t, err)
	var doc struct {
		Tool []struct {
			BufferRecords struct {
				MemoryCopy []struct {
					Bytes       int `json:"bytes"`
					Correlation struct {
						Internal int `json:"internal"`
					} `json:"correlation_id"`
				} `json:"memory_copy"`
			} `json:"buffer_records"`
		} `json:"rocprofiler-sdk-tool"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	require.Len(t, doc.Tool, 1)
	out2 := map[int]int{}
	for _, c := range doc.Tool[0].BufferRecords.MemoryCopy {
		out2[c.Correlation.Internal] = c.Bytes
	}
	return out2
}
