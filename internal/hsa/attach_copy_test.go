package main

import (
	"context"
	"fmt"
	"io"
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
	rts, err := rocmmatrix.Ready(repoRoot(t), buildDir(t))
	require.NoError(t, err)
	for _, rt := range rts {
		t.Run(rt.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
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
}

func boottimeNs(t *testing.T) uint64 {
	var ts unix.Timespec
	require.NoError(t, unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts))
	return uint64(ts.Sec)*1e9 + uint64(ts.Nsec)
}
