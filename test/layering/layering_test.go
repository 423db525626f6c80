// Package layering checks the module's import layering: every package has
// a layer, and a package imports only packages of lower layers. The table
// is the map of the house (ARCHITECTURE.md draws it); a new package must
// be placed in it, and an import that climbs a layer fails with the rule
// it breaks.
package layering

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/rocprof-go/rocprof-go/"

// layers, bottom up. A package may import packages of lower layers only.
var layers = [][]string{
	// The directories a run may trust, below the other leaves: atomicfile
	// creates output directories through it.
	{"internal/securedir"},
	// 0: leaves: the spool model, file and name helpers, data.
	{"internal/tracing", "internal/atomicfile", "internal/textdist", "internal/kernelname", "internal/placeholder",
		"internal/topology", "internal/rocmmatrix", "internal/testsys", "configs/gpu", "internal/aql/pm4",
		"internal/output/ranges", "internal/sqlitefd", "internal/jobdir", "internal/hsa/hiptrace", "internal/launch/launchtest", "internal/toolenv", "internal/domain",
		"internal/duckdb", "internal/output/format", "internal/pcsprobe", "internal/spill"},
	// 1: models built on the leaves: HIP's tables, packets, thread-trace files.
	{"internal/tracing/spooltest", "internal/faultguard", "internal/hipapi", "internal/hsaapi", "internal/aql", "internal/att", "internal/inject"},
	// 2: the counter database; the run's options; the outputs' shared
	// model (configuration, catalogue, domains, order, statistics), beside
	// the options and not below them (the orchestration fills the model's
	// Config); reading ROCpd.
	{"internal/counters", "internal/options", "internal/output/model", "internal/analysis/rocpdread", "internal/hsa/request"},
	// 3: the writers, one package per format, and their test fixtures: one
	// layer, so that a writer imports no other writer.
	{"internal/output/outputtest", "internal/output/csv", "internal/output/json", "internal/output/perfetto",
		"internal/output/otf2", "internal/output/rocpd", "internal/output/parquet", "internal/output/summarytables"},
	// 4: the outputs' orchestration: Write, the format registry.
	{"internal/output"},
	// 5: launching; the injected shim; analyses' event stream; generators
	// and fixtures.
	{"internal/launch", "internal/hsa", "internal/analysis", "internal/analysis/rocpdtest", "internal/analysis/jobgen", "internal/cmd/genhip",
		"internal/cmd/genhsa", "internal/cmd/genconfigs", "internal/cmd/genenv", "internal/cmd/gendomain", "internal/cmd/hostinfo"},
	// 6: analyses of stored runs; one attach to running processes.
	{"internal/analysis/compare", "internal/analysis/summary", "internal/analysis/convert", "internal/analysis/imbalance", "internal/attach"},
	// 7: the run pipeline, the one orchestration.
	{"internal/pipeline"},
	// 8: the public Go API, a front of the pipeline.
	{"pkg/rocprof"},
	// 9: the CLI, the other front, and its DuckDB engine (a companion
	// executable that imports nothing of the module).
	{"cmd/rocprof-go", "cmd/rocprof-go-duckdb"},
}

type pkg struct {
	ImportPath string
	Name       string
	Imports    []string
	GoFiles    []string
	CgoFiles   []string
}

// packages lists the module's packages (go list).
func packages(t *testing.T) []pkg {
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	require.NoError(t, err)
	var ps []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		require.NoError(t, dec.Decode(&p))
		ps = append(ps, p)
	}
	return ps
}

// No two packages share a name (commands, package main, aside): a reader
// who meets "summary." or "rocpd." in code knows which package it is, and
// no file needs an import alias to use two of them (issue 35).
func TestPackageNamesAreUnique(t *testing.T) {
	byName := map[string]string{}
	for _, p := range packages(t) {
		if p.Name == "main" {
			continue
		}
		name := strings.TrimPrefix(p.ImportPath, module)
		if other, ok := byName[p.Name]; ok {
			t.Errorf("%s and %s are both package %s: rename one (its directory and package clause) after what it holds", other, name, p.Name)
			continue
		}
		byName[p.Name] = name
	}
}

func TestImportLayering(t *testing.T) {
	layer := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			layer[p] = i
		}
	}
	for _, p := range packages(t) {
		name := strings.TrimPrefix(p.ImportPath, module)
		if len(p.GoFiles)+len(p.CgoFiles) == 0 || strings.HasPrefix(name, "test/") || name == "vgpu" {
			continue // tests only (their package holds a doc.go): they may use anything
		}
		l, ok := layer[name]
		if !ok {
			t.Errorf("%s has no layer: place it in test/layering's table (and ARCHITECTURE.md)", name)
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			if dl, ok := layer[dep]; ok && dl >= l {
				t.Errorf("%s (layer %d) imports %s (layer %d): a package imports only lower layers", name, l, dep, dl)
			}
		}
	}
}
