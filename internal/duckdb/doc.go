// Package duckdb runs SQL on DuckDB, the engine that reads a job's
// hive-partitioned Parquet files (DIR/domain=<table>/rank=<n>/host=<host>/
// *.parquet) as one table: `rocprof-go job --imbalance` and whatever else
// reads a whole job at once.
//
// DuckDB is not linked into rocprof-go: it is C++, and its static library
// with GCC's libstdc++ would raise the glibc rocprof-go needs from 2.34 to
// 2.36 (and add 68 MB). It is an executable of its own, rocprof-go-duckdb
// (cmd/rocprof-go-duckdb: github.com/duckdb/duckdb-go/v2 linked fully
// statically, so it starts on any x86-64 Linux), which `make build` embeds
// gzip-compressed in the CLI (Embedded; the CLI unpacks it into its library
// cache, launch.EmbeddedTool) and installs beside it. Without an embedded
// copy Find locates one — $ROCPROF_GO_DUCKDB, then the CLI's own
// directory, then PATH — and Query runs one query in it, bounded in memory
// and threads, and decodes its rows. This package is pure Go.
package duckdb
