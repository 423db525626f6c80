package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/rocprof-go/rocprof-go/internal/duckdb"
	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/securedir"
)

// imbalanceEngine returns the DuckDB engine job --imbalance runs: the one
// this binary embeds, unpacked into the library cache (launch.EmbeddedTool),
// or "" to let duckdb.Find look ($ROCPROF_GO_DUCKDB, beside the CLI, PATH).
// When the cache is refused (a directory others can write, every place
// for it on a noexec mount, no HOME), the engine is unpacked into a
// private temporary directory (securedir: this user's, on a path no other
// user can change) in $XDG_RUNTIME_DIR, $TMPDIR or /tmp, the first where
// it runs, and removed by done; a note says so. When it can run nowhere,
// the error names each place and why, and what to set.
func imbalanceEngine(stderr io.Writer) (engine string, done func(), err error) {
	done = func() {}
	gz := duckdb.Embedded()
	if gz == nil || os.Getenv(duckdb.EnvVar) != "" {
		return "", done, nil
	}
	engine, cacheErr := launch.EmbeddedTool(duckdb.Name, gz)
	if cacheErr == nil {
		return engine, done, nil
	}
	// An engine beside the CLI or in PATH needs no unpacking.
	if p, err := duckdb.Find(); err == nil {
		return p, done, nil
	}
	data, err := gunzipEngine(gz)
	if err != nil {
		return "", done, err
	}
	tried := []string{"the library cache: " + cacheErr.Error()}
	for _, root := range engineRoots() {
		p, cleanup, why := unpackEngine(root, data)
		if why == "" {
			fmt.Fprintf(stderr, "rocprof-go: note: the DuckDB engine runs from a temporary directory in %s, removed afterwards: %s\n", root, cacheErr)
			return p, cleanup, nil
		}
		tried = append(tried, root+": "+why)
	}
	return "", done, fmt.Errorf("job --imbalance found no place where the embedded DuckDB engine can run (%s): "+
		"set XDG_CACHE_HOME (or TMPDIR) to a directory only you can write, on a file system mounted without noexec, "+
		"or %s to a rocprof-go-duckdb executable (make build writes build/%s); the duckdb CLI runs the same query (job --imbalance --print-query)",
		strings.Join(tried, "; "), duckdb.EnvVar, duckdb.Name)
}

// engineRoots are the places a temporary engine may go, in order.
func engineRoots() []string {
	var roots []string
	add := func(d string) {
		if filepath.IsAbs(d) {
			for _, r := range roots {
				if r == d {
					return
				}
			}
			roots = append(roots, d)
		}
	}
	add(os.Getenv("XDG_RUNTIME_DIR"))
	add(os.Getenv("TMPDIR"))
	add("/tmp")
	return roots
}

func gunzipEngine(gz []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("embedded %s: %w", duckdb.Name, err)
	}
	return io.ReadAll(r)
}

// unpackEngine writes the engine into a new private directory in root and
// runs it once; it returns its path and the directory's removal, or why
// it cannot be used there.
func unpackEngine(root string, data []byte) (string, func(), string) {
	d, err := securedir.Open(root)
	if err != nil {
		return "", nil, err.Error()
	}
	tmp, err := d.MkdirTemp("rocprof-go-duckdb-")
	if err != nil {
		d.Close()
		return "", nil, err.Error()
	}
	// Removed through root's descriptor, held until then.
	cleanup := func() {
		_ = d.RemoveAll(filepath.Base(tmp.Path()))
		d.Close()
	}
	defer tmp.Close()
	if err := tmp.WriteFile(duckdb.Name, data, 0o700); err != nil {
		cleanup()
		return "", nil, err.Error()
	}
	p := filepath.Join(tmp.Path(), duckdb.Name)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, p, "-json", "--", "SELECT 1").CombinedOutput(); err != nil {
		cleanup()
		why := err.Error()
		if strings.Contains(why, "permission denied") {
			why = "it cannot run there (the file system is mounted noexec)"
		} else if s := strings.TrimSpace(string(out)); s != "" {
			why += ": " + s
		}
		return "", nil, why
	}
	return p, cleanup, ""
}
