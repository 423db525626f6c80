// Package output turns the spools of a finished run into rocprofv3's output
// files. It owns, once each:
//
//   - the orchestration: Write (write.go) groups the spools by resolved
//     output prefix once, reads each spool's catalogue once (with what the
//     requested writers need) and hands every group and its catalogues to
//     every requested writer at a destination it chooses; the writers
//     choose no paths;
//   - the format registry: Writers (formats.go), which the CLI's -f
//     validation and help text read;
//   - the entry point of the shared model (internal/output/model: Config,
//     the catalogue, the domain table, the record order, the statistics),
//     whose types it re-exports (model_aliases.go); output knows no
//     command-line options.
//
// The writers: CSV (csv_*.go: one <prefix>_<domain>.csv per traced domain
// with rocprofv3's exact names, columns and number formatting,
// agent_info.csv, the --stats files), rocprof v1's results.csv (v1_csv.go),
// the summaries, JSON, Perfetto, OTF2 (cgo), ROCpd (cgo SQLite) and Parquet.
// Records are streamed from the spools process by process; only the
// catalogues and statistics accumulators stay in memory.
//
// Every file is created through internal/atomicfile: under a temporary name
// beside its final one, renamed onto it only when completely written and
// closed (FileSystem.Create returns an OutputFile to Commit or Abort; the
// ROCpd database, OTF2 archives and Parquet files do the same themselves).
// A failed output leaves nothing under its name and never follows a symlink.
package output
