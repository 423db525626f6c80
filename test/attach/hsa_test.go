package attachtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAttachRecordsHSACalls: attach_server (1 lane) started plainly,
// attached 2.5 s with --hsa-trace --kernel-trace --hip-trace on every
// runtime, through the runtime's own HSA API table (docs/attach.md, "HSA API
// calls, allocations and scratch memory"). The window's HSA calls are
// hsa_api_trace.csv rows as in a launched run (HSA_CORE_API and
// HSA_AMD_EXT_API, every row timed within the window): a doorbell store and
// a write-index reservation per kernel at least (HIP's submissions go through
// the table), HIP's signal waits; the detach gives every table slot back
// (run.json's slots_restored counts them beside the GOT slots), leaves the
// process as it was, and the server's output is that of a run nobody
// attached to.
func TestAttachRecordsHSACalls(t *testing.T) {
	for _, rt := range runtimes(t) {
		t.Run("rocm"+rt.Name, func(t *testing.T) {
			h := newHarness(t, rt)
			app := []string{filepath.Join(rt.Apps, "attach_server"), "--threads", "1"}
			wantOut, wantErr := h.reference(t, app...)

			s := h.start(t, app...)
			before := states(t, s.pids())
			out := filepath.Join(h.tmp, "out")
			r := h.attach(t, "--attach", strconv.Itoa(s.pid), "--attach-duration-msec", strconv.Itoa(window),
				"--hsa-trace", "--kernel-trace", "--hip-trace", "-d", out, "-o", "hsa", "-f", "csv")
			r.succeeded(t, "the attach")
			detached(t, before)

			var run struct {
				Attach struct {
					Processes []struct {
						SlotsRestored int `json:"slots_restored"`
					} `json:"processes"`
				} `json:"attach"`
			}
			b, err := os.ReadFile(filepath.Join(out, "run.json"))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &run))
			require.Len(t, run.Attach.Processes, 1)
			// The core table's 125 slots and the AMD table's 48 (5.2) to 76
			// (7.2), beside the GOT slots.
			require.Greater(t, run.Attach.Processes[0].SlotsRestored, 125+48, "run.json's slots_restored")

			hsa := readCSV(t, filepath.Join(out, "hsa_hsa_api_trace.csv"))
			kernels := readCSV(t, filepath.Join(out, "hsa_kernel_trace.csv"))
			domains := map[string]int{}
			for _, d := range hsa.col(t, "Domain") {
				domains[d]++
			}
			t.Logf("%d HSA calls (%v), %d kernels", len(hsa.rows), domains, len(kernels.rows))
			require.Equal(t, len(hsa.rows), domains["HSA_CORE_API"]+domains["HSA_AMD_EXT_API"], "%v", domains)
			require.Positive(t, domains["HSA_CORE_API"])
			require.Positive(t, domains["HSA_AMD_EXT_API"])
			require.NotEmpty(t, kernels.rows)
			require.GreaterOrEqual(t, hsa.countContaining(t, "Function", "hsa_signal_store"), len(kernels.rows),
				"a doorbell store per kernel at least")
			require.GreaterOrEqual(t, hsa.countContaining(t, "Function", "hsa_queue_add_write_index"), len(kernels.rows),
				"a write-index reservation per kernel at least")
			require.Positive(t, hsa.countContaining(t, "Function", "hsa_signal_wait"))
			require.Zero(t, hsa.count(t, "Function", "hsa_amd_profiling_get_dispatch_time"),
				"the profiler's own calls are not the app's")
			hsa.inWindow(t, r, 0)

			gotOut, gotErr := s.finish(t)
			require.Equal(t, wantOut, gotOut, "the server's output after the attach is that of a run nobody attached to")
			require.Equal(t, wantErr, gotErr, "the server's stderr after the attach is that of a run nobody attached to")
		})
	}
}
