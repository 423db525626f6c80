package rocprof_test

import (
	"context"
	"debug/elf"
	"encoding/binary"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// registerCase is one architecture on one runtime: apps built for it that
// launch their own kernels and, through hipMemset or a device-to-device
// copy, HIP's blit kernels.
type registerCase struct {
	arch string
	apps [][]string // under the runtime's Apps, with their arguments
}

func registerCases(rt rocmmatrix.Runtime) []registerCase {
	multistream := func(dir string) [][]string { return [][]string{{filepath.Join(dir, "multistream"), "1", "2"}} }
	if rt.Name == rocmmatrix.HostName {
		// devices launches one kernel of its own, memcheck only blits.
		older := func(arch string) [][]string { return [][]string{{arch + "/devices"}, {arch + "/memcheck"}} }
		return []registerCase{
			{"gfx90a", multistream("")},
			{"gfx908", multistream("gfx908")},
			{"gfx906", older("gfx906")},
			{"gfx900", older("gfx900")},
			{"gfx1030", older("gfx1030")},
		}
	}
	return []registerCase{
		{"gfx90a", multistream("")},
		{"gfx942", multistream("gfx942")},
		{"gfx1100", multistream("gfx1100")},
	}
}

// descriptorRegisters is rocprofv3's reading of a kernel descriptor
// (rocprofiler-sdk, code_object.cpp: arch_vgpr_count, accum_vgpr_count,
// sgpr_count), written out here on its own to check rocprof-go's against.
func descriptorRegisters(arch string, kd []byte) (vgpr, accum, sgpr uint32) {
	rsrc3 := binary.LittleEndian.Uint32(kd[44:])
	rsrc1 := binary.LittleEndian.Uint32(kd[48:])
	props := binary.LittleEndian.Uint16(kd[56:])
	unified := arch == "gfx90a" || strings.HasPrefix(arch, "gfx94")
	if unified {
		vgpr = (rsrc3&0x3f + 1) * 4
	} else if props&(1<<10) != 0 {
		vgpr = (rsrc1&0x3f + 1) * 8
	} else {
		vgpr = (rsrc1&0x3f + 1) * 4
	}
	switch {
	case arch == "gfx908":
		accum = vgpr
	case unified:
		accum = (rsrc1&0x3f+1)*8 - vgpr
	}
	gfxip, _ := strconv.Atoi(strings.TrimRight(strings.TrimPrefix(arch, "gfx"), "abcdef"))
	if gfxip >= 1000 {
		sgpr = 128
	} else {
		sgpr = ((rsrc1>>6)&0xf/2 + 1) * 16
	}
	return vgpr, accum, sgpr
}

// codeObjectKernels reads every AMDGPU code object under dir (the app's,
// dumped by HIP's GPU_DUMP_CODE_OBJECT, and the blit kernels' that HIP
// compiles at run time, kept by AMD_COMGR_SAVE_TEMPS): kernel symbol name ->
// its 64-byte descriptor, and the files it came from.
func codeObjectKernels(t *testing.T, dir string) (map[string][]byte, map[string]string) {
	kds, files := map[string][]byte{}, map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := elf.Open(path)
		if err != nil {
			return nil // not an ELF file (comgr's bitcode and sources)
		}
		defer f.Close()
		if f.Machine != elf.Machine(0xe0) || f.Type != elf.ET_DYN { // EM_AMDGPU, a loadable code object
			return nil
		}
		syms, err := f.Symbols()
		require.NoError(t, err, path)
		for _, s := range syms {
			if !strings.HasSuffix(s.Name, ".kd") || s.Size != 64 || int(s.Section) >= len(f.Sections) {
				continue
			}
			sec := f.Sections[s.Section]
			kd := make([]byte, 64)
			_, err := sec.ReadAt(kd, int64(s.Value-sec.Addr))
			require.NoError(t, err, "%s: %s", path, s.Name)
			name := strings.TrimSuffix(s.Name, ".kd")
			if prev, ok := kds[name]; ok {
				require.Equal(t, prev, kd, "%s: two descriptors (%s, %s)", name, files[name], path)
			}
			kds[name], files[name] = kd, path
		}
		return nil
	}))
	return kds, files
}

// noteCounts are the AMDGPU metadata's register counts of one kernel
// (llvm-readelf --notes): the compiler's own account, which the
// descriptor's granules round up.
type noteCounts struct{ vgpr, agpr, sgpr uint32 }

// A kernel's entry in amdhsa.kernels starts at "  - ."; its own fields
// are indented by four (its arguments' by more).
var noteField = regexp.MustCompile(`^(  - |    )\.(name|vgpr_count|agpr_count|sgpr_count):\s+(\S+)`)

func metadataCounts(t *testing.T, file string) map[string]noteCounts {
	out, err := exec.Command("llvm-readelf", "--notes", file).Output()
	require.NoError(t, err, file)
	counts := map[string]noteCounts{}
	var cur noteCounts
	var name string
	flush := func() {
		if name != "" {
			counts[name] = cur
		}
		cur, name = noteCounts{}, ""
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "  - .") {
			flush()
		}
		m := noteField.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if m[2] == "name" {
			name = m[3]
			continue
		}
		n, err := strconv.ParseUint(m[3], 10, 32)
		require.NoError(t, err, l)
		switch m[2] {
		case "vgpr_count":
			cur.vgpr = uint32(n)
		case "agpr_count":
			cur.agpr = uint32(n)
		case "sgpr_count":
			cur.sgpr = uint32(n)
		}
	}
	flush()
	return counts
}

func demangle(t *testing.T, names []string) map[string]string {
	out, err := exec.Command("c++filt", names...).Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, lines, len(names))
	m := map[string]string{}
	for i, n := range names {
		m[lines[i]] = n
	}
	return m
}

// On every runtime of the matrix and every architecture it runs, the
// kernel trace's VGPR_Count, Accum_VGPR_Count and SGPR_Count are what
// rocprofv3 reads from each kernel's descriptor, taken from the code objects
// the app actually loaded (its own and HIP's blit kernels), and they bound
// the compiler's own counts in the code object's metadata.
func TestRegisterColumnsFollowTheDescriptorOnEveryArchitecture(t *testing.T) {
	repo, rts := matrix(t)
	libEnv(t)
	for _, rt := range rts {
		for _, c := range registerCases(rt) {
			t.Run(rt.Name+"/"+c.arch, func(t *testing.T) {
				require.NoError(t, rt.Check())
				work := t.TempDir()
				// HIP writes the app's code object into the working directory;
				// comgr keeps the blit kernels' build under TMPDIR.
				t.Setenv("GPU_DUMP_CODE_OBJECT", "1")
				t.Setenv("AMD_COMGR_SAVE_TEMPS", "1")
				var rows [][]string
				for i, app := range c.apps {
					dir, out := filepath.Join(work, strconv.Itoa(i)), t.TempDir()
					require.NoError(t, os.Mkdir(dir, 0o700))
					t.Setenv("TMPDIR", dir)
					argv := append([]string{filepath.Join(rt.Apps, app[0])}, app[1:]...)
					if rt.Root != "" {
						argv = append([]string{filepath.Join(repo, "scripts", "rocm-root.sh"), "run", rt.Root, "--"}, argv...)
					}
					var stderr strings.Builder
					res, err := rocprof.Run(context.Background(), rocprof.Options{
						Args: []string{"--virtual-gpu=" + c.arch, "--kernel-trace", "-f", "csv", "-d", out, "-o", "run"},
						Dir:  dir, Stderr: &stderr,
					}, argv)
					require.NoError(t, err)
					require.Equal(t, 0, res.ExitStatus, "stderr:\n%s", stderr.String())
					f, err := os.Open(filepath.Join(out, "run_kernel_trace.csv"))
					require.NoError(t, err)
					r, err := csv.NewReader(f).ReadAll()
					f.Close()
					require.NoError(t, err)
					if rows == nil {
						rows = r[:1]
					}
					require.Equal(t, rows[0], r[0])
					rows = append(rows, r[1:]...)
				}

				kds, files := codeObjectKernels(t, work)
				require.NotEmpty(t, kds, "no code object dumped under %s", work)
				var mangled []string
				for n := range kds {
					mangled = append(mangled, n)
				}
				byDisplay := demangle(t, mangled)
				notes := map[string]map[string]noteCounts{}

				col := map[string]int{}
				for i, h := range rows[0] {
					col[h] = i
				}
				checked := map[string]bool{}
				var blits, accum int
				for _, r := range rows[1:] {
					name := r[col["Kernel_Name"]]
					sym, ok := byDisplay[name]
					require.True(t, ok, "%s: no descriptor among the loaded code objects", name)
					v, a, s := descriptorRegisters(c.arch, kds[sym])
					got := [3]string{r[col["VGPR_Count"]], r[col["Accum_VGPR_Count"]], r[col["SGPR_Count"]]}
					require.Equal(t, [3]string{strconv.Itoa(int(v)), strconv.Itoa(int(a)), strconv.Itoa(int(s))}, got,
						"%s on %s: VGPR_Count, Accum_VGPR_Count, SGPR_Count", name, c.arch)
					if checked[sym] {
						continue
					}
					checked[sym] = true
					if strings.HasPrefix(sym, "__amd_rocclr_") {
						blits++
					}
					if a > 0 {
						accum++
					}
					file := files[sym]
					if notes[file] == nil {
						notes[file] = metadataCounts(t, file)
					}
					m, ok := notes[file][sym]
					require.True(t, ok, "%s: no metadata in %s", sym, file)
					// The descriptor rounds the compiler's counts up.
					require.GreaterOrEqual(t, v, m.vgpr, "%s: VGPRs", sym)
					require.GreaterOrEqual(t, v+a, m.vgpr+m.agpr, "%s: VGPRs and AGPRs", sym)
					require.GreaterOrEqual(t, s, m.sgpr, "%s: SGPRs", sym)
					t.Logf("%s: descriptor %d/%d/%d, metadata vgpr %d agpr %d sgpr %d", sym, v, a, s, m.vgpr, m.agpr, m.sgpr)
				}
				require.NotZero(t, len(checked)-blits, "the app's own kernels")
				require.NotZero(t, blits, "HIP's blit kernels")
				if c.arch == "gfx90a" || c.arch == "gfx942" || c.arch == "gfx908" {
					// Unified or mirrored register files: rocprofv3 reports
					// accumulation VGPRs even for kernels using no AGPRs.
					require.NotZero(t, accum, "a kernel with Accum_VGPR_Count > 0")
				}
			})
		}
	}
}
