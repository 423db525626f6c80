// Package faultguard makes a spool cut short while it is read harmless to
// the reader: a SIGBUS inside a spool's mapping (its file truncated by its
// owner, or by whoever else could write it) replaces the rest of the
// mapping with zero pages, which read as no records, and the reader then
// reports the spool torn (tracing.TornSpoolError) instead of the Go
// runtime dying of the fault. Any other SIGBUS goes on to Go's handler.
//
// It is C (a signal handler in front of Go's), so it lives here rather
// than in internal/tracing, which stays pure Go: linking this package
// registers the guard with tracing (SetMappingGuard) from its init. The
// CLI and pkg/rocprof link it; a program that reads spools without it,
// or a build without cgo, faults on a truncated spool as before.
package faultguard
