package reliability

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Queue destroys are kicked against ROCr 5.2.3's lost wake-up (queue.cpp,
// kick_inactive; docs/shim.md): while the runtime destroys an intercepted
// queue, the queue's completion thread compare-and-swaps the queue's
// inactive signal with its own value every 20 ms, which wakes every thread
// asleep on the runtime's shared queue event. The hang it recovers from is a
// race (1 in ~100-200 runs of 64 threads), so this test checks the other
// half: kicking is harmless. With the test hook every destroy of hsa_queues'
// six queues is kicked every 50 us, up to the moment the runtime's destroy
// returns, and the app still ends normally with every packet checked, its
// dispatches recorded and no signal leaked. Kicking the destroyed queue's
// own inactive signal instead made this test abort in the runtime's
// IsValid(signal) assertion, 8 runs in 8.
func TestQueueDestroyKicksAreHarmless(t *testing.T) {
	t.Parallel()
	res := profiled{opts: []string{"--kernel-trace", "-f", "csv"},
		argv: []string{app(t, "hsa_queues"), "6"},
		env:  []string{"ROCPROF_GO_TEST_DESTROY_KICK_US=50"}}.run(t)
	require.Equal(t, 0, res.exit, "stderr:\n%s", res.stderr)
	require.Contains(t, res.stdout, "queues=6 packets=10 memory=ok")
	require.Contains(t, res.stderr, "rocprof-go: test: a queue destroy was kicked")
	require.NotContains(t, res.stderr, "leak", "the kick queue is destroyed at hsa_shut_down")
	out := readOutputs(t, res.dir)
	pids := out.pids("kernel_trace")
	require.Len(t, pids, 1)
	found := len(out[pids[0]]["kernel_trace"].rows)
	report(t, "exit %d; kernel_trace rows %d; %.1fs", res.exit, found, res.duration.Seconds())
	require.Positive(t, found)
}
