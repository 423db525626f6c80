// Package options models rocprofv3's option surface: the resolved run
// configuration, [BOOL] option semantics, aggregate tracing options, rocprofv3 input
// files (.txt pmc lines, YAML/JSON jobs) merged with the command line, and the
// ROCPROF_* environment handed to the injected libraries.
package options
