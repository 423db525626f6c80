package convert_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/convert"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdtest"
	"github.com/rocprof-go/rocprof-go/internal/output"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
)

// Issue 33: a merged Perfetto timeline named each rank's track group by
// command and pid only, so ranks were not told apart and equal pids (and
// tids) on two nodes merged into one process. Each rank is
// "rank N (host, pid)", and each node's processes keep apart.
func TestPerfettoNamesRanksAndKeepsNodesApart(t *testing.T) {
	var dbs []*rocpdread.DB
	for r, host := range []string{"node0", "node1", "node1"} {
		p := rocpdtest.Sample(r)
		// Ranks 0 and 1: pid 1000 and thread 1000 on two nodes; rank 2
		// shares rank 1's node.
		if r < 2 {
			p.PID, p.Hostname = 1000, host
			for i := range p.APICalls {
				p.APICalls[i].TID = 1000
			}
			for i := range p.Dispatches {
				p.Dispatches[i].TID = 1000
			}
			for i := range p.Markers {
				p.Markers[i].TID = 1000
			}
			for i := range p.Copies {
				p.Copies[i].TID = 1000
			}
			for i := range p.Allocs {
				p.Allocs[i].TID = 1000
			}
		}
		p.Hostname = host
		path := filepath.Join(t.TempDir(), "results.db")
		require.NoError(t, rocpdtest.Write(path, p))
		db, err := rocpdread.Open(path)
		require.NoError(t, err)
		defer db.Close()
		dbs = append(dbs, db)
	}
	dir := t.TempDir()
	_, err := convert.Run(dbs, convert.Options{Formats: []output.Format{output.FormatPerfetto}, Dir: dir, Prefix: "all"})
	require.NoError(t, err)
	trace, err := os.ReadFile(filepath.Join(dir, "all_results.pftrace"))
	require.NoError(t, err)
	s := outputtest.DecodePerfetto(t, trace)
	names := map[string]bool{}
	for _, n := range s.Processes {
		names[n] = true
	}
	require.Equal(t, map[string]bool{"rank 0 (node0, 1000)": true, "rank 1 (node1, 1000)": true, "rank 2 (node1, 1002)": true}, names)
	require.Len(t, s.Processes, 3, "three processes, whatever their pids")
	require.Equal(t, "rank 0 (node0, 1000)", s.Processes[1000], "the first node keeps its pids")
	// Each process has its own threads: no tid is in two processes (the
	// decoder checks), and three main threads are described.
	pids := map[int64]bool{}
	for _, pid := range s.Threads {
		pids[pid] = true
	}
	require.Len(t, pids, 3)
}
