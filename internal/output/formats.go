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
)

// Input is one output file set: the spools of the processes whose records
// go into the same files. The caller groups spools by resolved output path
// (rocprofv3's default `%hostname%/%pid%` gives one group per process).
type Input struct {
	Spools  []string // spool paths, as tracing.List orders them
	Options Options
}

// Options are the settings the non-CSV writers and the summaries read.
type Options struct {
	MangledKernels  bool // -M: raw symbol names
	TruncateKernels bool // -T: names without template and argument lists
	KernelRename    bool // --kernel-rename: dispatches named after their ROCTx range (dispatchName)
	GroupByQueue    bool // Perfetto: one track per queue instead of per stream
	// HideMarkers: the markers were recorded only to rename kernels
	// (--kernel-rename without --marker-trace): read for the names, written
	// nowhere.
	HideMarkers bool
	// AgentIndex selects agent numbers and labels (-A).
	AgentIndex AgentIndex
	// Command and Config are copied into JSON and ROCpd metadata.
	Config map[string]any

	// Summary tables (-S, -D, --summary-groups, -u).
	Summary          bool
	SummaryPerDomain bool
	SummaryGroups    []string
	SummaryUnits     string // sec, msec, usec, nsec (default)

	Stats bool // --stats: JSON carries the summary block

	// FullEnvironment stores the app's whole environment in ROCpd's process
	// table (--output-config); otherwise only launcher variables (ranks).
	FullEnvironment bool

	// Parquet: hive-partitioned layout domain=<d>/rank=<n>/part-0.parquet.
	ParquetHive bool
	ParquetRank int
	// ParquetHiveRoot is the directory the hive partitions start at (the
	// run's output directory, -d): a prefix below it (<host>/<pid>) becomes
	// the file's name, so that every process of every host lands in
	// <root>/domain=<d>/rank=<n>/, where one glob finds them. Empty: the
	// prefix's own directory.
	ParquetHiveRoot string

	// KeepCorrelationIDs lists spools (by path) whose correlation ids are
	// rocprofv3's already (convert's spools made from a ROCpd database):
	// they are not renumbered (order.go).
	KeepCorrelationIDs map[string]bool

	// ThreadTraceFiles are the thread-trace files placed beside each
	// process's outputs (--att), by pid: their base names, which JSON lists
	// in strings.att_filenames and code_object_snapshot_filenames.
	ThreadTraceFiles map[int32][]string
}

// The formats written by this file set (FormatCSV is the CSV writer's).
const (
	FormatJSON     Format = "json"
	FormatPerfetto Format = "pftrace"
	FormatOTF2     Format = "otf2"
	FormatROCpd    Format = "rocpd"
	FormatParquet  Format = "parquet"
)

// WithConfig takes the settings the CSV writer's Config also carries (-M,
// -T, -A, --stats), so both sides of the output name kernels and agents
// alike.
func (o Options) WithConfig(c *Config) Options {
	o.MangledKernels, o.TruncateKernels, o.Stats = c.Mangled, c.Truncate, c.Stats
	o.KernelRename, o.HideMarkers, o.AgentIndex = c.KernelRename, c.HideMarkers, c.AgentIndex
	return o
}

// Writer is one `-f` choice in the registry. Exactly one of WriteTo and
// WritePath is set for the formats written here; CSV is listed for
// validation only, its files come from Write.
type Writer struct {
	Format Format
	// File is the name after the output prefix: "<prefix>_" + File.
	File string
	// WriteTo writes a single-stream format.
	WriteTo func(w io.Writer, in *Input) error
	// WritePath writes a format that owns a file or directory at path.
	WritePath func(path string, in *Input) error
	Doc       string
}

// Writers is the format registry: the CLI's `-f` choices, their file names
// and writers.
var Writers = []Writer{
	{Format: FormatCSV, Doc: "rocprofv3 CSV files (written by Write)"},
	{Format: FormatJSON, File: "results.json", WriteTo: WriteJSON, Doc: "rocprofv3 results.json"},
	{Format: FormatPerfetto, File: "results.pftrace", WriteTo: WritePerfetto, Doc: "Perfetto protobuf trace"},
	{Format: FormatOTF2, File: "results", WritePath: WriteOTF2, Doc: "OTF2 archive: results.otf2 and results/"},
	{Format: FormatROCpd, File: "results.db", WritePath: WriteROCpd, Doc: "ROCpd SQLite database, schema 3"},
	{Format: FormatParquet, WritePath: WriteParquet, Doc: "one Parquet file per domain: <prefix>_<domain>.parquet"},
}

// LookupWriter returns the registry entry of a `-f` name.
func LookupWriter(f Format) (*Writer, error) {
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
func ValidateFormats(formats []Format) error {
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

// WriteFormats writes every named non-CSV format for one input; "csv" is
// skipped (the CSV writer handles it). The first error stops the run.
func WriteFormats(formats []Format, prefix string, in *Input) error {
	for _, n := range formats {
		f, err := LookupWriter(n)
		if err != nil {
			return err
		}
		if err := f.Write(prefix, in); err != nil {
			return err
		}
	}
	return nil
}

// Write writes the format under an output prefix, creating directories.
func (f *Writer) Write(prefix string, in *Input) error {
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
