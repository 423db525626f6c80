package attachtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAttachRecordsMemoryCopies: attach_server (2 lanes, each a
// hipMemcpyAsync host to device of 65536 floats per iteration) started
// plainly, attached 2.5 s with --memory-copy-trace --kernel-trace
// --hip-trace, on every runtime. The window's copies are recorded as in a
// launched run: one per hipMemcpyAsync (but for the calls the window's
// edges cut), host to device, 262,144 bytes each, on the calling thread
// and under its hipMemcpyAsync's correlation id, timed within the window,
// none lost; the detach leaves the process as it was (every GOT slot back,
// the library gone) and the server's output is that of a run nobody
// attached to.
func TestAttachRecordsMemoryCopies(t *testing.T) {
	const lanes, elements = 2, 65536
	for _, rt := range runtimes(t) {
		t.Run("rocm"+rt.Name, func(t *testing.T) {
			h := newHarness(t, rt)
			app := []string{filepath.Join(rt.Apps, "attach_server"), "--threads", strconv.Itoa(lanes)}
			wantOut, wantErr := h.reference(t, app...)

			s := h.start(t, app...)
			before := states(t, s.pids())
			out := filepath.Join(h.tmp, "out")
			r := h.attach(t, "--attach", strconv.Itoa(s.pid), "--attach-duration-msec", strconv.Itoa(window),
				"--memory-copy-trace", "--kernel-trace", "--hip-trace", "-d", out, "-o", "copies", "-f", "csv", "json")
			r.succeeded(t, "the attach")
			detached(t, before)

			var run struct {
				Attach struct {
					Processes []struct {
						PID           int    `json:"pid"`
						SlotsRestored int    `json:"slots_restored"`
						CopiesLost    uint64 `json:"copies_lost"`
					} `json:"processes"`
				} `json:"attach"`
			}
			b, err := os.ReadFile(filepath.Join(out, "run.json"))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &run))
			require.Len(t, run.Attach.Processes, 1)
			p := run.Attach.Processes[0]
			require.Zero(t, p.CopiesLost, "run.json's copies_lost: every copy of the window timed")
			require.Positive(t, p.SlotsRestored)

			copies := readCSV(t, filepath.Join(out, "copies_memory_copy_trace.csv"))
			hip := readCSV(t, filepath.Join(out, "copies_hip_api_trace.csv"))
			calls := map[string]string{} // hipMemcpyAsync's correlation id -> its thread
			fns, corrs, tids := hip.col(t, "Function"), hip.col(t, "Correlation_Id"), hip.col(t, "Thread_Id")
			for i, f := range fns {
				if f == "hipMemcpyAsync" {
					calls[corrs[i]] = tids[i]
				}
			}
			t.Logf("%d copy records, %d hipMemcpyAsync calls", len(copies.rows), len(calls))
			require.GreaterOrEqual(t, len(copies.rows), lanes*minIters, "copies of the window")
			require.InDelta(t, len(calls), len(copies.rows), float64(2*lanes),
				"a copy per hipMemcpyAsync, but for the calls the window's edges cut")
			require.Equal(t, len(copies.rows), copies.count(t, "Direction", "MEMORY_COPY_HOST_TO_DEVICE"), "every copy is host to device")
			src, dst := copies.col(t, "Source_Agent_Id"), copies.col(t, "Destination_Agent_Id")
			matched := 0
			for i, c := range copies.col(t, "Correlation_Id") {
				require.NotEqual(t, src[i], dst[i], "row %d: a copy between two agents", i+1)
				if _, ok := calls[c]; ok {
					matched++
				}
			}
			require.InDelta(t, len(copies.rows), matched, float64(lanes),
				"every copy but one per lane at the window's start carries its hipMemcpyAsync's correlation id")
			copies.inWindow(t, r, 0)

			// The JSON's copy records: the bytes and the calling thread.
			var doc struct {
				Tool []struct {
					Records struct {
						Copies []struct {
							Bytes uint64 `json:"bytes"`
							TID   uint64 `json:"thread_id"`
							Corr  struct {
								Internal uint64 `json:"internal"`
							} `json:"correlation_id"`
						} `json:"memory_copy"`
					} `json:"buffer_records"`
				} `json:"rocprofiler-sdk-tool"`
			}
			b, err = os.ReadFile(filepath.Join(out, "copies_results.json"))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &doc))
			require.Len(t, doc.Tool, 1)
			js := doc.Tool[0].Records.Copies
			require.Len(t, js, len(copies.rows), "the JSON's copies are the CSV's")
			for i, c := range js {
				require.Equal(t, uint64(elements*4), c.Bytes, "JSON copy %d: the bytes hipMemcpyAsync moved", i)
				if tid, ok := calls[strconv.FormatUint(c.Corr.Internal, 10)]; ok {
					require.Equal(t, tid, strconv.FormatUint(c.TID, 10), "JSON copy %d: on its hipMemcpyAsync's thread", i)
				}
			}

			gotOut, gotErr := s.finish(t)
			require.Equal(t, wantOut, gotOut, "the server's output after the attach is that of a run nobody attached to")
			require.Equal(t, wantErr, gotErr, "the server's stderr after the attach is that of a run nobody attached to")
		})
	}
}
