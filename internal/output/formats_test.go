package output

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
)

func TestFormatRegistry(t *testing.T) {
	for _, f := range []model.Format{model.FormatCSV, FormatJSON, FormatPerfetto, FormatOTF2, FormatROCpd, FormatParquet} {
		w, err := LookupWriter(f)
		require.NoError(t, err)
		require.Equal(t, f, w.Format)
	}
	err := ValidateFormats([]model.Format{"json", "sqlite"})
	require.ErrorContains(t, err, `unknown output format "sqlite": use one of csv, json, otf2, parquet, pftrace, rocpd`)
	w, _ := LookupWriter(FormatROCpd)
	require.Equal(t, "/o/run_results.db", w.Path("/o/run"))
	w, _ = LookupWriter(FormatParquet)
	require.Equal(t, "/o/run", w.Path("/o/run"))
}

// One synthetic run of three processes, every domain, written in every
// format: each format holds the same records per domain, as independent
// readers see them (the sqlite3 shell, otf2-print, DuckDB, a protobuf
// wire decoder, encoding/json), and as many as the CSV files.
func TestAllFormatsHoldTheSameRecords(t *testing.T) {
	const n = 24
	pids := []int32{100, 200, 300}
	dir := t.TempDir()
	spoolDir := filepath.Join(dir, "spools")
	require.NoError(t, os.Mkdir(spoolDir, 0o755))
	spools := outputtest.WriteSpools(t, spoolDir, pids, n)
	out := filepath.Join(dir, "out")

	var want [model.NumDomains]uint64
	for d, c := range outputtest.Counts(n) {
		want[d] = c * uint64(len(pids))
	}

	// CSV, through the CSV writer's entry point, as one file set.
	res, err := Write(model.Config{Dir: out, PrefixTemplate: "run", Formats: []model.Format{model.FormatCSV}}, spoolDir)
	require.NoError(t, err)
	csv := map[string]uint64{}
	for _, f := range res.Files {
		if strings.HasSuffix(f.Name, "_trace") || f.Name == "counter_collection" {
			csv[f.Domain] += f.Records
		}
	}

	prefix := filepath.Join(out, "run")
	in := &model.Input{Spools: spools}
	writeFormats(t, []model.Format{model.FormatCSV, FormatJSON, FormatPerfetto, FormatOTF2, FormatROCpd, FormatParquet}, prefix, in.Spools)

	jsonBytes, err := os.ReadFile(prefix + "_results.json")
	require.NoError(t, err)
	var js [model.NumDomains]uint64
	doc := decodeJSONBytes(t, jsonBytes)
	for i := range pids {
		c := outputtest.JSONCounts(doc, i)
		for d := range js {
			js[d] += c[d]
		}
	}

	trace, err := os.ReadFile(prefix + "_results.pftrace")
	require.NoError(t, err)
	pf := outputtest.PerfettoCounts(outputtest.DecodePerfetto(t, trace))

	otf, _ := outputtest.OTF2Counts(t, prefix+"_results.otf2")

	db := prefix + "_results.db"
	rocpd := [model.NumDomains]uint64{
		model.DomHIP:     outputtest.SQLiteCount(t, db, "regions_and_samples WHERE category LIKE 'HIP_%'"),
		model.DomHSA:     outputtest.SQLiteCount(t, db, "regions_and_samples WHERE category LIKE 'HSA_%'"),
		model.DomMarker:  outputtest.SQLiteCount(t, db, "regions_and_samples WHERE category LIKE 'MARKER_%'"),
		model.DomKernel:  outputtest.SQLiteCount(t, db, "kernels"),
		model.DomCopy:    outputtest.SQLiteCount(t, db, "memory_copies"),
		model.DomAlloc:   outputtest.SQLiteCount(t, db, "memory_allocations WHERE level != 'SCRATCH'"),
		model.DomScratch: outputtest.SQLiteCount(t, db, "scratch_memory"),
		model.DomCounter: outputtest.SQLiteCount(t, db, "pmc_events"),
	}
	for _, v := range outputtest.ROCpdViews {
		outputtest.SQLite3CLI(t, db, "SELECT COUNT(*) FROM "+v)
	}

	files := outputtest.ParquetFiles(t, prefix)
	var paths []string
	for _, p := range files {
		paths = append(paths, p)
	}
	pq := outputtest.ParquetCheck(t, paths...)
	st, err := model.CollectStats(in)
	require.NoError(t, err)

	for d := model.Domain(0); d < model.NumDomains; d++ {
		name := d.String()
		require.Equal(t, want[d], js[d], "json %s", name)
		require.Equal(t, want[d], rocpd[d], "rocpd %s", name)
		switch d {
		case model.DomCounter:
			// CSV and Parquet sum a counter's instances per dispatch (two
			// here); Perfetto and OTF2 show counters as counter tracks.
			require.Equal(t, want[d]/2, csv[name], "csv %s", name)
			require.Equal(t, want[d]/2, pq[filepath.Base(files[d])].Rows, "parquet %s", name)
		case model.DomMarker:
			require.Equal(t, want[d], pq[filepath.Base(files[d])].Rows, "parquet %s", name)
			require.Equal(t, want[d], csv[name], "csv %s", name)
			require.Equal(t, want[d], pf[d], "perfetto %s", name)
			require.Equal(t, want[d]-uint64(len(pids)*n/2), otf[model.Domains[d].Category], "otf2 %s (marks are instants)", name)
		default:
			require.Equal(t, want[d], pq[filepath.Base(files[d])].Rows, "parquet %s", name)
			require.Equal(t, want[d], csv[name], "csv %s", name)
			require.Equal(t, want[d], pf[d], "perfetto %s", name)
			require.Equal(t, want[d], otf[model.Domains[d].Category], "otf2 %s", name)
			require.Equal(t, st[d].Total.Sum, pq[filepath.Base(files[d])].DurationSum, "parquet %s duration", name)
		}
	}
	kernelNs, err := strconv.ParseUint(outputtest.SQLite3CLI(t, db, "SELECT SUM(duration) FROM kernels"), 10, 64)
	require.NoError(t, err)
	require.Equal(t, st[model.DomKernel].Total.Sum, kernelNs)
}

func decodeJSONBytes(t *testing.T, b []byte) *outputtest.JSONDoc {
	var doc outputtest.JSONDoc
	require.NoError(t, outputtest.JSONUnmarshal(bytes.NewReader(b), &doc))
	return &doc
}

// A writer's error names the format and the path Write chose.
func TestWriterErrorNamesFormatAndPath(t *testing.T) {
	boom := errors.New("boom")
	w := &Writer{Format: "x", File: "f", WriteTo: func(io.Writer, *model.Input) error { return boom }}
	prefix := outputtest.TempPrefix(t)
	err := w.Write(prefix, &model.Input{})
	require.ErrorIs(t, err, boom)
	require.Equal(t, "x output "+prefix+"_f: boom", err.Error())
	require.NoFileExists(t, prefix+"_f")
}
