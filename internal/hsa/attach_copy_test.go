package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/internal/toolenv"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// Memory copies while attached (attach_copy.c) on every runtime of the
// matrix: attach_hsa attached with --memory-copy-trace copies 4 KiB between
// two GPU buffers 5 times, each on its own signal reset by a store and
// waited: 5 records, device to device, 4096 bytes, timed within the attach
// and on the app's thread. Then a copy held back by a dependency whose
// completion signal the app resets while the copy is pending (reusing a
// signal too early): the agent cannot tell its times from those of a later
// use, so the copy is not recorded but counted lost, by class ("copies
// <pid> lost=1 running_at_detach=0 reused=1", the "detached" line's last
// field 1). The app's copies still complete and it exits cleanly; a copy
// after the detach is not recorded.
func TestAttachRecordsCopiesOnTheAppsSignal(t *testing.T) {
	attachOnEveryRuntime(t, func(t *testing.T, ctx context.Context, rt rocmmatrix.Runtime) {
		from := boottimeNs(t)
		a := startAttachedConf(t, ctx, rt, []string{toolenv.MemoryCopyTrace + "=1"})
		a.do("copy 5", "copied 5")
		a.do("copyreset", "copyreset")
		to := boottimeNs(t)

		_, err := io.WriteString(a.sock, "detach\n")
		require.NoError(t, err)
		var account, detached string
		for l := a.sockLine(); ; l = a.sockLine() {
			if strings.HasPrefix(l, "copies ") {
				account = l
			}
			if strings.HasPrefix(l, "detached ") || strings.HasPrefix(l, "error") {
				detached = l
				break
			}
		}
		t.Logf("%s; %s", account, detached)
		require.Equal(t, fmt.Sprintf("copies %d lost=1 running_at_detach=0 reused=1", a.pid), account)
		var pid, restored int
		var lost, copiesLost uint64
		_, err = fmt.Sscanf(detached, "detached %d %d %d %d", &pid, &restored, &lost, &copiesLost)
		require.NoError(t, err, "%q", detached)
		require.Equal(t, uint64(1), copiesLost, "%q", detached)

		a.do("copy 2", "copied 2") // after the detach: not recorded
		a.do("quit", "bye")
		require.NoError(t, a.wait())

		rs := readSpools(t, a.spools)
		require.Len(t, rs.copies, 5, "the 5 copies of the window; the reset one counted lost, not recorded")
		for i, c := range rs.copies {
			require.Equal(t, tracing.CopyDeviceToDevice, c.Direction, "copy %d", i)
			require.Equal(t, uint64(4096), c.Bytes, "copy %d", i)
			require.Equal(t, c.SrcAgentNode, c.DstAgentNode, "copy %d: within the GPU", i)
			require.NotZero(t, c.SrcAgentNode, "copy %d: the GPU's node, not the CPU's", i)
			require.Equal(t, uint32(a.pid), c.TID, "copy %d: on the app's main thread", i)
			require.True(t, from <= c.Start && c.Start <= c.End && c.End <= to,
				"copy %d: [%d, %d] within the attach [%d, %d]", i, c.Start, c.End, from, to)
		}
	})
}

func boottimeNs(t *testing.T) uint64 {
	var ts unix.Timespec
	require.NoError(t, unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts))
	return uint64(ts.Sec)*1e9 + uint64(ts.Nsec)
}

// The async-copy profiling switch (attach_copy.c's header), on every
// runtime: the runtime has no call that reads it, so the attach keeps it on
// while attached whatever the app asks, puts back the app's last wish at the
// detach, and leaves it on when the app asked nothing. Seen from the app:
// hsa_amd_profiling_get_async_copy_time of a new copy is 0 when the copy was
// not stamped.
func TestAttachPutsBackTheAppsCopyProfilingSwitch(t *testing.T) {
	attachOnEveryRuntime(t, func(t *testing.T, ctx context.Context, rt rocmmatrix.Runtime) {
		conf := []string{toolenv.MemoryCopyTrace + "=1"}
		a := startAttachedConf(t, ctx, rt, conf)
		stamped := func() bool {
			_, err := io.WriteString(a.in, "copytime\n")
			require.NoError(t, err)
			var d uint64
			_, err = fmt.Sscanf(a.line(), "copytime %d", &d)
			require.NoError(t, err)
			return d > 0
		}
		require.True(t, stamped(), "attached: copies are stamped")
		a.do("copyprof 0", "copyprof 0")
		require.True(t, stamped(), "attached, the app switched it off: still stamped")
		require.Zero(t, a.detach())
		require.False(t, stamped(), "after the detach: the app's last wish (off)")

		// Attached again, the app asking nothing: left on.
		require.Eventually(t, func() bool { return !mapped(a.pid) }, 10*time.Second, 5*time.Millisecond)
		a.writeConf("spools2")
		_, err := io.WriteString(a.in, "attach\n")
		require.NoError(t, err)
		a.connected()
		require.True(t, stamped(), "attached again: stamped")
		require.Zero(t, a.detach())
		require.True(t, stamped(), "after a detach with no call of the app's: left on (docs/attach.md)")
		a.do("quit", "bye")
		require.NoError(t, a.wait())
		require.Len(t, readSpools(t, a.spools).copies, 1, "the second window's copy")
	})
}

// mapped says whether the preload library is in pid's mappings.
func mapped(pid int) bool {
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	return err != nil || strings.Contains(string(maps), "librocprof-go-preload.so")
}
