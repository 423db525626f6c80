// Package summary computes rocprof-go summary's tables from stored runs:
// the top kernels, one table per domain (kernels, HIP/HSA API, markers,
// copies, allocations), the domain totals, and optionally the same per rank
// or process; for ROCpd inputs with counters, a counter table per kernel.
// It reads ROCpd databases or CSV output directories in one streaming pass,
// keeping only per-name accumulators, and renders durations in rocprofv3's
// summary units (sec, msec, usec, nsec).
package summary
