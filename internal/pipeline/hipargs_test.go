package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
)

// sqlite3 runs a query through the sqlite3 shell, a reader independent of
// the writer.
func sqlite3(t *testing.T, db, query string) string {
	t.Helper()
	out, err := exec.Command("sqlite3", "-bail", db, query).CombinedOutput()
	require.NoError(t, err, "sqlite3 %q: %s", query, out)
	return strings.TrimSpace(string(out))
}

// TestHIPArgumentsInEveryFormat: multistream's HIP calls (4 streams, 8
// rounds of 4 hipMemcpyAsync and 2 kernel launches each) are written with
// their arguments wherever rocprofv3 shows them: ROCpd's rocpd_arg and its
// region_args / stream_args views, JSON's hip_api records, Perfetto's HIP
// slices. Before, rocpd_arg had no rows and neither JSON nor Perfetto had
// any argument.
func TestHIPArgumentsInEveryFormat(t *testing.T) {
	t.Setenv(launch.LibDirEnv, builtLibDir(t))
	app := sampleApp(t, "multistream")
	out := t.TempDir()
	res, err := Run(context.Background(), Options{Stdout: &bytes.Buffer{}, Args: []string{"--virtual-gpu",
		"--hip-trace", "--kernel-trace", "--memory-copy-trace", "-f", "rocpd", "json", "pftrace",
		"-d", out, "-o", "run"}}, []string{app})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus)

	db := filepath.Join(out, "run_results.db")
	// Every HIP region with parameters has its arguments, positions from 0.
	require.Equal(t, "0", sqlite3(t, db, `SELECT COUNT(*) FROM regions r WHERE r.name = 'hipMemcpyAsync'
		AND (SELECT COUNT(*) FROM rocpd_arg a WHERE a.event_id = r.event_id) != 5`))
	require.Equal(t, "128", sqlite3(t, db, `SELECT COUNT(*) FROM regions WHERE name = 'hipMemcpyAsync'`))
	require.Equal(t, "0|dst|void*\n1|src|const void*\n2|sizeBytes|size_t\n3|kind|hipMemcpyKind\n4|stream|hipStream_t",
		sqlite3(t, db, `SELECT a.position, a.name, a.type FROM rocpd_arg a
			WHERE a.event_id = (SELECT MIN(event_id) FROM regions WHERE name = 'hipMemcpyAsync') ORDER BY a.position`))
	// multistream copies 65536 floats each time; kinds 1 (H2D), 3 (D2D), 2 (D2H).
	require.Equal(t, "262144|128", sqlite3(t, db, `SELECT a.value, COUNT(*) FROM region_args a WHERE a.name = 'sizeBytes' GROUP BY a.value`))
	require.Equal(t, "1|64\n2|32\n3|32", sqlite3(t, db, `SELECT value, COUNT(*) FROM events_args e JOIN rocpd_arg a ON a.event_id = e.event_id
		WHERE e.arg_name = 'kind' AND a.name = 'kind' AND e.category = 'HIP_RUNTIME_API_EXT' GROUP BY value ORDER BY value`))

	// stream_args: each stream argument names the stream its call's
	// dispatches and copies ran on (the same correlation id).
	launches := sqlite3(t, db, `SELECT COUNT(*) FROM stream_args s JOIN rocpd_event e ON e.id = s.event_id
		JOIN kernels k ON k.stack_id = e.stack_id WHERE k.stream_id = s.stream_id`)
	// 64 launches, and the 32 device-to-device hipMemcpyAsync HIP runs as a
	// blit kernel.
	require.Equal(t, "96", launches, "every launch's stream argument names its dispatch's stream")
	copies := sqlite3(t, db, `SELECT COUNT(*) FROM stream_args s JOIN rocpd_event e ON e.id = s.event_id
		JOIN memory_copies m ON m.stack_id = e.stack_id WHERE m.stream_id = s.stream_id`)
	require.Equal(t, "96", copies, "the host-to-device and device-to-host copies")
	require.Equal(t, "0", sqlite3(t, db, `SELECT COUNT(*) FROM stream_args s JOIN rocpd_event e ON e.id = s.event_id
		JOIN kernels k ON k.stack_id = e.stack_id WHERE k.stream_id != s.stream_id`))
	require.Equal(t, "Stream 1\nStream 2\nStream 3\nStream 4",
		sqlite3(t, db, `SELECT DISTINCT stream_name FROM stream_args ORDER BY stream_name`))

	// JSON: hip_api records carry "args" (type, name, value).
	raw, err := os.ReadFile(filepath.Join(out, "run_results.json"))
	require.NoError(t, err)
	var doc struct {
		Tool []struct {
			Strings struct {
				BufferRecords []struct {
					Kind       string   `json:"kind"`
					Operations []string `json:"operations"`
				} `json:"buffer_records"`
			} `json:"strings"`
			BufferRecords struct {
				HIP []struct {
					Kind      int `json:"kind"`
					Operation int `json:"operation"`
					Args      []struct {
						Type, Name, Value string
					} `json:"args"`
				} `json:"hip_api"`
			} `json:"buffer_records"`
		} `json:"rocprofiler-sdk-tool"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	require.Len(t, doc.Tool, 1)
	proc := doc.Tool[0]
	ops := proc.Strings.BufferRecords[21].Operations // HIP_RUNTIME_API_EXT
	memcpys := 0
	for _, r := range proc.BufferRecords.HIP {
		if r.Kind != 21 || ops[r.Operation] != "hipMemcpyAsync" {
			continue
		}
		memcpys++
		require.Len(t, r.Args, 5)
		require.Equal(t, "sizeBytes", r.Args[2].Name)
		require.Equal(t, "size_t", r.Args[2].Type)
		require.Equal(t, "262144", r.Args[2].Value)
		require.Equal(t, "hipStream_t", r.Args[4].Type)
		require.Regexp(t, "^0x[0-9a-f]+$", r.Args[4].Value)
	}
	require.Equal(t, 128, memcpys)

	// Perfetto: the arguments are slice annotations; hipMemcpy's kind
	// stands beside the slice's own "kind" as arg_kind.
	trace, err := os.ReadFile(filepath.Join(out, "run_results.pftrace"))
	require.NoError(t, err)
	for _, name := range []string{"sizeBytes", "arg_kind", "stream", "numBlocks", "dimBlocks"} {
		require.True(t, bytes.Contains(trace, []byte(name)), "annotation %s", name)
	}
}
