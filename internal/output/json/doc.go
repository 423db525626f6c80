// Package json writes rocprofv3's results.json (-f json) of an output file
// set: one "rocprofiler-sdk-tool" element per process, with its metadata,
// agents, kernel symbols, host functions, strings, buffer records in
// rocprofv3's order and, with --stats, its summary block; records are
// streamed from the spools, one filtered pass per buffer kind.
package json
