// Package gpudata holds the project's checked-in GPU data: the AQLprofile block
// tables per architecture (arch/*.json) and the rocprofiler-sdk counter
// definitions (counters.json), both converted from the shared reference
// material by internal/cmd/genconfigs. See README.md for provenance and schema.
// The data is embedded so that no build or run reads the shared folder.
package gpudata
