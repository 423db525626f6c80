package tracing_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// drainWhile drains every spool of src into dst while cmd runs, finishes
// them once it exited, and returns the peak of the sources' allocated bytes
// and the bytes drained before the end.
func drainWhile(t *testing.T, src, dst string, run func() error) (peak, drained int64) {
	t.Helper()
	drainers := map[string]*tracing.Drainer{}
	done := make(chan error, 1)
	go func() { done <- run() }()
	step := func() {
		paths, err := tracing.List(src)
		require.NoError(t, err)
		var used int64
		for _, p := range paths {
			d := drainers[p]
			if d == nil {
				d, err = tracing.OpenDrainer(p, filepath.Join(dst, filepath.Base(p)))
				if err == tracing.ErrNotReady {
					continue
				}
				require.NoError(t, err)
				require.True(t, d.Seals())
				drainers[p] = d
			}
			_, err := d.Step()
			require.NoError(t, err)
			used += d.Allocated()
		}
		peak = max(peak, used)
	}
	for {
		select {
		case err := <-done:
			step()
			for _, d := range drainers {
				drained += d.Bytes
			}
			// Spools made after the last step (none here: the driver
			// writes before it returns) would be moved whole.
			paths, lerr := tracing.List(src)
			require.NoError(t, lerr)
			for _, p := range paths {
				require.Contains(t, drainers, p)
			}
			for _, d := range drainers {
				require.NoError(t, d.Finish())
			}
			require.NoError(t, err)
			return peak, drained
		case <-time.After(2 * time.Millisecond):
			step()
		}
	}
}

// TestDrainWhileWriting drains spools while their writers write, frees the
// drained chunks in the source and reads back every record, in order, from
// the destination: chunks are sealed only once every record in them is
// published, including chunks handed from exited threads to new ones
// (churn), with the pre-faulting helper, in fork children.
func TestDrainWhileWriting(t *testing.T) {
	cases := []struct {
		mode             string
		threads, records int
		helper           bool
		procs            int
	}{
		{mode: "return", threads: 4, records: 400000, helper: true, procs: 1},
		{mode: "return", threads: 3, records: 200000, procs: 1},
		{mode: "churn", threads: 2, records: 3000, procs: 1},
		{mode: "fork", threads: 3, records: 100000, procs: 4},
	}
	for _, tc := range cases {
		t.Run(tc.mode+"/"+strconv.FormatBool(tc.helper), func(t *testing.T) {
			src, dst := t.TempDir(), t.TempDir()
			cmd := driverCmd(t, src, tc.mode, strconv.Itoa(tc.threads), strconv.Itoa(tc.records))
			if tc.helper {
				cmd.Env = append(cmd.Env, "DRIVER_HELPER=1")
			}
			peak, drained := drainWhile(t, src, dst, cmd.Run)
			left, err := os.ReadDir(src)
			require.NoError(t, err)
			for _, e := range left {
				require.NotRegexp(t, `\.spool$`, e.Name(), "a finished spool stays in the source")
			}
			if tc.mode == "churn" {
				// Each short-lived thread numbers its records from 0: count.
				r := openOnlySpool(t, dst)
				perFunc := map[uint32]uint64{}
				for r.Next() {
					if r.Kind() == tracing.KindHIPAPI {
						perFunc[r.APICall().Function]++
					}
				}
				for f := uint32(0); f < uint32(tc.threads); f++ {
					require.Equal(t, uint64(100*tc.records), perFunc[f])
				}
				require.Zero(t, r.Stats().Torn)
				require.Zero(t, r.Process().Dropped)
				t.Logf("churn: %d KiB drained while written", drained>>10)
				return
			}
			procs := readAll(t, dst)
			require.Len(t, procs, tc.procs)
			var total int64
			for _, pr := range procs {
				for f := uint32(0); f < uint32(tc.threads); f++ {
					if pr.perFunc[f] == 0 {
						continue // a fork child's parent threads
					}
					require.Equal(t, uint64(tc.records), pr.perFunc[f], "pid %d thread %d", pr.info.PID, f)
				}
				require.Zero(t, pr.stats.Torn)
				require.Zero(t, pr.info.Dropped)
				st, err := os.Stat(pr.info.Path)
				require.NoError(t, err)
				total += st.Size()
			}
			t.Logf("%s: %d MiB of spools, %d MiB drained while written, the sources' peak %d MiB",
				tc.mode, total>>20, drained>>20, peak>>20)
			if tc.mode == "return" {
				require.Greater(t, drained, total/2, "most chunks drained while the app ran")
			}
		})
	}
}

// TestDrainStop: a writer that finds the stop word set takes no new chunk;
// its records count in dropped, and stop_seen says it obeyed.
func TestDrainStop(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	cmd := driverCmd(t, src, "kill", "2", "20000")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	buf := make([]byte, 6)
	_, err = out.Read(buf)
	require.NoError(t, err)
	require.Equal(t, "ready\n", string(buf))
	paths, err := tracing.List(src)
	require.NoError(t, err)
	require.Len(t, paths, 1)
	d, err := tracing.OpenDrainer(paths[0], filepath.Join(dst, filepath.Base(paths[0])))
	require.NoError(t, err)
	d.SetStop(tracing.StopOutputFull)
	require.Equal(t, tracing.StopOutputFull, d.Stop())
	time.Sleep(300 * time.Millisecond) // the writers keep writing: into nothing
	_, err = d.Step()
	require.NoError(t, err)
	require.NoError(t, cmd.Process.Kill())
	cmd.Wait()
	require.NoError(t, d.Finish())
	r, err := tracing.Open(filepath.Join(dst, filepath.Base(paths[0])))
	require.NoError(t, err)
	defer r.Close()
	info := r.Process()
	require.Equal(t, tracing.StopOutputFull, info.Stop)
	require.Equal(t, tracing.StopOutputFull, info.StopSeen)
	require.Contains(t, info.StoreError(), "the output file system would have been filled")
	require.Greater(t, info.Dropped, uint64(1000), "records written after the stop are counted")
	for r.Next() {
	}
	require.Greater(t, r.Stats().Records, uint64(40000))
}
