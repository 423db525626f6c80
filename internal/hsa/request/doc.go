// Package request reads what the CLI asks a profiled process's shim for,
// from the environment it composed (internal/options/env.go): the counter
// groups and kernel filters of --pmc / pmc: lines, and the thread-trace
// parameters of --att. Pure Go, so it is tested without cgo; the shim
// (internal/hsa) acts on it.
package request
