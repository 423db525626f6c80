package attach

import (
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
