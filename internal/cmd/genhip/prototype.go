package main

import (
	"fmt"
	"strings"
)

// proto is a C prototype with our own parameter names (a0, a1, ...).
type proto struct {
	Name   string   // C name as the header declares it
	Ret    string   // return type
	Params []string // full declarations, each naming its parameter aN
	Types  []string // the parameter types alone
	Names  []string // the parameter names the declaration gives ("" if none)
	Kinds  []string // how to print each argument (see argKind)
	Stream int      // index of the first hipStream_t parameter, or -1

	RetKind string   // the result's kind
	CTypes  []string // each parameter's type as passed (passedAs)
	CRet    string   // the result's type as passed
}

// preprocessArgs run the C preprocessor over the HIP runtime API header (on
// standard input) in C mode: the C declarations are what the wrappers (plain
// C) define.
var preprocessArgs = []string{"-E", "-P", "-x", "c", "-D__HIP_PLATFORM_AMD__", "-I", "/usr/include", "-"}

// headerIncludes are the headers declaring the runtime API in C.
// hip_deprecated.h (HIP 6+) declares the R0000 entry points, which keep the
// HIP 5 ABI of the functions HIP 6 headers #define to R0600 names.
const headerIncludes = "#include <hip/hip_runtime_api.h>\n#include <hip/amd_detail/hip_runtime_prof.h>\n" +
	"#if __has_include(<hip/hip_deprecated.h>)\n#include <hip/hip_deprecated.h>\n#endif\n"

// compilerDecls declares the registration half of the compiler API, which
// clang calls from generated code and no installed header declares. The
// prototypes are those of HIP's own definitions (hip_platform.cpp), written
// in C. hipRegisterTracerCallback (HIP 5.3+, the hook roctracer registers
// its callback through; its argument is a function pointer) is not declared
// either.
const compilerDecls = `
void** __hipRegisterFatBinary(const void* data);
void __hipUnregisterFatBinary(void** modules);
void __hipRegisterFunction(void** modules, const void* hostFunction, char* deviceFunction,
    const char* deviceName, unsigned int threadLimit, uint3* tid, uint3* bid, dim3* blockDim,
    dim3* gridDim, int* wSize);
void __hipRegisterVar(void** modules, void* var, char* hostVar, char* deviceVar, int ext,
    size_t size, int constant, int global);
void __hipRegisterManagedVar(void* hipModule, void** pointer, void* init_value,
    const char* name, size_t size, unsigned align);
void __hipRegisterSurface(void** modules, void* var, char* hostVar, char* deviceVar, int type,
    int ext);
void __hipRegisterTexture(void** modules, void* var, char* hostVar, char* deviceVar, int type,
    int norm, int ext);
int hipRegisterTracerCallback(const void* function);
`

// tokenize splits preprocessed C into identifiers, numbers, literals and
// punctuation; that is all the declaration parser needs.
func tokenize(src string) []string {
	var toks []string
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '#': // line markers survive -P in some compilers
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case isIdentStart(c) || isDigit(c):
			j := i + 1
			for j < len(src) && (isIdentStart(src[j]) || isDigit(src[j]) || src[j] == '.') {
				j++
			}
			toks = append(toks, src[i:j])
			i = j
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			toks = append(toks, src[i:min(j+1, len(src))])
			i = j + 1
		case strings.HasPrefix(src[i:], "..."):
			toks = append(toks, "...")
			i += 3
		default:
			toks = append(toks, string(c))
			i++
		}
	}
	return toks
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdent(t string) bool { return t != "" && isIdentStart(t[0]) }

// statements yields the top-level declarations (brace depth 0, ending with
// ';'); function bodies and their text are dropped.
func statements(toks []string) [][]string {
	var out [][]string
	var cur []string
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t == "{" {
			// A body after ')' is a function definition: skip it whole.
			isBody := len(cur) > 0 && cur[len(cur)-1] == ")"
			depth := 0
			for ; i < len(toks); i++ {
				if toks[i] == "{" {
					depth++
				} else if toks[i] == "}" {
					depth--
					if depth == 0 {
						break
					}
				}
				if !isBody {
					cur = append(cur, toks[i])
				}
			}
			if isBody {
				cur = nil
			} else {
				cur = append(cur, "}")
			}
			continue
		}
		if t == ";" {
			out = append(out, cur)
			cur = nil
			continue
		}
		cur = append(cur, t)
	}
	return out
}

// stripAttributes removes __attribute__((...)) and __declspec-like noise.
func stripAttributes(s []string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] == "__attribute__" || s[i] == "__attribute" {
			depth := 0
			for i++; i < len(s); i++ {
				if s[i] == "(" {
					depth++
				} else if s[i] == ")" {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			continue
		}
		out = append(out, s[i])
	}
	return out
}

// parsePrototypes returns the first declaration of every wanted function.
func parsePrototypes(src string, wanted map[string]bool) (map[string]proto, error) {
	found, _, err := parseDeclarations(src, wanted)
	return found, err
}

// parseDeclarations also returns the typedefs, name -> kind of value.
func parseDeclarations(src string, wanted map[string]bool) (map[string]proto, typedefs, error) {
	found := map[string]proto{}
	tds := typedefs{}
	for _, st := range statements(tokenize(src)) {
		st = stripAttributes(st)
		if len(st) > 0 && st[0] == "typedef" {
			tds.add(st[1:])
			continue
		}
		if len(st) > 2 && (st[0] == "struct" || st[0] == "union") && st[2] == "{" {
			tds.defineBody("struct "+st[1], st[2:])
			continue
		}
		if len(st) == 0 {
			continue
		}
		for i := 1; i < len(st); i++ {
			if st[i] != "(" || !wanted[st[i-1]] {
				continue
			}
			name := st[i-1]
			if _, dup := found[name]; dup {
				break
			}
			end := matchParen(st, i)
			if end < 0 || end != len(st)-1 {
				break // not a plain declaration (e.g. a function pointer variable)
			}
			var ret []string
			for _, t := range st[:i-1] {
				if t != "extern" && t != "static" && t != "inline" && t != "__inline" {
					ret = append(ret, t)
				}
			}
			p, err := buildProto(name, ret, st[i+1:end])
			if err != nil {
				return nil, nil, err
			}
			found[name] = p
			break
		}
	}
	return found, tds, nil
}

func matchParen(s []string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case "(", "[":
			depth++
		case ")", "]":
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

var typeWords = map[string]bool{
	"void": true, "char": true, "short": true, "int": true, "long": true, "float": true,
	"double": true, "signed": true, "unsigned": true, "_Bool": true, "const": true,
	"volatile": true, "struct": true, "enum": true, "union": true, "restrict": true,
	"__restrict": true,
}

var qualifiers = map[string]bool{
	"const": true, "volatile": true, "struct": true, "enum": true, "union": true,
}

// errVariadic marks a prototype the generator cannot forward.
type errVariadic struct{ name string }

func (e errVariadic) Error() string { return e.name + " is variadic" }

func buildProto(name string, ret, params []string) (proto, error) {
	p := proto{Name: name, Ret: render(ret), Stream: -1}
	var groups [][]string
	depth, start := 0, 0
	for i, t := range params {
		switch t {
		case "(", "[":
			depth++
		case ")", "]":
			depth--
		case ",":
			if depth == 0 {
				groups = append(groups, params[start:i])
				start = i + 1
			}
		}
	}
	if len(params) > 0 {
		groups = append(groups, params[start:])
	}
	if len(groups) == 1 && len(groups[0]) == 1 && groups[0][0] == "void" {
		groups = nil
	}
	for n, g := range groups {
		for _, t := range g {
			if t == "..." {
				return proto{}, errVariadic{name}
			}
		}
		decl, typ, orig := renameParam(g, fmt.Sprintf("a%d", n))
		p.Params = append(p.Params, render(decl))
		p.Types = append(p.Types, render(typ))
		p.Names = append(p.Names, orig)
		if p.Stream < 0 && render(typ) == "hipStream_t" {
			p.Stream = n
		}
	}
	return p, nil
}

// renameParam returns the parameter declaration naming it `name`, and the
// declaration with no name (its type).
func renameParam(g []string, name string) (decl, typ []string, orig string) {
	// Function pointer: T (*x)(...)
	for i := 0; i+1 < len(g); i++ {
		if g[i] == "(" && g[i+1] == "*" {
			at := i + 2
			if at < len(g) && isIdent(g[at]) && !typeWords[g[at]] {
				typ = append(append([]string{}, g[:at]...), g[at+1:]...)
				decl = append(append(append([]string{}, g[:at]...), name), g[at+1:]...)
				return decl, typ, g[at]
			}
			decl = append(append(append([]string{}, g[:at]...), name), g[at:]...)
			return decl, g, ""
		}
	}
	// Array: T x[N]
	cut := len(g)
	for i, t := range g {
		if t == "[" {
			cut = i
			break
		}
	}
	head, tail := g[:cut], g[cut:]
	last := len(head) - 1
	hasName := false
	if last >= 1 && isIdent(head[last]) && !typeWords[head[last]] {
		for _, t := range head[:last] {
			if !qualifiers[t] {
				hasName = true
				break
			}
		}
	}
	if hasName {
		orig = head[last]
		head = head[:last]
	}
	typ = append(append([]string{}, head...), tail...)
	decl = append(append(append([]string{}, head...), name), tail...)
	return decl, typ, orig
}

// render joins tokens into readable C.
func render(toks []string) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 {
			prev := toks[i-1]
			switch {
			case t == "," || t == ")" || t == "]" || t == "[" || prev == "(" || prev == "[":
			case t == "(" && (prev == "*" || prev == ")"):
			case t == "*":
			case prev == "*" && i >= 2 && toks[i-2] == "(":
			default:
				b.WriteByte(' ')
			}
		}
		b.WriteString(t)
	}
	return b.String()
}
