// Command rocprof-go-duckdb is rocprof-go's DuckDB engine, a companion
// executable (internal/duckdb explains why it is not linked into the CLI):
// it runs each SQL query given as an argument in an in-memory DuckDB and
// prints its rows, with -json one JSON array per row (what internal/duckdb
// reads), else tab-separated columns with NULL as "NULL".
//
//	rocprof-go-duckdb [-memory-limit-mib 512] [-threads N] [-temp-dir DIR] [-json] [--] QUERY...
//
// DuckDB (github.com/duckdb/duckdb-go/v2 and its prebuilt static library)
// is linked fully statically (`make build`: -extldflags -static, the netgo
// and osusergo tags), so it needs no shared library at all. Extensions are
// never downloaded: the Parquet and JSON readers are built in. Without cgo
// it only says that it needs cgo.
package main
