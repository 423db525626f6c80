// Package aql owns everything rocprof-go injects into an AQL queue to drive the
// hardware profiler, byte-identical to AMD's AQLprofile (v2 API): the per-
// architecture block tables (loaded from configs/gpu), agent descriptions,
// PMC start/stop/read command buffers, SQTT start/stop and code-object marker
// buffers, the 64-byte vendor AQL packets that point at them, and the decoding
// of the PMC output buffer into (event, dimension coordinates, value) in
// AQLprofile's iteration order. PM4 encoding itself lives in package pm4.
package aql
