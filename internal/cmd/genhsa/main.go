// Command genhsa generates the shim's HSA API-table descriptions from the
// hsa_api_trace.h of every ROCm runtime of the test matrix (the host's 5.2.3
// and the roots of configs/rocm-matrix.tsv): the order of each table
// struct's members is the ABI the runtime hands to OnLoad, and it differs
// between table major versions (ROCm 6 inserted slots in the AMD extension
// table). So the layouts are derived from the headers, not written by hand:
//
//   - every function of every version gets one function id per table (the
//     union of the versions' functions: 5.2.3's in slot order, then the ones
//     later versions added, in their slot order), the id recorded in the
//     spool;
//   - every table major version gets its slot order as a list of those ids
//     (within one major, later versions only append slots, which the
//     generator checks, so the newest layout serves every minor);
//   - every function gets its argument count, from a probe program compiled
//     against each runtime's headers, which also checks that every argument
//     and result is passed in integer registers (the generic tracers forward
//     them as 64-bit words).
//
// Usage (from internal/hsa, via go generate; needs the matrix, `make
// rocm-roots`):
//
//	go run ../cmd/genhsa -out . -goout ../hsaapi
//
// It writes api_table.h (X-macro lists and layouts for the C++ shim) into
// -out and api_names.go (the names, for the writers) into -goout.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

func main() {
	out := flag.String("out", ".", "directory to write api_table.h into")
	goOut := flag.String("goout", "../hsaapi", "directory to write api_names.go into")
	repo := flag.String("repo", "", "repository top (default: found from this source file)")
	build := flag.String("build", "", "build directory holding the ROCm matrix (default <repo>/build)")
	flag.Parse()
	if *repo == "" {
		_, file, _, _ := runtime.Caller(0)
		*repo = filepath.Join(filepath.Dir(file), "..", "..", "..")
	}
	if *build == "" {
		*build = filepath.Join(*repo, "build")
	}
	if err := run(*repo, *build, *out, *goOut); err != nil {
		fmt.Fprintln(os.Stderr, "genhsa:", err)
		os.Exit(1)
	}
}

func run(repo, build, out, goOut string) error {
	versions, err := probeMatrix(repo, build)
	if err != nil {
		return err
	}
	tabs, err := merge(versions)
	if err != nil {
		return err
	}
	tools, err := mergeTools(versions)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "api_table.h"), genC(tabs, tools, versions), 0o644); err != nil {
		return err
	}
	g, err := genGo(tabs)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(goOut, "api_names.go"), g, 0o644)
}
