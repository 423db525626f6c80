package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The committed wrapper lists must be what the installed header gives
// (run `go generate ./internal/hsa` after a runtime upgrade).
func TestGeneratedFilesAreCurrent(t *testing.T) {
	out := t.TempDir()
	require.NoError(t, run("/usr/include/hsa/hsa_api_trace.h", out))
	for _, f := range []string{"api_table.h", "api_names.go"} {
		got, err := os.ReadFile(filepath.Join(out, f))
		require.NoError(t, err)
		want, err := os.ReadFile(filepath.Join("..", "..", "hsa", f))
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "%s is stale", f)
	}
}

// Table order is the ABI: ids are slot indexes, and the sizes must match
// what ROCR 5.2.3 reports in minor_id (1016 and 400 bytes: 16-byte version
// plus 8 bytes per function).
func TestTablesFollowTheHeader(t *testing.T) {
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
}
