// Package outputtest holds the writers' test fixtures: a synthetic run
// with every domain and known counts per domain (Emit, Counts, WriteSpools,
// StreamSpool for the benchmarks' large spool), agent records, and small
// helpers (NewInput, TempPrefix, ReadTree). Every writer package's tests
// and the cross-format tests of internal/output share it.
package outputtest
