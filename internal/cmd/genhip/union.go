package main

import (
	"fmt"
	"sort"
	"strings"
)

// One wrapper per exported symbol of any HIP release of the matrix: an
// application built against any of them binds to the wrapper of the
// name@version it references, and a wrapper whose symbol the running HIP
// lacks is simply never called. Each symbol keeps the version node its
// library gives it (every release puts a symbol in the same node).
//
// The wrappers are compiled without any HIP header: every parameter is
// declared by how it is passed (a pointer, an integer or float of its size,
// or a blob of a struct's size and alignment), so one C file serves every
// release, including functions the build host's HIP does not have.

// unionFunctions merges the sources (oldest first) into one sorted list.
func unionFunctions(srcs []*source) ([]function, error) {
	type entry struct {
		version string
		in      []*source
	}
	bySymbol := map[string]*entry{}
	var problems []string
	for _, s := range srcs {
		for _, e := range s.Exports {
			en := bySymbol[e.Symbol]
			if en == nil {
				en = &entry{version: e.Version}
				bySymbol[e.Symbol] = en
			} else if en.version != e.Version {
				problems = append(problems, fmt.Sprintf("%s is %s@%s in ROCm %s but @%s before", e.Symbol, e.Symbol, e.Version, s.Name, en.version))
			}
			en.in = append(en.in, s)
		}
	}
	// Every C++ symbol must be known (mangled.go), and every known one exported somewhere.
	for sym := range bySymbol {
		if _, ok := mangled[sym]; strings.HasPrefix(sym, "_Z") && !ok {
			problems = append(problems, fmt.Sprintf("%s (C++) has no prototype: add it to internal/cmd/genhip/mangled.go", sym))
		}
	}
	for sym := range mangled {
		if bySymbol[sym] == nil {
			problems = append(problems, fmt.Sprintf("no HIP of the matrix exports %s any more: remove it from internal/cmd/genhip/mangled.go", sym))
		}
	}
	var syms []string
	for s := range bySymbol {
		syms = append(syms, s)
	}
	sort.Strings(syms)

	var fns []function
	need := map[*source]map[string]bool{} // types to measure, per source
	for _, sym := range syms {
		en := bySymbol[sym]
		var p proto
		var from *source
		if m, ok := mangled[sym]; ok {
			p, from = m, en.in[len(en.in)-1]
		} else {
			// The newest release that declares it (HIP 6 headers #define
			// some old names to new symbols, so an old export may only be
			// declared by an older release's headers).
			for i := len(srcs) - 1; i >= 0; i-- {
				if q, ok := srcs[i].Protos[sym]; ok {
					p, from = q, srcs[i]
					break
				}
			}
			if from == nil {
				// HIP 6 also exports the C++-only launch extensions
				// (hip_ext.h's extern "C", which C cannot read) with C
				// linkage: the same prototype as the mangled symbol.
				for _, m := range mangled {
					if m.Name == sym {
						p, from = m, en.in[len(en.in)-1]
					}
				}
			}
			if from == nil {
				problems = append(problems, fmt.Sprintf("%s@%s has no prototype in any release's C headers", sym, en.version))
				continue
			}
			// The ABI must not change under one name@version.
			for _, s := range srcs {
				if q, ok := s.Protos[sym]; ok && len(q.Params) != len(p.Params) {
					problems = append(problems, fmt.Sprintf("%s takes %d arguments in ROCm %s's headers, %d in %s's", sym, len(q.Params), s.Name, len(p.Params), from.Name))
				}
			}
		}
		p.Kinds = nil
		for _, typ := range p.Types {
			p.Kinds = append(p.Kinds, from.Types.kind(typ))
		}
		p.RetKind = from.Types.kind(p.Ret)
		if need[from] == nil {
			need[from] = map[string]bool{}
		}
		for i, k := range p.Kinds {
			if k != kindPtr {
				need[from][p.Types[i]] = true
			}
		}
		if p.Ret != "void" && p.RetKind != kindPtr {
			need[from][p.Ret] = true
		}
		dom := "RPG_API_HIP_RUNTIME"
		if strings.HasPrefix(sym, "__hip") {
			dom = "RPG_API_HIP_COMPILER"
		}
		var in []string
		for _, s := range en.in {
			in = append(in, s.Name)
		}
		fns = append(fns, function{Symbol: sym, Version: en.version, Proto: p, Domain: dom, In: in, from: from})
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("cannot wrap the HIP releases of the matrix:\n  %s", strings.Join(problems, "\n  "))
	}

	layouts := map[*source]map[string]layout{}
	for s, types := range need {
		var list []string
		for t := range types {
			list = append(list, t)
		}
		l, err := s.probeLayouts(list)
		if err != nil {
			return nil, fmt.Errorf("HIP of ROCm %s: %w", s.Name, err)
		}
		layouts[s] = l
	}
	for i := range fns {
		f := &fns[i]
		f.ID = i
		p := &f.Proto
		l := layouts[f.from]
		p.CTypes = nil
		for k, typ := range p.Types {
			ct, err := passedAs(p.Kinds[k], typ, l, f.from.Types)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s argument %d: %v", f.Symbol, k, err))
			}
			p.CTypes = append(p.CTypes, ct)
		}
		switch {
		case p.Ret == "void":
			p.CRet = "void"
		default:
			ct, err := passedAs(p.RetKind, p.Ret, l, f.from.Types)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s result: %v", f.Symbol, err))
			}
			p.CRet = ct
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("cannot declare the HIP functions by how they are passed:\n  %s", strings.Join(problems, "\n  "))
	}
	return fns, nil
}

// passedAs is the C type that is passed exactly like typ (System V x86-64):
// pointers as void*, integers and floats by size, structs as a blob of the
// same size and alignment. A blob is passed like a struct of integers; a
// struct of up to 16 bytes holding floating-point members would travel in
// SSE registers instead, so one is refused rather than mis-forwarded.
func passedAs(kind, typ string, l map[string]layout, tds typedefs) (string, error) {
	if kind == kindPtr {
		return "void *", nil
	}
	lay, ok := l[typ]
	if !ok {
		return "", fmt.Errorf("no layout measured for %q", typ)
	}
	sized := func(prefix string) (string, error) {
		switch lay.Size {
		case 1, 2, 4, 8:
			return fmt.Sprintf("%s%d_t", prefix, lay.Size*8), nil
		}
		return "", fmt.Errorf("%q is an integer of %d bytes", typ, lay.Size)
	}
	switch kind {
	case kindInt:
		return sized("int")
	case kindUint:
		return sized("uint")
	case kindBool:
		if lay.Size != 1 {
			return "", fmt.Errorf("%q is a bool of %d bytes", typ, lay.Size)
		}
		return "_Bool", nil
	case kindFloat:
		switch lay.Size {
		case 4:
			return "float", nil
		case 8:
			return "double", nil
		}
		return "", fmt.Errorf("%q is a float of %d bytes", typ, lay.Size)
	}
	if lay.Size <= 16 && tds.hasFloat(typ) {
		return "", fmt.Errorf("%q is a struct of %d bytes with floating-point members (passed in SSE registers): declare it by its members", typ, lay.Size)
	}
	return blobType(lay), nil
}

// blobType names the struct typedef emitC declares for a blob layout.
func blobType(l layout) string { return fmt.Sprintf("rpg_hip_blob%d_%d", l.Size, l.Align) }
