// Package counters owns rocprof-go's performance-counter model: the counter
// database per architecture (rocprofiler-sdk's counter_defs.yaml, converted in
// configs/gpu, plus -E extra files), agent-property constants, the parser and
// evaluator of rocprofv3's derived-counter expressions with their documented
// quirks, counter dimensions, request validation with nearest-name
// suggestions, pass planning under each block's counter limit, and the
// --list-avail listing.
package counters
