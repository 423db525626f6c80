// Package kernelname formats kernel symbol names as rocprofv3 prints them:
// as recorded (-M), demangled, or truncated to the function's own name (-T).
// Writers and analyses share it, so that a name means the same everywhere.
package kernelname

import (
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// Format applies -M / -T to a kernel symbol name as rocprofv3 does:
// mangled names are printed as recorded (".kd" kept); otherwise the ".kd"
// suffix goes, the name is demangled (names that are not C++ stay as they
// are) and, with truncate, cut to the bare function name.
func Format(sym string, mangled, truncate bool) string {
	if mangled && !truncate {
		return sym
	}
	name := strings.TrimSuffix(sym, ".kd")
	if d, err := demangle.ToString(name); err == nil {
		name = d
	}
	if truncate {
		name = Truncate(name)
	}
	return name
}

// Truncate reduces a demangled name to the function's own name:
// "void ns::Foo<int>::bar<float>(float*, int (*)(int)) const" -> "bar".
func Truncate(name string) string {
	s := strings.TrimSpace(name)
	// Drop trailing qualifiers after the argument list.
	for _, q := range []string{" const", " volatile", " &&", " &"} {
		s = strings.TrimSuffix(s, q)
	}
	if strings.HasSuffix(s, ")") {
		if i := matchOpen(s, len(s)-1, '(', ')'); i > 0 {
			s = s[:i]
		}
	}
	if strings.HasSuffix(s, ">") {
		if i := matchOpen(s, len(s)-1, '<', '>'); i > 0 {
			s = s[:i]
		}
	}
	// The name is what follows the last scope or the return type, looking
	// only at depth 0 (template arguments may hold "::" and spaces).
	depth := 0
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<', '(':
			depth++
		case '>', ')':
			if depth > 0 {
				depth--
			}
		case ' ':
			if depth == 0 {
				start = i + 1
			}
		case ':':
			if depth == 0 && i+1 < len(s) && s[i+1] == ':' {
				start = i + 2
				i++
			}
		}
	}
	if start >= len(s) {
		return name
	}
	return s[start:]
}

// matchOpen returns the index of the bracket opening the one at end.
func matchOpen(s string, end int, open, close byte) int {
	depth := 0
	for i := end; i >= 0; i-- {
		switch s[i] {
		case close:
			depth++
		case open:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// ForFilter is the name the kernel filters (--kernel-include-regex,
// --kernel-exclude-regex) are matched against, as rocprofv3 matches them:
// the truncated name with -T (so '^saxpy$' selects "void saxpy<float>(…)"),
// else the symbol without ".kd", demangled unless -M keeps it mangled. The
// shim selects dispatches with it and the CLI checks with it that a filter
// matched a kernel of the run.
func ForFilter(sym string, mangled, truncate bool) string {
	if truncate {
		return Format(sym, mangled, true)
	}
	if mangled {
		return strings.TrimSuffix(sym, ".kd")
	}
	return Format(sym, false, false)
}
