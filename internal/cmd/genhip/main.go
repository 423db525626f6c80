// Command genhip generates the preload library's HIP API wrappers: one C
// function per hip*/__hip* function that libamdhip64 exports, with the
// prototype from the installed headers, the symbol version from the library,
// and an id -> name table for the spool's string table.
//
//	genhip [-lib libamdhip64.so.5] [-include /usr/include] [-cc cc] [-out dir] [-go file]
//
// It writes hip_api_gen.c and hip_exports.map into -out and the Go copy of
// the name table into -go (only when their content changes), and lists on
// stderr what it could not wrap.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

type config struct {
	Lib     string
	Include string
	CC      string
}

// goFile is the key of the Go name table in generated; main writes it to -go.
const goFile = "functions_gen.go"

// generated is the generator's output, file name -> content.
type generated map[string][]byte

func generate(cfg config) (generated, []string, error) {
	exps, err := readExports(cfg.Lib)
	if err != nil {
		return nil, nil, err
	}
	seenMangled := map[string]bool{}
	wanted := map[string]bool{}
	for _, e := range exps {
		if strings.HasPrefix(e.Symbol, "_Z") {
			seenMangled[e.Symbol] = true
		} else {
			wanted[e.Symbol] = true
		}
	}
	for m := range mangled {
		if !seenMangled[m] {
			return nil, nil, fmt.Errorf("%s no longer exports %s: update internal/cmd/genhip/mangled.go", cfg.Lib, m)
		}
	}
	src, err := preprocess(cfg.CC, cfg.Include)
	if err != nil {
		return nil, nil, err
	}
	protos, tds, err := parseDeclarations(src, wanted)
	if err != nil {
		return nil, nil, err
	}
	var fns []function
	var skipped []string
	for _, e := range exps {
		p, ok := mangled[e.Symbol]
		if !ok {
			p, ok = protos[e.Symbol]
		}
		if !ok {
			skipped = append(skipped, e.Symbol+"@"+e.Version)
			continue
		}
		p.Kinds = nil
		for _, typ := range p.Types {
			p.Kinds = append(p.Kinds, tds.kind(typ))
		}
		dom := "RPG_API_HIP_RUNTIME"
		if strings.HasPrefix(e.Symbol, "__hip") {
			dom = "RPG_API_HIP_COMPILER"
		}
		fns = append(fns, function{ID: len(fns), Symbol: e.Symbol, Version: e.Version, Proto: p, Domain: dom})
	}
	return generated{
		"hip_api_gen.c":   emitC(fns, skipped),
		"hip_exports.map": emitMap(fns),
		goFile:            emitGo(fns),
	}, skipped, nil
}

func main() {
	var cfg config
	out := flag.String("out", ".", "directory to write hip_api_gen.c and hip_exports.map into")
	flag.StringVar(&cfg.Lib, "lib", "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5", "the HIP runtime library")
	flag.StringVar(&cfg.Include, "include", "/usr/include", "directory holding hip/hip_runtime_api.h")
	flag.StringVar(&cfg.CC, "cc", "cc", "C compiler used as preprocessor")
	goOut := flag.String("go", "", "where to write the Go name table (skipped when empty)")
	flag.Parse()
	files, skipped, err := generate(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genhip:", err)
		os.Exit(1)
	}
	for _, s := range skipped {
		fmt.Fprintln(os.Stderr, "genhip: not wrapped (no prototype in the C headers):", s)
	}
	for name, data := range files {
		path := filepath.Join(*out, name)
		if name == goFile {
			if *goOut == "" {
				continue
			}
			path = *goOut
		}
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
			continue
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "genhip:", err)
			os.Exit(1)
		}
	}
}
