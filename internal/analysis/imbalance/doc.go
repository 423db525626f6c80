// Package imbalance is the cross-rank imbalance table of a job (rocprof-go
// job --imbalance DIR): per kernel and launch shape (grid, workgroup), the
// dispatches, the ranks that ran it, the minimum, median and maximum of the
// per-rank total time, the slowest rank and the max/median ratio.
//
// It reads the job's hive-partitioned Parquet kernel table
// (DIR/domain=kernels/rank=<n>/host=<host>/*.parquet, what every rank
// writes with -f parquet --parquet-hive -d DIR) with the embedded DuckDB
// (internal/duckdb), in one SQL query (Query), which the docs show for
// DuckDB, Spark or Trino to run on the same files. Memory is DuckDB's
// bounded buffer manager plus one row per kernel shape, whatever the ranks.
package imbalance
