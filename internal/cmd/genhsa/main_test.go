package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The committed tables must be what the matrix's headers give (run
// `go generate ./internal/hsa` after a runtime changes; `make test` builds
// the matrix first).
func TestGeneratedFilesAreCurrent(t *testing.T) {
	out := t.TempDir()
	require.NoError(t, run(filepath.Join("..", "..", ".."), filepath.Join("..", "..", "..", "build"), out, out))
	for f, dir := range map[string]string{"api_table.h": "hsa", "api_names.go": "hsaapi"} {
		got, err := os.ReadFile(filepath.Join(out, f))
		require.NoError(t, err)
		want, err := os.ReadFile(filepath.Join("..", "..", dir, f))
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "%s is stale: go generate ./internal/hsa", f)
	}
}

// Table order is the ABI: ROCm 5.2.3's tables are 1016 and 400 bytes (a
// 16-byte version, then 8 bytes per function); ROCm 6 moved 32 of the AMD
// table's 48 slots by inserting two at slot 16 and three more later.
func TestTablesFollowTheHeaders(t *testing.T) {
	src, err := os.ReadFile("/usr/include/hsa/hsa_api_trace.h")
	require.NoError(t, err)
	joined := joinMembers(string(src))
	core, err := parse(joined, "CoreApiTable")
	require.NoError(t, err)
	require.Equal(t, "hsa_init", core[0])
	require.Equal(t, "hsa_agent_get_info", core[6])
	require.Equal(t, (1016-16)/8, len(core))
	amd, err := parse(joined, "AmdExtTable")
	require.NoError(t, err)
	require.Equal(t, (400-16)/8, len(amd))
	_, err = parse(joined, "NoSuchTable")
	require.Error(t, err)

	versions, err := probeMatrix(filepath.Join("..", "..", ".."), filepath.Join("..", "..", "..", "build"))
	require.NoError(t, err)
	tabs, err := merge(versions)
	require.NoError(t, err)
	var amdTab *merged
	for _, m := range tabs {
		if m.Spec.Struct == "AmdExtTable" {
			amdTab = m
		}
	}
	require.NotNil(t, amdTab)
	require.Len(t, amdTab.Layouts, 2, "majors 1 (ROCm 5.2) and 2 (ROCm 6 and 7)")
	v1, v2 := amdTab.Layouts[0].IDs, amdTab.Layouts[1].IDs
	moved := 0
	for slot, id := range v1 {
		if slot >= len(v2) || v2[slot] != id {
			moved++
		}
	}
	require.Equal(t, 32, moved)
	require.Equal(t, "hsa_amd_memory_async_copy_on_engine", amdTab.Names[amdTab.ID["hsa_amd_memory_async_copy_on_engine"]])
	require.True(t, strings.HasPrefix(amdTab.Names[0], "hsa_amd_"))
}

// The tools table: ROCm 5.2's root table (major 1) has no tools_ member;
// ROCm 6.1 and later (root major 3) keep it after the four API tables, and
// their ToolsApiTable holds the six scratch memory event callbacks.
func TestToolsTableFollowsTheHeaders(t *testing.T) {
	src, err := os.ReadFile("/usr/include/hsa/hsa_api_trace.h")
	require.NoError(t, err)
	none, err := parseTools(joinMembers(string(src)))
	require.NoError(t, err)
	require.Nil(t, none, "ROCm 5.2.3 has no tools table")

	versions, err := probeMatrix(filepath.Join("..", "..", ".."), filepath.Join("..", "..", "..", "build"))
	require.NoError(t, err)
	tools, err := mergeTools(versions)
	require.NoError(t, err)
	require.Equal(t, 0, tools.Roots[1])
	require.Equal(t, 16+4*8, tools.Roots[3], "tools_ follows core_, amd_ext_, finalizer_ext_, image_ext_")
	require.Len(t, tools.Names, 6)
	require.Equal(t, "hsa_amd_tool_scratch_event_alloc_start", tools.Names[0])
	require.Equal(t, "hsa_amd_tool_scratch_event_async_reclaim_end", tools.Names[5])
	require.Equal(t, map[string]int{"QUEUE": 8, "FLAGS": 16, "DISPATCH_ID": 24, "SIZE": 32, "NUM_SLOTS": 40}, tools.Fields)
}
