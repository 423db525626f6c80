package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
)

// source is one HIP release of the matrix: what its libamdhip64 exports and
// what its C headers declare.
type source struct {
	Name    string // matrix name, "5.2" .. "7.2"
	Lib     string // libamdhip64.so.N as seen from the host
	Exports []export
	Protos  map[string]proto
	Types   typedefs
	rt      rocmmatrix.Runtime
	work    string // scratch directory for the probe
}

// readSources reads every runtime of the matrix, oldest first.
func readSources(repo, build string) ([]*source, error) {
	rts, err := rocmmatrix.Runtimes(repo, build)
	if err != nil {
		return nil, err
	}
	var out []*source
	for _, rt := range rts {
		s, err := readSource(rt, filepath.Join(rt.Build(), "genhip", rt.Name))
		if err != nil {
			return nil, fmt.Errorf("HIP of ROCm %s: %w", rt.Name, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func readSource(rt rocmmatrix.Runtime, work string) (*source, error) {
	libDir := filepath.Join("/", rt.Root, "usr", "lib", "x86_64-linux-gnu")
	libs, _ := filepath.Glob(filepath.Join(libDir, "libamdhip64.so.[0-9]"))
	if len(libs) != 1 {
		return nil, fmt.Errorf("want one libamdhip64.so.N in %s, found %d (build the ROCm matrix: make rocm-roots; the host needs libamdhip64-dev)", libDir, len(libs))
	}
	exps, err := readExports(libs[0])
	if err != nil {
		return nil, err
	}
	wanted := map[string]bool{}
	for _, e := range exps {
		if !strings.HasPrefix(e.Symbol, "_Z") {
			wanted[e.Symbol] = true
		}
	}
	s := &source{Name: rt.Name, Lib: libs[0], Exports: exps, rt: rt, work: work}
	src, err := s.run(headerIncludes, "cc", preprocessArgs...)
	if err != nil {
		return nil, err
	}
	if s.Protos, s.Types, err = parseDeclarations(string(src)+compilerDecls, wanted); err != nil {
		return nil, err
	}
	return s, nil
}

// run runs a command on the source's runtime (inside its root) with a
// time limit.
func (s *source) run(stdin string, prog string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := s.rt.Command(ctx, prog, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %v: %s", prog, strings.Join(args, " "), err, errb.String())
	}
	return out.Bytes(), nil
}

// layout is how a type is passed: its size and alignment.
type layout struct{ Size, Align int }

// probeLayouts compiles and runs a C program against the source's headers
// that prints the size and alignment of each type.
func (s *source) probeLayouts(types []string) (map[string]layout, error) {
	if len(types) == 0 {
		return map[string]layout{}, nil
	}
	sort.Strings(types)
	var b strings.Builder
	b.WriteString("#include <stdio.h>\n#include <stdalign.h>\n")
	b.WriteString(headerIncludes)
	b.WriteString(compilerDecls)
	b.WriteString("int main(void) {\n")
	for _, t := range types {
		fmt.Fprintf(&b, "    printf(\"%%zu %%zu %%s\\n\", sizeof(%s), alignof(%s), %q);\n", t, t, t)
	}
	b.WriteString("    return 0;\n}\n")
	if err := os.MkdirAll(s.work, 0o755); err != nil {
		return nil, err
	}
	cfile, bin := filepath.Join(s.work, "layouts.c"), filepath.Join(s.work, "layouts")
	if err := os.WriteFile(cfile, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	if _, err := s.run("", "cc", "-D__HIP_PLATFORM_AMD__", "-w", "-o", bin, cfile); err != nil {
		return nil, fmt.Errorf("compiling the layout probe: %w", err)
	}
	out, err := s.run("", bin)
	if err != nil {
		return nil, fmt.Errorf("running the layout probe: %w", err)
	}
	res := map[string]layout{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("layout probe printed %q", sc.Text())
		}
		size, _ := strconv.Atoi(f[0])
		align, _ := strconv.Atoi(f[1])
		res[f[2]] = layout{size, align}
	}
	return res, sc.Err()
}
