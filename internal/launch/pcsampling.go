package launch

import (
	"debug/elf"
	"path/filepath"
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
