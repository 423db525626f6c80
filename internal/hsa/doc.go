// Command hsa is the cgo HSA shim, built with -buildmode=c-shared into
// librocprof-go-shim.so and named in HSA_TOOLS_LIB: the HSA runtime loads it
// during hsa_init and calls OnLoad.
//
// It owns the interception of the HSA API tables (API tracing for the core,
// AMD, image and finalizer tables), kernel dispatch tracing through
// intercepted queues, memory copy and allocation tracing, agent records, and
// the code-object/kernel symbol table. It owns no spool state: every record
// goes through the recorder of the preload library (internal/hsa/preload),
// which is always loaded first.
//
// It is split by domain, one file each: onload.cpp is the set-up sequence
// only; tables.cpp the runtime's API tables and their tracers; agents.cpp
// the agents and pools every other part looks up (agentinfo.c their
// records, shared with attach mode's preload/attach_hsa.c); queue.cpp intercepted
// queues and dispatch records; activity.cpp copies and allocations;
// scratch.cpp scratch events; symbols.cpp code objects; pmc.cpp/pmc.go
// counter collection and att.go thread trace; crash.cpp fatal signals.
// What is pure Go lives outside, importable and testable without cgo: the
// requests the shim reads from the environment (internal/hsa/request), the
// packets (internal/aql), the counter database and the per-dispatch sample
// map (internal/counters).
//
// Per-event work is C/C++. Go runs only at set-up, when an executable is
// frozen or destroyed, and per counted dispatch on the completion thread;
// every C->Go call is guarded by "Go is ready in this pid" (guard.c).
//
// The API-table layouts are generated from the hsa_api_trace.h of every
// runtime of the ROCm matrix (the host's and the roots of make rocm-roots).
//
//go:generate go run ../cmd/genhsa -out . -goout ../hsaapi
package main
