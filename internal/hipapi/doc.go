// Package hipapi describes the HIP API as the preload library traces it:
// each function's name by the preload library's function id (one id space
// for the runtime and compiler domains), its parameters, and the decoding of
// the argument blob a traced call records (DecodeArgs). The tables are
// generated from the HIP headers and libraries of every HIP release of the
// ROCm matrix by internal/cmd/genhip, with the preload library's wrappers.
//
// Importing the package registers the names with internal/tracing, so that
// outputs name HIP calls even from spools whose name records were lost.
package hipapi

//go:generate go run ../cmd/genhip -out ../hsa/preload -go functions_gen.go
