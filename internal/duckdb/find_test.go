package duckdb

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Without the engine named, beside the program or in PATH, Find says how
// to get one; a path named that is no executable is refused.
func TestFindSaysHowToGetTheEngine(t *testing.T) {
	t.Setenv(EnvVar, "")
	t.Setenv("PATH", t.TempDir())
	_, err := Find()
	require.True(t, errors.Is(err, ErrMissing), "%v", err)
	require.Contains(t, err.Error(), "does not embed the DuckDB engine")
	require.Contains(t, err.Error(), "--print-query")

	notExec := filepath.Join(t.TempDir(), Name)
	require.NoError(t, os.WriteFile(notExec, []byte("x"), 0o644))
	t.Setenv(EnvVar, notExec)
	_, err = Find()
	require.ErrorContains(t, err, "is not an executable file")

	require.NoError(t, os.Chmod(notExec, 0o755))
	p, err := Find()
	require.NoError(t, err)
	require.Equal(t, notExec, p)
}
