package vgpu

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The thunk's events behave like KFD's: a set releases every current waiter,
// a set with no waiter stays pending once, wait-any/all and manual reset work.
func TestKFDEventSemantics(t *testing.T) {
	r := run(t, time.Minute, nil, artefact(t, "vgpu-tests/kfd_events"))
	require.Equalf(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	require.Equal(t, "ok broadcast\nok pending\nok any-all\nok manual\n", r.stdout)
}

// Queue teardown has two ROCR threads wait on one event; with single-consumer
// events it deadlocked about once in twenty runs. Repeat it.
func TestQueueTeardownRepeated(t *testing.T) {
	bin := artefact(t, "testdata/hsa_queues")
	for i := 0; i < 15; i++ {
		r := run(t, 30*time.Second, nil, bin, "6")
		require.Equalf(t, 0, r.code, "run %d: %s", i, r.stderr)
	}
}
