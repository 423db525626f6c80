package output

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
	"github.com/rocprof-go/rocprof-go/internal/output/format"
	"github.com/rocprof-go/rocprof-go/internal/output/json"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/otf2"
	"github.com/rocprof-go/rocprof-go/internal/output/parquet"
	"github.com/rocprof-go/rocprof-go/internal/output/perfetto"
	"github.com/rocprof-go/rocprof-go/internal/output/rocpd"
)

// The formats besides CSV (FormatCSV), named by the one list
// (internal/output/format).
const (
	FormatJSON     = model.Format(format.JSON)
	FormatPerfetto = model.Format(format.Perfetto)
	FormatOTF2     = model.Format(format.OTF2)
	FormatROCpd    = model.Format(format.ROCpd)
	FormatParquet  = model.Format(format.Parquet)
)

// Writer is one `-f` choice in the registry. Exactly one of WriteTo and
// WritePath is set, except for CSV: Write writes its files (and the stats
// files) in its first pass over each group, with the catalogues it reads
// for every format, because the run's accounting comes from that pass.
type Writer struct {
	Format model.Format
	// File is the name after the output prefix: "<prefix>_" + File.
	File string
	// WriteTo writes a single-stream format.
	WriteTo func(w io.Writer, in *model.Input) error
	// WritePath writes a format that owns a file or directory at path.
	WritePath func(path string, in *model.Input) error
	Doc       string
}

// Writers is the format registry: one writer for each format of the one
// list (internal/output/format, which the CLI's `-f` choices come from), in
// its order, with their file names.
var Writers = []Writer{
	{Format: model.FormatCSV, Doc: "rocprofv3 CSV files (written by Write)"},
	{Format: FormatJSON, File: "results.json", WriteTo: json.Write, Doc: "rocprofv3 results.json"},
	{Format: FormatPerfetto, File: "results.pftrace", WritePath: writePerfetto, Doc: "Perfetto protobuf trace (in parts past 2 GiB)"},
	{Format: FormatOTF2, File: "results", WritePath: otf2.Write, Doc: "OTF2 archive: results.otf2 and results/"},
	{Format: FormatROCpd, File: "results.db", WritePath: rocpd.Write, Doc: "ROCpd SQLite database, schema 3"},
	{Format: FormatParquet, WritePath: parquet.Write, Doc: "one Parquet file per domain: <prefix>_<domain>.parquet"},
}

// writePerfetto writes the Perfetto trace, keeping its parts' names in
// in.PerfettoParts when it needed more than one file.
func writePerfetto(path string, in *model.Input) error {
	parts, err := perfetto.WriteFile(path, in)
	if err == nil && len(parts) > 1 {
		in.PerfettoParts = nil
		for _, p := range parts {
			in.PerfettoParts = append(in.PerfettoParts, model.File{Path: p.Path, Format: FormatPerfetto, Records: p.Records})
		}
	}
	return err
}

// LookupWriter returns the registry entry of a `-f` name.
func LookupWriter(f model.Format) (*Writer, error) {
	for i := range Writers {
		if Writers[i].Format == f {
			return &Writers[i], nil
		}
	}
	names := make([]string, len(Writers))
	for i, w := range Writers {
		names[i] = string(w.Format)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("unknown output format %q: use one of %s", f, strings.Join(names, ", "))
}

// ValidateFormats checks a `-f` list before anything runs.
func ValidateFormats(formats []model.Format) error {
	for _, f := range formats {
		if _, err := LookupWriter(f); err != nil {
			return err
		}
	}
	return nil
}

// Path returns where the format's output goes for an output prefix
// ("<OUTPUT_PATH>/<OUTPUT_FILE>").
// Parquet, which names one file per domain itself, gets the prefix.
func (f *Writer) Path(prefix string) string {
	if f.File == "" {
		return prefix
	}
	return prefix + "_" + f.File
}

// Write writes the format under an output prefix, creating directories.
func (f *Writer) Write(prefix string, in *model.Input) error {
	if f.WriteTo == nil && f.WritePath == nil {
		return nil
	}
	path := f.Path(prefix)
	if err := atomicfile.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("%s output: %w", f.Format, err)
	}
	if f.WritePath != nil {
		if err := f.WritePath(path, in); err != nil {
			return fmt.Errorf("%s output %s: %w", f.Format, path, err)
		}
		return nil
	}
	file, err := atomicfile.Create(path, atomicfile.Public)
	if err != nil {
		return fmt.Errorf("%s output: %w", f.Format, err)
	}
	if err := f.WriteTo(file, in); err != nil {
		file.Abort()
		var pe *os.PathError
		if errors.As(err, &pe) { // already names the file
			return fmt.Errorf("%s output: %w", f.Format, err)
		}
		return fmt.Errorf("%s output %s: %w", f.Format, path, err)
	}
	if err := file.Commit(); err != nil {
		return fmt.Errorf("%s output: %w", f.Format, err)
	}
	return nil
}

// CheckOTF2 loads the OTF2 library now, so that a run asking for -f otf2
// fails before the app runs when it is missing (otf2.Check).
func CheckOTF2() error { return otf2.Check() }
