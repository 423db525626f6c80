package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
)

// tableSpec is one API table struct of hsa_api_trace.h and the domain it traces.
type tableSpec struct {
	Struct   string // C++ struct name in hsa_api_trace.h
	Macro    string // X-macro list name in api_table.h
	GoName   string // Go variable holding the names
	VerMacro string // the header's HSA_<X>_API_TABLE name stem for the version macros
}

var specs = []tableSpec{
	{Struct: "CoreApiTable", Macro: "RPG_HSA_CORE_FUNCS", GoName: "CoreFunctions", VerMacro: "HSA_CORE_API_TABLE"},
	{Struct: "AmdExtTable", Macro: "RPG_HSA_AMD_EXT_FUNCS", GoName: "AmdExtFunctions", VerMacro: "HSA_AMD_EXT_API_TABLE"},
	{Struct: "ImageExtTable", Macro: "RPG_HSA_IMAGE_EXT_FUNCS", GoName: "ImageExtFunctions", VerMacro: "HSA_IMAGE_API_TABLE"},
	{Struct: "FinalizerExtTable", Macro: "RPG_HSA_FINALIZER_EXT_FUNCS", GoName: "FinalizerExtFunctions", VerMacro: "HSA_FINALIZER_API_TABLE"},
}

// fn is one table member as a runtime's headers declare it.
type fn struct {
	Name   string
	Offset int
	Ret    byte   // 'v' void, 'i' integer class, '?' anything else
	Args   []byte // 'i' or '?' each
	// Untraceable: a value not passed in integer registers (a struct by
	// value: hsa_ext_program_finalize's control directives), which the
	// generic tracers cannot forward; such a slot is left as it is.
	Untraceable bool
}

// layout is one table of one runtime.
type layout struct {
	Major, Step, Size int
	Funcs             []fn // in slot order
}

// version is one runtime's tables.
type version struct {
	Name        string // matrix entry: 5.2, 6.1, ...
	RootMajor   int
	RootStep    int
	Tables      map[string]*layout // by struct name
	HeaderFuncs map[string][]string
	Tools       *toolsTable // nil: the root table has no tools_ member
}

var member = regexp.MustCompile(`decltype\(\s*([A-Za-z0-9_]+)\s*\)\s*\*\s*([A-Za-z0-9_]+)_fn\s*;`)

// parse returns the function names of struct name, in member order.
func parse(src, name string) ([]string, error) {
	start := strings.Index(src, "struct "+name+" {")
	if start < 0 {
		return nil, fmt.Errorf("struct %s not found", name)
	}
	end := strings.Index(src[start:], "\n};")
	if end < 0 {
		return nil, fmt.Errorf("struct %s has no end", name)
	}
	body := src[start : start+end]
	var out []string
	for _, m := range member.FindAllStringSubmatch(body, -1) {
		if m[1] != m[2] {
			return nil, fmt.Errorf("%s: member %s_fn wraps %s", name, m[2], m[1])
		}
		out = append(out, m[1])
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("struct %s has no functions", name)
	}
	return out, nil
}

var wrapped = regexp.MustCompile(`\*\s*\n\s*`)

// joinMembers undoes the header's line wrapping of long members.
func joinMembers(src string) string { return wrapped.ReplaceAllString(src, "* ") }

// probeSource is a C++ program that prints, against one runtime's headers,
// each table's version macros and size, and each member's offset and the
// register class of its result and arguments (the compiler does the type
// analysis, so no C declaration is parsed here).
func probeSource(funcs map[string][]string, tools []string) string {
	var b strings.Builder
	b.WriteString(`#include <cstddef>
#include <cstdio>
#include <type_traits>
#include <hsa/hsa_api_trace.h>

// 'i': passed in an integer register (integers, enums, pointers, handle
// structs of at most 8 bytes); 'v': void; '?': anything else.
template <typename T> constexpr char kind() {
  if constexpr (std::is_void_v<T>) return 'v';
  else if constexpr (std::is_floating_point_v<T>) return '?';
  else if constexpr ((std::is_integral_v<T> || std::is_enum_v<T> || std::is_pointer_v<T>) && sizeof(T) <= 8) return 'i';
  else if constexpr (std::is_class_v<T> && std::is_trivially_copyable_v<T> && sizeof(T) <= 8) return 'i';
  else return '?';
}
template <typename R, typename... A> void sig(const char *t, const char *n, size_t off, R (*)(A...)) {
  std::printf("F %s %s %zu %c", t, n, off, kind<R>());
  ((std::printf(" %c", kind<A>())), ...);
  std::printf("\n");
}
#define M(T, n) sig(#T, #n, offsetof(T, n##_fn), (decltype(T::n##_fn)) nullptr);
#define V(T, STEM) std::printf("V %s %u %u %zu\n", #T, (unsigned)(STEM##_MAJOR_VERSION), (unsigned)(STEM##_STEP_VERSION), sizeof(T));
int main() {
  V(HsaApiTable, HSA_API_TABLE)
`)
	for _, s := range specs {
		fmt.Fprintf(&b, "  V(%s, %s)\n", s.Struct, s.VerMacro)
		for _, f := range funcs[s.Struct] {
			fmt.Fprintf(&b, "  M(%s, %s)\n", s.Struct, f)
		}
	}
	b.WriteString(probeToolsSource(tools))
	b.WriteString("  return 0;\n}\n")
	return b.String()
}

// probeMatrix probes every runtime of the matrix.
func probeMatrix(repo, build string) ([]*version, error) {
	rts, err := rocmmatrix.Runtimes(repo, build)
	if err != nil {
		return nil, err
	}
	var out []*version
	for _, rt := range rts {
		v, err := probe(rt, rt.Build())
		if err != nil {
			return nil, fmt.Errorf("ROCm %s: %w", rt.Name, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func probe(rt rocmmatrix.Runtime, build string) (*version, error) {
	header := filepath.Join("/", rt.Root, "usr", "include", "hsa", "hsa_api_trace.h")
	raw, err := os.ReadFile(header)
	if err != nil {
		return nil, fmt.Errorf("%w (build the ROCm matrix: make rocm-roots; the host needs libhsa-runtime-dev)", err)
	}
	src := joinMembers(string(raw))
	funcs := map[string][]string{}
	for _, s := range specs {
		if funcs[s.Struct], err = parse(src, s.Struct); err != nil {
			return nil, err
		}
	}
	tools, err := parseTools(src)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(build, "genhsa", rt.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cpp, bin := filepath.Join(dir, "probe.cpp"), filepath.Join(dir, "probe")
	if err := os.WriteFile(cpp, []byte(probeSource(funcs, tools)), 0o644); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cc := rt.Command(ctx, "g++", "-std=c++17", "-DAMD_INTERNAL_BUILD", "-I/usr/include/hsa", "-o", bin, cpp)
	if out, err := cc.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("compiling the probe: %v\n%s", err, out)
	}
	var stdout bytes.Buffer
	run := rt.Command(ctx, bin)
	run.Stdout = &stdout
	if err := run.Run(); err != nil {
		return nil, fmt.Errorf("running the probe: %w", err)
	}
	v := &version{Name: rt.Name, Tables: map[string]*layout{}, HeaderFuncs: funcs}
	if tools != nil {
		v.Tools = &toolsTable{Events: map[string]int{}}
	}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 5 && f[0] == "V":
			n := atoi(f[2:])
			if f[1] == "HsaApiTable" {
				v.RootMajor, v.RootStep = n[0], n[1]
				continue
			}
			if f[1] == "ToolsApiTable" {
				v.Tools.Major, v.Tools.Step, v.Tools.Size = n[0], n[1], n[2]
				continue
			}
			v.Tables[f[1]] = &layout{Major: n[0], Step: n[1], Size: n[2]}
		case len(f) == 3 && f[0] == "R" && v.Tools != nil:
			v.Tools.RootOffset = atoi(f[2:])[0]
		case len(f) == 3 && f[0] == "T" && v.Tools != nil:
			if want := 16 + 8*len(v.Tools.Slots); atoi(f[2:])[0] != want {
				return nil, fmt.Errorf("ToolsApiTable: %s sits at offset %s, not %d: the table is not a version header followed by pointers", f[1], f[2], want)
			}
			v.Tools.Slots = append(v.Tools.Slots, f[1])
		case len(f) == 3 && f[0] == "E" && v.Tools != nil:
			v.Tools.Events[f[1]] = atoi(f[2:])[0]
		case len(f) >= 5 && f[0] == "F":
			t := v.Tables[f[1]]
			if t == nil {
				return nil, fmt.Errorf("probe: %s before its table's version", f[2])
			}
			off, _ := strconv.Atoi(f[3])
			e := fn{Name: f[2], Offset: off, Ret: f[4][0]}
			for _, a := range f[5:] {
				e.Args = append(e.Args, a[0])
			}
			e.Untraceable = e.Ret == '?' || bytes.ContainsRune(e.Args, '?')
			if want := 16 + 8*len(t.Funcs); off != want {
				return nil, fmt.Errorf("%s: %s sits at offset %d, not %d: the table is not a version header followed by pointers", f[1], e.Name, off, want)
			}
			t.Funcs = append(t.Funcs, e)
		default:
			return nil, fmt.Errorf("probe: unexpected line %q", sc.Text())
		}
	}
	return v, sc.Err()
}

func atoi(fs []string) []int {
	out := make([]int, len(fs))
	for i, s := range fs {
		out[i], _ = strconv.Atoi(s)
	}
	return out
}
