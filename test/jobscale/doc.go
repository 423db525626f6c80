// Package jobscale measures the analyses of a whole job at scale: a
// synthetic job (internal/analysis/jobgen; 2,000 ranks x 10,000 kernel
// dispatches unless ROCPROF_JOB_RANKS / ROCPROF_JOB_DISPATCHES say
// otherwise) analysed by the CLI — job --imbalance over its hive Parquet
// (DuckDB), summary, compare and convert over its ranks' ROCpd databases —
// with each command's wall time and peak RSS (the CLI's and its children's:
// wait4's rusage). docs/mpi.md has the figures.
package jobscale
