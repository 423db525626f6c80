//go:build rocprofcompute

package rocprofcompute

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// A PC-sampling configuration: rocprofiler-compute's --pc-sampling-method
// and --pc-sampling-interval (µs for host trap, cycles for stochastic).
type pcsConfig struct {
	gpu      gpu
	method   string
	interval int
}

var pcsConfigs = []pcsConfig{
	{gpus[0], "host_trap", 1},
	{gpus[1], "host_trap", 1},
	{gpus[1], "stochastic", 1024},
}

// The virtual GPU's sample model (docs/pc-sampling.md, "What the virtual
// GPU models"; the instruction pick is vgpu/src/pcsample.c's): a dispatch
// of W waves in G workgroups lasts D = 2000 + 8 W ns; host trap samples
// every resident wave at n = floor(D / 1000 I) instants, stochastic one
// wave of each of min(G, 304) CUs at n = floor(D × 2100 / 1000 I)
// instants. At instant i (1..n) wave w samples the kernel's instruction
// (7 i + 13 w) mod N (N its instructions). modelPicks gives the count of
// each instruction index.
func modelPicks(c pcsConfig, waves, wgs, nInsn int) []int {
	d := 2000 + 8*waves
	wpg := waves / wgs
	counts := make([]int, nInsn)
	if c.method == "host_trap" {
		capacity := map[string]int{"gfx90a": 3328, "gfx942": 9728}[c.gpu.arch]
		n := d / (1000 * c.interval)
		for i := 1; i <= n; i++ {
			for j := 0; j < min(waves, capacity); j++ {
				w := ((i-1)*capacity + j) % waves
				counts[(7*i+13*w)%nInsn]++
			}
		}
		return counts
	}
	n := d * 2100 / (1000 * c.interval)
	m := min(wgs, 304)
	for i := 1; i <= n; i++ {
		for j := 0; j < m; j++ {
			idx := (i-1)*m + j
			w := (idx%wgs)*wpg + (i-1)%wpg
			counts[(7*i+13*w)%nInsn]++
		}
	}
	return counts
}

// rocprofiler-compute's PC-sampling run (profile -b 21) with rocprof-go as
// rocprofv3, and its analyze PC Sampling table (21.1): one row per source
// line (rocprofv3's Instruction_Comment, shown by its last path element)
// with the samples at that line, each count the virtual GPU's model gives.
func TestPCSamplingTableOnTheVirtualGPU(t *testing.T) {
	s := getSetup(t)
	for _, c := range pcsConfigs {
		c := c
		t.Run(c.gpu.arch+"/"+c.method, func(t *testing.T) { pcSamplingTable(t, s, c) })
	}
}

func pcSamplingTable(t *testing.T, s setup, c pcsConfig) {
	g := c.gpu
	home, env := s.home(t, g)
	workload := filepath.Join(home, "workload")
	// multistream built with -g (mk/rocprofcompute.mk): its line table
	// gives the comments the table groups by.
	app := filepath.Join(s.rt.Apps, "g", g.arch, "multistream")
	_, err := os.Stat(app)
	require.NoError(t, err, "build it: make test-rocprofiler-compute builds %s", app)
	entry := filepath.Join(s.client, "src", "rocprof-compute")

	ctx, cancel := context.WithTimeout(context.Background(), profileTO)
	defer cancel()
	prof := exec.CommandContext(ctx, python, entry, "profile", "-n", "vadd", "--no-roof", "-b", "21",
		"--pc-sampling-method", c.method, "--pc-sampling-interval", strconv.Itoa(c.interval),
		"--rocprofiler-sdk-library-path", filepath.Join(s.prefix, "lib", "librocprofiler-sdk.so"),
		"-p", workload, "--",
		filepath.Join(s.data, "bin", "on-rocm-root"), app, "1", "1", strconv.Itoa(appN))
	prof.Env, prof.Dir = env, home
	testsys.InMountNamespace(prof, ". "+filepath.Join(s.data, "dmi-standin.sh"))
	if c.method == "stochastic" && s.rt.Name == "6.4" {
		// ROCm 6.4's runtime has no stochastic sampling: rocprof-go refuses
		// before the app starts, and the client stops.
		out, err := prof.CombinedOutput()
		require.Error(t, err, "%s", tail(string(out), 60))
		o := ansi.ReplaceAllString(string(out), "")
		require.Contains(t, o, "[PC sampling profile run]")
		require.Contains(t, o, "has no stochastic sampling")
		require.Contains(t, o, "PC sampling failed.")
		t.Logf("%s/%s on ROCm 6.4: refused, as rocprof-go refuses stochastic sampling there", g.arch, c.method)
		return
	}
	out, took := run(t, prof)
	out = ansi.ReplaceAllString(out, "")
	require.NotContains(t, out, "ERROR", tail(out, 60))
	require.NotContains(t, out, "Traceback", tail(out, 60))
	require.Contains(t, out, "[PC sampling profile run]")
	t.Logf("%s/%s: profile -b 21 in %.1f s", g.arch, c.method, took.Seconds())

	// rocprofv3's -d WORKLOAD -o ps_file names: the client reads
	// ps_file_pc_sampling_<method>.csv, and ps_file_results.json with -k.
	rows := readCSV(t, filepath.Join(workload, "ps_file_pc_sampling_"+c.method+".csv"))
	doc := readResults(t, filepath.Join(workload, "ps_file_results.json"))

	// Each kernel's samples, by its code range (kernel_address to the next
	// kernel's in its code object), against the model.
	wgs := (appN + appWG - 1) / appWG
	waves := wgs * ((appWG + waveSize - 1) / waveSize)
	want := map[string]int{} // comment → samples
	perDispatch := map[string]int{}
	for _, r := range rows[1:] {
		perDispatch[r[2]]++
	}
	for k, name := range []string{"vadd", "scale"} {
		lo, hi, co := doc.kernelRange(t, name)
		var offs []uint64
		seen := map[uint64]int{} // offset → inst_index
		for _, rec := range doc.samples(c.method) {
			if rec.Record.PC.CodeObjectID != co || rec.Record.PC.Offset < lo || rec.Record.PC.Offset >= hi {
				continue
			}
			if _, ok := seen[rec.Record.PC.Offset]; !ok {
				offs = append(offs, rec.Record.PC.Offset)
			}
			seen[rec.Record.PC.Offset] = rec.InstIndex
		}
		sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
		nInsn := doc.instructions(t, env, home, name)
		got := map[uint64]int{}
		for _, rec := range doc.samples(c.method) {
			if rec.Record.PC.CodeObjectID == co && rec.Record.PC.Offset >= lo && rec.Record.PC.Offset < hi {
				got[rec.Record.PC.Offset]++
			}
		}
		// The sampled offsets are the instructions the model picks, in
		// order (some are never picked: stochastic's wave numbers and
		// instants can miss residues of N).
		picks := modelPicks(c, waves, wgs, nInsn)
		var picked []int
		total := 0
		for q, n := range picks {
			if n > 0 {
				picked = append(picked, q)
				total += n
			}
		}
		require.Len(t, offs, len(picked), "%s/%s: %s: sampled instructions (of %d)", g.arch, c.method, name, nInsn)
		for k, off := range offs {
			q := picked[k]
			require.Equal(t, picks[q], got[off], "%s/%s: %s's instruction %d (offset 0x%x): samples", g.arch, c.method, name, q, off)
			want[doc.comment(t, seen[off])] += picks[q]
		}
		// Dispatch k+1 is the kernel's (vadd, then scale).
		require.Equal(t, total, perDispatch[strconv.Itoa(k+1)], "%s/%s: %s's dispatch %d: CSV rows", g.arch, c.method, name, k+1)
		t.Logf("%s/%s: %s: %d samples over %d of its %d instructions", g.arch, c.method, name, total, len(offs), nInsn)
	}

	analyze := func(args ...string) string {
		a := append([]string{entry, "analyze", "-p", workload, "-b", "21"}, args...)
		cmd := exec.Command(python, a...)
		cmd.Env, cmd.Dir = env, home
		out, _ := run(t, cmd)
		out = ansi.ReplaceAllString(out, "")
		require.NotContains(t, out, "Traceback", tail(out, 60))
		return out
	}
	rep := analyze()
	require.Contains(t, rep, "21.1 PC Sampling")
	type row struct {
		line  string
		count int
	}
	var gotRows, wantRows []row
	for _, r := range tableWith(t, rep, "source_line", "instruction", "count") {
		n, err := strconv.Atoi(strings.TrimSuffix(r["count"], ".00"))
		require.NoError(t, err, "count %q", r["count"])
		gotRows = append(gotRows, row{r["source_line"], n})
	}
	for comment, n := range want {
		// The client shows ".../" and the comment's last path element.
		wantRows = append(wantRows, row{".../" + path.Base(comment), n})
	}
	less := func(rs []row) func(i, j int) bool {
		return func(i, j int) bool {
			if rs[i].count != rs[j].count {
				return rs[i].count > rs[j].count
			}
			return rs[i].line < rs[j].line
		}
	}
	sort.Slice(gotRows, less(gotRows))
	sort.Slice(wantRows, less(wantRows))
	require.Equal(t, wantRows, gotRows, "%s/%s: the PC Sampling table's rows (source line, count)", g.arch, c.method)
	for _, r := range gotRows {
		t.Logf("%s/%s: 21.1 %-20s %5d", g.arch, c.method, r.line, r.count)
	}

	// With -k the client filters the JSON records by kernel_symbols'
	// kernel_code_entry_byte_offset, which rocprofiler-sdk defines from the
	// descriptor, against offsets from the code object's load base
	// (parser.py load_pc_sampling_data_per_kernel): vadd's window holds none
	// of its samples, and the table is left out. It must not fail.
	top := tableWith(t, rep, "Kernel_Name", "Count")
	k := ""
	for i, r := range top {
		if strings.HasPrefix(r["Kernel_Name"], kernel) {
			k = strconv.Itoa(i)
		}
	}
	require.NotEmpty(t, k, "no vadd in the top kernels")
	repK := analyze("-k", k)
	require.NotContains(t, repK, "21.1 PC Sampling", "the client's -k window now holds vadd's samples: update the test and docs")
}

func readCSV(t *testing.T, file string) [][]string {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	return rows
}

// results is what the test reads of rocprofv3's results.json.
type results struct {
	KernelSymbols []struct {
		KernelID     uint64 `json:"kernel_id"`
		Name         string `json:"kernel_name"`
		CodeObjectID uint64 `json:"code_object_id"`
		Truncated    string `json:"truncated_kernel_name"`
		EntryOffset  *int64 `json:"kernel_code_entry_byte_offset"`
		Object       uint64 `json:"kernel_object"`
		Address      *struct {
			Handle uint64 `json:"handle"`
		} `json:"kernel_address"`
	} `json:"kernel_symbols"`
	CodeObjects []struct {
		ID       uint64 `json:"code_object_id"`
		LoadBase uint64 `json:"load_base"`
		URI      string `json:"uri"`
	} `json:"code_objects"`
	Strings struct {
		Instructions []string `json:"pc_sample_instructions"`
		Comments     []string `json:"pc_sample_comments"`
	} `json:"strings"`
	Buffer struct {
		HostTrap   []pcsRecord `json:"pc_sample_host_trap"`
		Stochastic []pcsRecord `json:"pc_sample_stochastic"`
	} `json:"buffer_records"`
}

type pcsRecord struct {
	Record struct {
		PC struct {
			CodeObjectID uint64 `json:"code_object_id"`
			Offset       uint64 `json:"code_object_offset"`
		} `json:"pc"`
	} `json:"record"`
	InstIndex int `json:"inst_index"`
}

func readResults(t *testing.T, file string) *results {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var doc struct {
		Tool []results `json:"rocprofiler-sdk-tool"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	require.Len(t, doc.Tool, 1)
	return &doc.Tool[0]
}

func (r *results) samples(method string) []pcsRecord {
	if method == "stochastic" {
		return r.Buffer.Stochastic
	}
	return r.Buffer.HostTrap
}

// kernelRange is the code of the kernel named (truncated name): from its
// kernel_address to the next kernel's of its code object, as offsets from
// the code object's load base. The record must carry rocprofiler-sdk's
// kernel_code_entry_byte_offset and kernel_address = kernel_object + it.
func (r *results) kernelRange(t *testing.T, name string) (lo, hi, co uint64) {
	t.Helper()
	base := map[uint64]uint64{}
	for _, c := range r.CodeObjects {
		base[c.ID] = c.LoadBase
	}
	var starts []uint64
	for _, k := range r.KernelSymbols {
		if k.KernelID == 0 {
			continue
		}
		require.NotNil(t, k.EntryOffset, "kernel %d: no kernel_code_entry_byte_offset", k.KernelID)
		require.NotNil(t, k.Address, "kernel %d: no kernel_address", k.KernelID)
		require.Equal(t, k.Object+uint64(*k.EntryOffset), k.Address.Handle, "kernel %d: kernel_address", k.KernelID)
		if k.Truncated == name {
			require.Zero(t, co, "two kernels %s", name)
			co, lo = k.CodeObjectID, k.Address.Handle-base[k.CodeObjectID]
		}
	}
	require.NotZero(t, co, "no kernel %s in kernel_symbols", name)
	hi = ^uint64(0)
	for _, k := range r.KernelSymbols {
		if k.KernelID != 0 && k.CodeObjectID == co {
			starts = append(starts, k.Address.Handle-base[co])
		}
	}
	for _, s := range starts {
		if s > lo && s < hi {
			hi = s
		}
	}
	return lo, hi, co
}

func (r *results) comment(t *testing.T, i int) string {
	t.Helper()
	require.True(t, i >= 0 && i < len(r.Strings.Comments), "inst_index %d of %d comments", i, len(r.Strings.Comments))
	c := r.Strings.Comments[i]
	require.NotEmpty(t, c, "instruction %d (%s) has no source line: multistream built without -g?", i, r.Strings.Instructions[i])
	return c
}

var insnLine = regexp.MustCompile(`(?m)//\s+([0-9A-Fa-f]+):`)

// instructions counts the kernel's instructions, as the virtual GPU walks
// them (its function symbol's code): the root's llvm-objdump
// (testdata/rocprofcompute/bin) disassembles the symbol in the code object
// its file:// URI names.
func (r *results) instructions(t *testing.T, env []string, dir, name string) int {
	t.Helper()
	var sym, uri string
	for _, k := range r.KernelSymbols {
		if k.KernelID != 0 && k.Truncated == name {
			sym = strings.TrimSuffix(k.Name, ".kd")
			for _, c := range r.CodeObjects {
				if c.ID == k.CodeObjectID {
					uri = c.URI
				}
			}
		}
	}
	file, frag, ok := strings.Cut(strings.TrimPrefix(uri, "file://"), "#")
	require.True(t, ok && strings.HasPrefix(uri, "file://"), "kernel %s: code object %q", name, uri)
	var off, size int64
	for _, kv := range strings.Split(frag, "&") {
		k, v, _ := strings.Cut(kv, "=")
		n, err := strconv.ParseInt(v, 0, 64)
		require.NoError(t, err, "%s", uri)
		switch k {
		case "offset":
			off = n
		case "size":
			size = n
		}
	}
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	data := make([]byte, size)
	_, err = f.ReadAt(data, off)
	require.NoError(t, err)
	co := filepath.Join(dir, "co-"+name+".elf")
	require.NoError(t, os.WriteFile(co, data, 0o644))
	cmd := exec.Command("llvm-objdump", "-d", "--disassemble-symbols="+sym, co)
	cmd.Env = env
	for _, e := range env {
		if p, ok := strings.CutPrefix(e, "PATH="); ok {
			cmd.Path = filepath.Join(strings.Split(p, ":")[0], "llvm-objdump")
		}
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	// llvm-objdump goes on to the next symbol (the padding after
	// s_endpgm): count what lies within the symbol's size.
	ef, err := elf.NewFile(bytes.NewReader(data))
	require.NoError(t, err)
	syms, err := ef.Symbols()
	require.NoError(t, err)
	var lo, hi uint64
	for _, s := range syms {
		if s.Name == sym && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			lo, hi = s.Value, s.Value+s.Size
		}
	}
	require.NotZero(t, hi, "no function symbol %s", sym)
	n := 0
	for _, m := range insnLine.FindAllStringSubmatch(string(out), -1) {
		a, err := strconv.ParseUint(m[1], 16, 64)
		require.NoError(t, err)
		if a >= lo && a < hi {
			n++
		}
	}
	require.NotZero(t, n, "no instructions of %s:\n%s", sym, out)
	return n
}
