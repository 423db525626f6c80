package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdtest"
)

func rankDBs(t *testing.T, n int) []string {
	t.Helper()
	dir := t.TempDir()
	var out []string
	for r := 0; r < n; r++ {
		p := filepath.Join(dir, fmt.Sprintf("rank%d.db", r))
		require.NoError(t, rocpdtest.Write(p, rocpdtest.Sample(r)))
		out = append(out, p)
	}
	return out
}
