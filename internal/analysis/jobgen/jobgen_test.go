package jobgen

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWriteSmallJob writes ROCPROF_JOBGEN_DIR's job when it is set (a
// manual aid); otherwise a 2-rank job with both outputs.
func TestWriteSmallJob(t *testing.T) {
	dir := os.Getenv("ROCPROF_JOBGEN_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	require.NoError(t, Write(dir, Job{Ranks: 2, Dispatches: 100, Kernels: 4, SlowRank: 1, SlowNs: 1000, Parquet: true, ROCpd: true}))
	require.FileExists(t, dir+"/domain=kernels/rank=1/host=node0/node0-10001.parquet")
	require.FileExists(t, dir+"/1_results.db")
}
