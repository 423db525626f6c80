package reliability

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The completion thread's lost wake-up (issue #5). A dispatch callback that
// finds the completion FIFO non-empty does not wake the completion thread
// (its timed poll will find the new entry); if the thread drains the FIFO and
// goes to sleep-until-woken between that decision and the entry being
// published, the entry used to wait for the exit-time drain — and was lost to
// a SIGKILL. hsa_late_wakeup makes that interleaving happen every time: its
// first packet, a barrier on a signal the app holds, keeps the FIFO non-empty
// when the dispatches are submitted; the shim's test hook
// (ROCPROF_GO_TEST_PUBLISH_DELAY_US, queue.cpp) holds each callback between
// the decision and the publication while a helper thread releases the
// barrier; the app then waits 2.5 s (the deadline) and kills itself with
// SIGKILL, which skips the drain. Every dispatch must be in the output: the
// completion thread recorded them while the app was alive. With the fix
// reverted (sleeping state 1 and `if (need_wake) wake(q)`), none is.
func TestCompletionThreadWakesForEntriesPublishedWhileItSleeps(t *testing.T) {
	t.Parallel()
	res := profiled{opts: []string{"--kernel-trace", "-f", "csv"},
		argv: []string{app(t, "hsa_late_wakeup"), "3", "50", "2500"},
		env:  []string{"ROCPROF_GO_TEST_PUBLISH_DELAY_US=300000"}}.run(t)
	require.Equal(t, 137, res.exit, "the app kills itself with SIGKILL; stderr:\n%s", res.stderr)
	want := intField(t, res.stdout, "dispatches")
	require.Equal(t, 3, want)
	out := readOutputs(t, res.dir)
	found := 0
	if pids := out.pids("kernel_trace"); len(pids) == 1 {
		found = len(out[pids[0]]["kernel_trace"].rows)
	}
	report(t, "exit %d; dispatches recorded before the SIGKILL: expected %d, found %d; %.1fs",
		res.exit, want, found, res.duration.Seconds())
	require.Equal(t, want, found, "dispatches the completion thread recorded while the app was alive")
}
