package rocpd

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
)

func writeROCpdFixture(t *testing.T, pids []int32, n int) string {
	in := outputtest.NewInput(t, pids, n)
	db := filepath.Join(t.TempDir(), "results.db")
	require.NoError(t, Write(db, in))
	return db
}

func TestROCpdSchemaAndMetadata(t *testing.T) {
	db := writeROCpdFixture(t, []int32{4242}, 16)
	meta := outputtest.SQLite3CLI(t, db, "SELECT tag || '=' || value FROM rocpd_metadata ORDER BY id")
	lines := strings.Split(meta, "\n")
	require.Len(t, lines, 3)
	require.Equal(t, "schema_version=3", lines[0])
	suffix := strings.TrimPrefix(lines[1], "uuid=")
	guid := strings.TrimPrefix(lines[2], "guid=")
	require.Equal(t, "_"+strings.ReplaceAll(guid, "-", "_"), suffix)
	require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, guid)

	// Every table carries the suffix and has its un-suffixed view; every
	// row has the guid.
	for _, table := range rocpdTables {
		require.Equal(t, "1", outputtest.SQLite3CLI(t, db, "SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name='"+table+suffix+"'"), table)
		require.Equal(t, "1", outputtest.SQLite3CLI(t, db, "SELECT COUNT(*) FROM sqlite_master WHERE type='view' AND name='"+table+"'"), table)
		if table != "rocpd_metadata" {
			require.Equal(t, "0", outputtest.SQLite3CLI(t, db, "SELECT COUNT(*) FROM "+table+" WHERE guid != '"+guid+"'"), table)
		}
	}
	require.Empty(t, outputtest.SQLite3CLI(t, db, "PRAGMA foreign_key_check"))
	require.Equal(t, "ok", outputtest.SQLite3CLI(t, db, "PRAGMA integrity_check"))
	require.Equal(t, "0", outputtest.SQLite3CLI(t, db, "SELECT COUNT(*) FROM sqlite_master WHERE type='index' AND name NOT LIKE 'sqlite_autoindex%'"))
}

func TestROCpdEveryViewAnswers(t *testing.T) {
	db := writeROCpdFixture(t, []int32{100, 200}, 16)
	want := outputtest.Counts(16)
	for _, v := range outputtest.ROCpdViews {
		outputtest.SQLite3CLI(t, db, "SELECT * FROM "+v)
	}
	require.Equal(t, 2*want[model.DomKernel], outputtest.SQLiteCount(t, db, "kernels"))
	require.Equal(t, 2*want[model.DomCopy], outputtest.SQLiteCount(t, db, "memory_copies"))
	require.Equal(t, 2*(want[model.DomAlloc]+want[model.DomScratch]), outputtest.SQLiteCount(t, db, "memory_allocations"))
	require.Equal(t, 2*want[model.DomScratch], outputtest.SQLiteCount(t, db, "scratch_memory"))
	require.Equal(t, 2*(want[model.DomHIP]+want[model.DomHSA]+want[model.DomMarker]), outputtest.SQLiteCount(t, db, "regions_and_samples"))
	// Marks are instants: samples, not regions.
	require.Equal(t, 2*uint64(16/2), outputtest.SQLiteCount(t, db, "samples"))
	require.Equal(t, 2*want[model.DomCounter], outputtest.SQLiteCount(t, db, "pmc_events"))
	// counters_collection sums the instances of a counter per dispatch.
	require.Equal(t, 2*want[model.DomCounter]/2, outputtest.SQLiteCount(t, db, "counters_collection"))
	require.Equal(t, "21.0", outputtest.SQLite3CLI(t, db, "SELECT value FROM counters_collection WHERE counter_name='SQ_WAVES' LIMIT 1"))
	require.Equal(t, "2", sqliteCount2(t, db, "processes"))
	require.Equal(t, "3", outputtest.SQLite3CLI(t, db, "SELECT COUNT(*) FROM kernel_summary"))
	require.Equal(t, strconv.FormatUint(2*want[model.DomKernel], 10), outputtest.SQLite3CLI(t, db, "SELECT SUM(\"Calls\") FROM kernel_summary"))
	require.Equal(t, "vectorAdd_float(float*, float const*, float const*, int)",
		outputtest.SQLite3CLI(t, db, "SELECT name FROM kernels WHERE kernel_id = 1 LIMIT 1"))
	require.Equal(t, "iteration 0", outputtest.SQLite3CLI(t, db, "SELECT json_extract(extdata, '$.message') FROM regions WHERE category = 'MARKER_CORE_RANGE_API' ORDER BY start LIMIT 1"))
	require.Equal(t, "100.0", outputtest.SQLite3CLI(t, db, "SELECT ROUND(SUM(percentage), 1) FROM top_kernels"))
}

func sqliteCount2(t *testing.T, db, from string) string {
	return outputtest.SQLite3CLI(t, db, "SELECT COUNT(*) FROM "+from)
}
