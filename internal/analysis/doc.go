// Package analysis turns stored runs into answers without re-running the
// app: it reads ROCpd databases and rocprof-go/rocprofv3 CSV output
// directories as one stream of timed events (kernels, API calls, markers,
// copies, allocations), and accumulates per-name statistics in bounded
// memory. The summary and compare sub-packages build on it; rocpd reads
// and merges databases.
package analysis
