// Package jobgen writes a synthetic MPI job as its ranks would have left
// it: per rank, the hive-partitioned Parquet files of -f parquet
// --parquet-hive (DIR/domain=<table>/rank=<n>/host=<host>/<host>-<pid>.parquet,
// by the Parquet writer itself) and, on request, the ROCpd database of
// -o '%rank%_results' (DIR/<rank>_results.db, by the ROCpd writer). Every
// dispatch's duration is a formula (Job.Duration), so tests know the
// imbalance table's exact values and benchmarks can make 2,000 ranks.
package jobgen
