package launch

import (
	"debug/elf"
)

// isStaticELF reports whether path is an ELF executable without a program
// interpreter: the dynamic loader never runs for it, so LD_PRELOAD (and with
// it every interposer) is ignored and nothing can be recorded.
func isStaticELF(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false // a script or not ELF: its interpreter is dynamic
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return false
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}
