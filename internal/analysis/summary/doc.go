// Package summary computes rocprof-go summary's tables from stored runs:
// the top kernels, one table per domain (kernels, HIP/HSA API, markers,
// copies, allocations), the domain totals, and optionally the same per rank
// or process. It reads ROCpd databases or CSV output directories in one
// streaming pass, keeping only per-name accumulators.
package summary
