// Package model is what every output writer shares, and imports no writer:
//
//   - the configuration: Config (config.go), which the orchestration
//     (internal/pipeline, convert) fills through internal/output, the file
//     and result types, Input (one output file set) and FileSystem;
//   - the domain table (domains.go): each domain's record kind and every
//     name it has in every format;
//   - the per-spool catalogue (Catalogue, process.go): strings, function
//     names, agents and their labels, kernel symbols (demangled once),
//     counters, host functions, read once per spool with only what the
//     requested writers need (Needs), by Scan;
//   - rocprofv3's record order and correlation-id renumbering (order.go:
//     SpoolView reads a spool in that order), --kernel-rename's ranges
//     (rename.go) and HIP call arguments and stream numbers (hipargs.go);
//   - the one statistics accumulator (stats.go) of the stats files, the
//     summaries and JSON's summary block.
package model
