// Package csv writes rocprofv3's CSV files (-f csv) of an output file set:
// one <prefix>_<domain>.csv per traced domain with rocprofv3's exact names,
// columns (columns.go) and number formatting (file.go), agent_info.csv, and
// with --stats the *_stats.csv and domain_stats.csv files (WriteGroup); the
// rows are formatted on several goroutines and written in spool order
// (pipeline.go). It also writes rocprof v1's results.csv and stats files
// for -o NAME.csv runs (WriteV1, v1.go).
package csv
