// Package output turns the spools of a finished run into rocprofv3's output
// files: CSV (Write, the csv_*.go files: one <prefix>_<domain>.csv per traced
// domain with rocprofv3's exact names, columns and number formatting,
// agent_info.csv, and the --stats files), and the formats of the Formats
// registry (JSON, Perfetto, OTF2, Parquet, ROCpd). Records are streamed from
// the spools process by process; only per-process metadata (strings, kernel
// symbols, agents, counter sums) and statistics accumulators stay in memory.
//
// Every file is created through internal/atomicfile: under a temporary name
// beside its final one, renamed onto it only when completely written and
// closed (FileSystem.Create returns an OutputFile to Commit or Abort; the
// ROCpd database, OTF2 archives and Parquet files do the same themselves).
// A failed output leaves nothing under its name and never follows a symlink.
package output
