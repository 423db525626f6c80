package output

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	jsonout "github.com/rocprof-go/rocprof-go/internal/output/json"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// orderFixture: two threads whose chunks hold their records in each
// thread's order; across the spool, copies, dispatches and HIP calls are
// out of completion order, and raw correlation ids come in per-thread blocks
// (thread 1: 1..3, thread 2: 65..67) as the preload library hands them out.
func orderFixture(t *testing.T, dir string) {
	b := spooltest.New(tracing.ProcessInfo{PID: 7, Hostname: "h", Argv: []string{"app"}})
	b.Add(outputtest.Agent(0, 0, 0, tracing.AgentCPU, "cpu"))
	b.Add(outputtest.Agent(1, 1, 0, tracing.AgentGPU, "gfx90a"))
	b.Add(tracing.KernelSymbol{KernelID: 1, Name: []byte("k.kd")})
	hip := func(tid uint32, corr, start, end uint64) tracing.APICall {
		return tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 1, TID: tid,
			CorrelationID: corr, Start: start, End: end}
	}
	copyRec := func(tid uint32, corr, start, end uint64) tracing.MemoryCopy {
		return tracing.MemoryCopy{Direction: tracing.CopyHostToDevice, DstAgentNode: 1, TID: tid,
			Bytes: 64, CorrelationID: corr, Start: start, End: end}
	}
	disp := func(id uint64, tid uint32, corr, start, end uint64) tracing.KernelDispatch {
		return tracing.KernelDispatch{AgentNode: 1, TID: tid, QueueID: 1, DispatchID: id, KernelID: 1,
			CorrelationID: corr, Start: start, End: end, Grid: [3]uint32{64, 1, 1}, Workgroup: [3]uint32{64, 1, 1}}
	}
	// Thread 1's chunk.
	b.Add(hip(1, 1, 100, 200))
	b.Add(copyRec(1, 1, 150, 190))
	b.Add(hip(1, 2, 300, 700))
	b.Add(copyRec(1, 2, 400, 650))
	b.Add(hip(1, 3, 800, 900))
	b.Add(disp(2, 1, 3, 850, 1200))
	b.Add(tracing.CounterSample{DispatchID: 2, CounterID: 5, Value: 2, AgentNode: 1, Name: []byte("SQ_WAVES")})
	b.NewChunk() // thread 2
	b.Add(hip(2, 65, 120, 250))
	b.Add(copyRec(2, 65, 130, 240))
	b.Add(hip(2, 66, 500, 600))
	b.Add(copyRec(2, 66, 510, 590))
	b.Add(hip(2, 67, 610, 620))
	b.Add(disp(1, 2, 67, 615, 1000))
	b.Add(tracing.CounterSample{DispatchID: 1, CounterID: 5, Value: 1, AgentNode: 1, Name: []byte("SQ_WAVES")})
	_, err := b.WriteFile(dir)
	require.NoError(t, err)
}

// TestRecordsInCompletionOrderWithDenseIDs (issue 24, points 7 and 12):
// every file lists a domain's records by completion (end) time, whichever
// thread recorded them, and correlation ids are 1..N by call start, the
// same in every file, with copies and dispatches still naming their call.
func TestRecordsInCompletionOrderWithDenseIDs(t *testing.T) {
	spools, out := t.TempDir(), t.TempDir()
	orderFixture(t, spools)
	_, err := Write(model.Config{Dir: out, PrefixTemplate: "o", Formats: []model.Format{model.FormatCSV}}, spools)
	require.NoError(t, err)
	rows := func(file string) [][]string {
		data, err := os.ReadFile(filepath.Join(out, "o_"+file+".csv"))
		require.NoError(t, err)
		var got [][]string
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n")[1:] {
			got = append(got, strings.Split(l, ","))
		}
		return got
	}
	// Calls start at 100 (raw 1), 120 (65), 300 (2), 500 (66), 610 (67),
	// 800 (3): numbered 1..6 in that order; listed by end.
	var hipIDs, hipEnds []string
	for _, r := range rows("hip_api_trace") {
		hipIDs, hipEnds = append(hipIDs, r[4]), append(hipEnds, r[6])
	}
	require.Equal(t, []string{"200", "250", "600", "620", "700", "900"}, hipEnds)
	require.Equal(t, []string{"1", "2", "4", "5", "3", "6"}, hipIDs)
	var copyIDs, copyEnds []string
	for _, r := range rows("memory_copy_trace") {
		copyIDs, copyEnds = append(copyIDs, r[5]), append(copyEnds, r[7])
	}
	require.Equal(t, []string{"190", "240", "590", "650"}, copyEnds)
	require.Equal(t, []string{"1", "2", "4", "3"}, copyIDs)
	var dispatchIDs, corr []string
	for _, r := range rows("kernel_trace") {
		dispatchIDs, corr = append(dispatchIDs, r[5]), append(corr, r[8])
	}
	require.Equal(t, []string{"1", "2"}, dispatchIDs, "dispatch 1 ends first")
	require.Equal(t, []string{"5", "6"}, corr)
	var counterCorr []string
	for _, r := range rows("counter_collection") {
		counterCorr = append(counterCorr, r[0])
	}
	require.Equal(t, []string{"5", "6"}, counterCorr)

	// JSON, from the same spool: the same order and ids; each counter record
	// stays with its dispatch.
	paths, err := tracing.List(spools)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, jsonout.Write(&buf, &model.Input{Spools: paths}))
	var doc struct {
		Tool []struct {
			Buffer map[string][]struct {
				Corr struct {
					Internal uint64 `json:"internal"`
				} `json:"correlation_id"`
				End uint64 `json:"end_timestamp"`
			} `json:"buffer_records"`
			Callback struct {
				Counters []struct {
					Data struct {
						Corr struct {
							Internal uint64 `json:"internal"`
						} `json:"correlation_id"`
					} `json:"dispatch_data"`
					Records []struct {
						Value float64 `json:"value"`
					} `json:"records"`
				} `json:"counter_collection"`
			} `json:"callback_records"`
		} `json:"rocprofiler-sdk-tool"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	ids := func(key string) (list []string) {
		for _, r := range doc.Tool[0].Buffer[key] {
			list = append(list, strconv.FormatUint(r.Corr.Internal, 10))
		}
		return list
	}
	require.Equal(t, hipIDs, ids("hip_api"))
	require.Equal(t, copyIDs, ids("memory_copy"))
	require.Equal(t, corr, ids("kernel_dispatch"))
	cc := doc.Tool[0].Callback.Counters
	require.Len(t, cc, 2)
	require.Equal(t, uint64(5), cc[0].Data.Corr.Internal)
	require.Equal(t, 1.0, cc[0].Records[0].Value)
	require.Equal(t, uint64(6), cc[1].Data.Corr.Internal)
	require.Equal(t, 2.0, cc[1].Records[0].Value)
}

// reorderedBenchSpool is n records of two threads whose chunks come in the
// spool in the wrong time order (each pair of 1,000-record blocks swapped),
// so every event kind needs reordering: the writers' worst case.
func reorderedBenchSpool(b testing.TB, dir string, n int) {
	sp := spooltest.New(tracing.ProcessInfo{PID: 1, StartBoottimeNs: 1, Hostname: "h"})
	sp.Add(outputtest.Agent(0, 0, 0, tracing.AgentCPU, "cpu"))
	sp.Add(outputtest.Agent(1, 1, 0, tracing.AgentGPU, "gpu"))
	sp.Add(tracing.KernelSymbol{KernelID: 1, Name: []byte("_Z15addition_kernelPfPKfS1_ii.kd")})
	const block = 1000
	for i := 0; i < n; i++ {
		blk := i / block
		swapped := blk ^ 1 // blocks 0,1 written as 1,0 in time
		t := uint64(1_000_000_000 + (swapped*block+i%block)*1000)
		c := uint64(swapped*block + i%block + 1)
		if i%block == 0 {
			sp.NewChunk()
		}
		tid := uint32(1001 + blk%2)
		switch i % 4 {
		case 0, 1:
			sp.Add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 1, TID: tid,
				CorrelationID: c, Start: t, End: t + 500})
		case 2:
			sp.Add(tracing.KernelDispatch{AgentNode: 1, TID: tid, QueueID: 1, DispatchID: c, KernelID: 1,
				CorrelationID: c, Start: t, End: t + 900, Grid: [3]uint32{256, 1, 1}, Workgroup: [3]uint32{64, 1, 1}})
		case 3:
			sp.Add(tracing.MemoryCopy{Direction: tracing.CopyHostToDevice, DstAgentNode: 1, TID: tid,
				Bytes: 64, CorrelationID: c, Start: t, End: t + 700})
		}
	}
	_, err := sp.WriteFile(dir)
	require.NoError(b, err)
}

// BenchmarkCSVWriteReordered is BenchmarkCSVWrite's formatting case on a
// spool that needs every kind reordered (order.go's second pass, positions
// and seeks), to compare with a spool already in order of the same shape.
func BenchmarkCSVWriteReordered(b *testing.B) {
	const n = 1_000_000
	for _, swapped := range []bool{false, true} {
		name := "in-order"
		if swapped {
			name = "reordered"
		}
		b.Run(name, func(b *testing.B) {
			spools := b.TempDir()
			if swapped {
				reorderedBenchSpool(b, spools, n)
			} else {
				csvBenchSpool(b, spools, n)
			}
			out := b.TempDir()
			b.ResetTimer()
			cpu0 := cpuSeconds()
			for i := 0; i < b.N; i++ {
				_, err := Write(model.Config{Dir: out, Formats: []model.Format{model.FormatCSV}, PrefixTemplate: "bench",
					FS: discardFS{}}, spools)
				require.NoError(b, err)
			}
			b.ReportMetric(float64(n)*float64(b.N)/(cpuSeconds()-cpu0), "records/cpu-s")
		})
	}
}
