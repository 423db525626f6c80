//go:build !cgo

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "rocprof-go-duckdb: built without cgo (CGO_ENABLED=0): DuckDB is a C++ library; build it with `make build`")
	os.Exit(1)
}
