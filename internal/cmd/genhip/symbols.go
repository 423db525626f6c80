package main

import (
	"debug/elf"
	"fmt"
	"sort"
	"strings"
)

// export is one function symbol libamdhip64 defines, with the version node
// it is defined in (HIP 5.2 defines every symbol in exactly one node).
type export struct {
	Symbol  string // as in the dynamic symbol table (mangled for C++ names)
	Version string // e.g. "hip_4.2"
}

// traced reports whether a symbol belongs to the HIP runtime or compiler API.
// hiprtc (a separate compiler library API), the debugger hooks and the
// half-float helpers are exported by the same library but are not HIP API.
func traced(name string) bool {
	switch {
	case strings.HasPrefix(name, "hiprtc"):
		return false
	case strings.HasPrefix(name, "hip"), strings.HasPrefix(name, "__hip"):
		return true
	case strings.HasPrefix(name, "_Z"):
		_, ok := mangled[name]
		return ok
	}
	return false
}

// readExports lists the library's defined function symbols that traced
// accepts, sorted by name.
func readExports(lib string) ([]export, error) {
	f, err := elf.Open(lib)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", lib, err)
	}
	var out []export
	seen := map[string]bool{}
	for _, s := range syms {
		if s.Section == elf.SHN_UNDEF || elf.ST_TYPE(s.Info) != elf.STT_FUNC {
			continue
		}
		if !traced(s.Name) || seen[s.Name] {
			continue
		}
		if !s.HasVersion || s.Version == "" {
			return nil, fmt.Errorf("%s: %s has no symbol version; the wrappers must carry the library's versions", lib, s.Name)
		}
		seen[s.Name] = true
		out = append(out, export{Symbol: s.Name, Version: s.Version})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Symbol < out[j].Symbol })
	return out, nil
}
