package launch

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// pcsEntry is the function of ROCR's PC-sampling extension that lists a
// GPU's configurations; ROCR exports it from 6.4 on (ROCm 5.2 and 6.1 have
// no such extension).
const pcsEntry = "hsa_ven_amd_pcs_iterate_configuration"

// PCSamplingRuntime names the ROCm runtime library the app will load (as
// CheckVirtualGPU finds it, symbolic links resolved, so the name carries
// its version) and tells whether it offers PC sampling. rocr is "" when the
// runtime cannot be found (a script, a runtime the app dlopens from a path
// of its own): then nothing is known. Without argv it is the system's
// runtime (the dynamic loader's cache), which -L and avail list from.
func PCSamplingRuntime(argv []string, dir string, env []string) (rocr string, offers bool) {
	prog := ""
	if len(argv) > 0 {
		p, err := lookPath(argv[0], dir, env)
		if err != nil {
			return "", false
		}
		f, err := elf.Open(p)
		if err != nil {
			return "", false
		}
		f.Close()
		prog = p
	}
	rocr = runtimeOf(prog, env)
	if rocr == "" {
		return "", false
	}
	if real, err := filepath.EvalSymlinks(rocr); err == nil {
		rocr = real
	}
	return rocr, exportsSymbol(rocr, pcsEntry)
}

// exportsSymbol tells whether a shared library defines a dynamic symbol.
func exportsSymbol(lib, name string) bool {
	f, err := elf.Open(lib)
	if err != nil {
		return false
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return false
	}
	for _, s := range syms {
		if s.Name == name && s.Section != elf.SHN_UNDEF {
			return true
		}
	}
	return false
}

// AttachedPCSamplingRuntime is PCSamplingRuntime for a running process
// (--attach PID): the HSA runtime library it has mapped (rocr, as the
// process names it; readable, the same file through /proc/PID/root, so a
// process in another root is looked at in its own), and whether that
// library offers PC sampling. "" when the process has no
// HSA runtime mapped or cannot be read (the attach says why).
func AttachedPCSamplingRuntime(pid int) (rocr, readable string, offers bool) {
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return "", "", false
	}
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasPrefix(f[5], "/") || !strings.Contains(filepath.Base(f[5]), "libhsa-runtime64.so") {
			continue
		}
		p := fmt.Sprintf("/proc/%d/root%s", pid, f[5])
		return f[5], p, exportsSymbol(p, pcsEntry)
	}
	return "", "", false
}
