// Package pm4 owns the PM4 type-3 packet encoding that rocprof-go injects into
// AQL queues: typed opcodes and register spaces, an append-only Stream with one
// builder per packet used by the profiler, and a disassembler that turns any
// dword stream back into readable lines (for errors, trace logs and tests).
package pm4
