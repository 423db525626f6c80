// Command genhip generates the preload library's HIP API wrappers: one C
// function per hip*/__hip* function that the libamdhip64 of any HIP release
// of the ROCm matrix exports (the host's 5.2.3, and 5.7.1, 6.4.3 and 7.2.4 in
// the roots of configs/rocm-matrix.tsv), with the prototype from that
// release's headers, the symbol version from its library, and an id -> name
// table for the spool's string table (see union.go).
//
// Usage (from internal/hipapi, via go generate; needs the matrix,
// `make rocm-roots`):
//
//	go run ../cmd/genhip -out ../hsa/preload -go functions_gen.go
//
// It writes hip_api_gen.c and hip_exports.map into -out and the Go copy of
// the name table into -go (only when their content changes).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

type config struct {
	Repo  string // the repository's top directory
	Build string // its build directory (holding build/rocm/<name>)
}

// goFile is the key of the Go name table in generated; main writes it to -go.
const goFile = "functions_gen.go"

// generated is the generator's output, file name -> content.
type generated map[string][]byte

func generate(cfg config) (generated, []function, error) {
	srcs, err := readSources(cfg.Repo, cfg.Build)
	if err != nil {
		return nil, nil, err
	}
	fns, err := unionFunctions(srcs)
	if err != nil {
		return nil, nil, err
	}
	var names []string
	for _, s := range srcs {
		names = append(names, s.Name)
	}
	return generated{
		"hip_api_gen.c":   emitC(fns, names),
		"hip_exports.map": emitMap(fns),
		goFile:            emitGo(fns),
	}, fns, nil
}

func main() {
	var cfg config
	out := flag.String("out", ".", "directory to write hip_api_gen.c and hip_exports.map into")
	flag.StringVar(&cfg.Repo, "repo", "", "repository top (default: found from this source file)")
	flag.StringVar(&cfg.Build, "build", "", "build directory holding the ROCm matrix (default <repo>/build)")
	goOut := flag.String("go", "", "where to write the Go name table (skipped when empty)")
	flag.Parse()
	if cfg.Repo == "" {
		_, file, _, _ := runtime.Caller(0)
		cfg.Repo = filepath.Join(filepath.Dir(file), "..", "..", "..")
	}
	if cfg.Build == "" {
		cfg.Build = filepath.Join(cfg.Repo, "build")
	}
	files, _, err := generate(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genhip:", err)
		os.Exit(1)
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
