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
// The writers, one package each, import the model and no other writer:
// csv (rocprofv3's CSV files and --stats files, rocprof v1's results.csv),
// json, perfetto, otf2 (cgo), rocpd (cgo SQLite), parquet and summary.
// Write gives each its destination (a path or prefix, or standard output
// for -o stdout); records are streamed from the spools process by
// process, and only the catalogues and statistics accumulators stay in
// memory. The cross-format tests (every format of one run agrees, a new
// domain reaches every writer: rccl_test.go) are here; the fixtures they
// share with the writers' own tests are in outputtest.
//
// Every file is created through internal/atomicfile: under a temporary name
// beside its final one, renamed onto it only when completely written and
// closed (FileSystem.Create returns an OutputFile to Commit or Abort; the
// ROCpd database, OTF2 archives and Parquet files do the same themselves).
// A failed output leaves nothing under its name and never follows a symlink.
package output
