package duckdb

import (
	"runtime"
	"strconv"
)

// Options bound the engine. Zero values take the defaults.
type Options struct {
	// MemoryLimitMiB caps DuckDB's buffer manager (default 512): beyond it
	// DuckDB spills aggregations to TempDir instead of growing.
	MemoryLimitMiB int
	// Threads is DuckDB's worker threads (default: GOMAXPROCS, at most 4:
	// every thread holds its own buffers).
	Threads int
	// TempDir is where DuckDB spills (default: DuckDB's own, .tmp in the
	// working directory, created only when it spills).
	TempDir string
	// Engine is the engine's path (the CLI's embedded one, unpacked);
	// "" finds it (Find).
	Engine string
	// Dir is the engine's working directory, where the query's relative
	// paths start ("": the caller's). A query over a directory's files
	// names them relative to it, so that no character of the directory's
	// path (`[`, `*`, `\`) is read as part of a glob pattern.
	Dir string
}

// DefaultMemoryLimitMiB is DuckDB's memory limit unless Options say.
const DefaultMemoryLimitMiB = 512

// Args are the companion's options for o (before the queries).
func (o Options) Args() []string {
	mem := o.MemoryLimitMiB
	if mem <= 0 {
		mem = DefaultMemoryLimitMiB
	}
	threads := o.Threads
	if threads <= 0 {
		threads = min(runtime.GOMAXPROCS(0), 4)
	}
	args := []string{"-memory-limit-mib", strconv.Itoa(mem), "-threads", strconv.Itoa(threads)}
	if o.TempDir != "" {
		args = append(args, "-temp-dir", o.TempDir)
	}
	return args
}
