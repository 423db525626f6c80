package hiptrace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// A fork child writes its own spool, which must name its HIP calls by
// itself (the function-name table is written again in the child).
func TestForkChildSpoolIsSelfContained(t *testing.T) {
	out, dir := run{app: "testdata/hip_calls_fork", preload: true,
		env: []string{"ROCPROF_HIP_RUNTIME_API_TRACE=1", "ROCPROF_MARKER_API_TRACE=1"}}.exec(t)
	require.Contains(t, out, "child_exit=7")
	paths, err := filepath.Glob(filepath.Join(dir, "*.spool"))
	require.NoError(t, err)
	require.Len(t, paths, 2, "one spool per process")
	counts := map[int]int{}
	for _, p := range paths {
		sub := t.TempDir()
		require.NoError(t, os.Link(p, filepath.Join(sub, filepath.Base(p))))
		tr := readTrace(t, sub)
		n := tr.count(tracing.DomainHIPRuntime)["hipGetDevice"]
		counts[n]++
		if n == 3 { // the child: its calls, named in its own spool
			require.Len(t, tr.markers, 1)
			require.Equal(t, "child", tr.markers[0].Msg)
		} else {
			require.Empty(t, tr.markers)
		}
	}
	require.Equal(t, map[int]int{3: 1, 5: 1}, counts, "child 3 calls, parent 1 before the fork and 4 after")
}
