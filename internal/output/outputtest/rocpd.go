package outputtest

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// SQLite3CLI runs a query through the sqlite3 command-line shell, an
// independent reader of the database.
func SQLite3CLI(t *testing.T, db, query string) string {
	t.Helper()
	out, err := exec.Command("sqlite3", "-bail", db, query).CombinedOutput()
	require.NoError(t, err, "sqlite3 %q: %s", query, out)
	return strings.TrimSpace(string(out))
}

// SQLiteCount counts the rows of a table or view with the sqlite3 shell.
func SQLiteCount(t *testing.T, db, from string) uint64 {
	n, err := strconv.ParseUint(SQLite3CLI(t, db, "SELECT COUNT(*) FROM "+from), 10, 64)
	require.NoError(t, err)
	return n
}

// ROCpdViews is every view the schema stores.
var ROCpdViews = []string{"code_objects", "kernel_symbols", "processes", "threads", "regions",
	"region_args", "samples", "sample_regions", "regions_and_samples", "kernels", "pmc_info",
	"pmc_events", "events_args", "stream_args", "memory_copies", "memory_allocations",
	"scratch_memory", "counters_collection", "top_kernels", "busy", "top", "kernel_summary",
	"kernel_summary_region", "memory_copy_summary", "memory_allocation_summary"}
