// Package summary writes rocprofv3's summary tables (-S, -D,
// --summary-groups, -u) of an output file set, to the terminal or to
// --summary-output-file's <prefix>_<NAME>.txt (Target), from the shared
// statistics accumulator (model.RunStats).
package summarytables
