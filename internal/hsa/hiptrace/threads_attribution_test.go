package hiptrace

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// 64 threads, each on its own stream, launching through hipLaunchKernel,
// hipExtLaunchKernel and hipModuleLaunchKernel and copying with
// hipMemcpyAsync at once (testdata/apps/launch_threads.cpp): every dispatch
// names exactly one launch call, made on the dispatch's thread, and every
// copy one hipMemcpyAsync, whichever thread the runtime's intercept queue
// happened to hand the packet to the shim on (docs/hip-roctx.md). Thread t
// launches grids of 64*(1+t): a dispatch keyed to another thread's call
// shows as a thread with two grid sizes.
func TestEveryDispatchOf64ThreadsNamesItsLaunch(t *testing.T) {
	out, dir := run{app: "testdata/launch_threads",
		args:    []string{"64", "24", artifact(t, "testdata/module_kernels.co")},
		preload: true, shim: true,
		env: []string{"ROCPROF_HIP_RUNTIME_API_TRACE=1", "ROCPROF_KERNEL_TRACE=1",
			"ROCPROF_MEMORY_COPY_TRACE=1"}}.exec(t)
	require.Contains(t, out, "dispatches=1536")
	tr := readTrace(t, dir)
	require.Zero(t, tr.dropped)

	type call struct {
		name string
		tid  uint32
	}
	calls := map[uint64]call{}
	launches, memcpys := 0, 0
	for _, c := range tr.calls {
		require.NotContains(t, calls, c.CorrelationID, "correlation id %d twice", c.CorrelationID)
		calls[c.CorrelationID] = call{tr.name(c), c.TID}
		switch tr.name(c) {
		case "hipLaunchKernel", "hipExtLaunchKernel", "hipModuleLaunchKernel":
			launches++
		case "hipMemcpyAsync":
			memcpys++
		}
	}
	require.Equal(t, 1536, launches)
	require.Len(t, tr.dispatches, launches)
	require.Len(t, tr.copies, memcpys)

	grids := map[uint32]map[uint32]bool{}   // thread -> grid sizes of its dispatches
	streams := map[uint32]map[uint64]bool{} // thread -> streams of its dispatches and copies
	note := func(tid uint32, grid uint32, stream uint64) {
		if grids[tid] == nil {
			grids[tid], streams[tid] = map[uint32]bool{}, map[uint64]bool{}
		}
		if grid != 0 {
			grids[tid][grid] = true
		}
		streams[tid][stream] = true
	}
	per := map[uint64]int{}
	for _, d := range tr.dispatches {
		c, ok := calls[d.CorrelationID]
		require.True(t, ok, "dispatch %d: correlation id %d is no HIP call's", d.DispatchID, d.CorrelationID)
		require.Contains(t, []string{"hipLaunchKernel", "hipExtLaunchKernel", "hipModuleLaunchKernel"}, c.name,
			"dispatch %d (thread %d, grid %d) carries the id of a %s", d.DispatchID, d.TID, d.Grid[0], c.name)
		require.Equal(t, c.tid, d.TID, "dispatch %d: the launching thread", d.DispatchID)
		per[d.CorrelationID]++
		require.Equal(t, 1, per[d.CorrelationID], "launch %d has two dispatches", d.CorrelationID)
		note(d.TID, d.Grid[0], d.StreamID)
	}
	for _, cp := range tr.copies {
		c, ok := calls[cp.CorrelationID]
		require.True(t, ok)
		require.Equal(t, "hipMemcpyAsync", c.name)
		require.Equal(t, c.tid, cp.TID)
		per[cp.CorrelationID]++
		require.Equal(t, 1, per[cp.CorrelationID], "hipMemcpyAsync %d has two copies", cp.CorrelationID)
		note(cp.TID, 0, cp.StreamID)
	}
	require.Len(t, grids, 64, "launching threads")
	seenGrid, seenStream := map[uint32]bool{}, map[uint64]bool{}
	for tid := range grids {
		require.Len(t, grids[tid], 1, "thread %d's dispatches: one grid size (its own)", tid)
		require.Len(t, streams[tid], 1, "thread %d's dispatches and copies: one stream (its own)", tid)
		for g := range grids[tid] {
			require.False(t, seenGrid[g], "grid %d on two threads", g)
			seenGrid[g] = true
		}
		for s := range streams[tid] {
			require.False(t, seenStream[s], "stream %d on two threads", s)
			seenStream[s] = true
		}
	}
}
