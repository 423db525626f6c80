// Package output turns the spools of a finished run into rocprofv3's output
// files: CSV (Write, the csv_*.go files: one <prefix>_<domain>.csv per traced
// domain with rocprofv3's exact names, columns and number formatting,
// agent_info.csv, and the --stats files), and the formats of the Formats
// registry (JSON, Perfetto, OTF2, Parquet, ROCpd). Records are streamed from
// the spools process by process; only per-process metadata (strings, kernel
// symbols, agents, counter sums) and statistics accumulators stay in memory.
package output
