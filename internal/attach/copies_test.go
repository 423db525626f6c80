package attach

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// The agent's account of the memory copies ("copies <pid> ..." before
// "detached", attach_copy.c): the classes of the lost and the copies still
// running at the detach.
func TestParseCopiesAccount(t *testing.T) {
	pid, acc, ok := parseAccount("copies 42 lost=3 running_at_detach=1 unstamped=2 reused=1", "copies")
	require.True(t, ok)
	require.Equal(t, 42, pid)
	require.Equal(t, map[string]uint64{"lost": 3, "running_at_detach": 1, "unstamped": 2, "reused": 1}, acc)
	for _, l := range []string{"copies", "copies x lost=1", "copies 42 lost", "copies 42 lost=-1", "detached 42 1 0 0"} {
		_, _, ok := parseAccount(l, "copies")
		require.False(t, ok, l)
	}
}

// Copies of the window the agent could not time fail the run (LostError,
// which the pipeline returns), named by class; those still running at the
// detach are the window's edge, no loss.
func TestCopiesLostFailTheRun(t *testing.T) {
	rep := &Report{Processes: []Process{{PID: 7, CopiesLost: 3, CopiesLostWhy: map[string]uint64{"reused": 1, "unstamped": 2}}}}
	err := rep.LostError()
	var ce *CopiesLostError
	require.ErrorAs(t, err, &ce)
	require.EqualError(t, err, "3 memory copies submitted while attached could not be timed (PID 7: 1 their completion signal reset by the app before it was read, "+
		"2 completed without timestamps): no record was made up for them; run.json counts them in attach.processes[].copies_lost and copies_lost_why")
	var de *DispatchesLostError
	require.False(t, errors.As(err, &de), "no dispatch was lost")
	rep.Processes = append(rep.Processes, Process{PID: 8, DispatchesLost: 1})
	err = rep.LostError()
	require.ErrorAs(t, err, &ce)
	require.ErrorAs(t, err, &de)
	require.Equal(t, []int{8}, []int{de.Processes[0].PID})
	require.NoError(t, (&Report{Processes: []Process{{PID: 1, CopiesRunningAtDetach: 2}}}).LostError(), "the edge is no loss")
}
