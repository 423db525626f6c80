// Package spooltest builds spool files in Go, byte for byte as the preload
// library writes them, for tests, benchmarks and fuzz seeds of the reader
// and the output writers.
package spooltest
