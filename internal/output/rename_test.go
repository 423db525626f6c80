package output

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	jsonout "github.com/rocprof-go/rocprof-go/internal/output/json"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/output/perfetto"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// renameFixture: thread 11 pushes "outer" (corr 1, popped at 9) and, inside
// it, "inner" (corr 3, popped at 6), and marks "a mark" at 8; dispatches at
// corr 2 (outer), 4 (inner), 7 (outer again), 10 and on thread 12 (no range
// there). As in rocprofv3, the mark is pushed on the thread's rename stack
// and the pop at 9 pops it, not "outer": the dispatch at 10 is still named
// "outer".
func renameFixture(t *testing.T, dir string) {
	b := spooltest.New(tracing.ProcessInfo{PID: 500, PPID: 1, Hostname: "h"})
	b.Add(outputtest.Agent(1, 1, 0, tracing.AgentGPU, "gfx90a"))
	b.Add(tracing.KernelSymbol{KernelID: 1, Name: []byte("_Z15addition_kernelPfPKfS1_ii.kd")})
	b.Add(tracing.String{Table: tracing.TableCounter, ID: 3, Value: []byte("SQ_WAVES")})
	disp := func(id, corr uint64, tid uint32) tracing.KernelDispatch {
		return tracing.KernelDispatch{AgentNode: 1, TID: tid, QueueID: 1, DispatchID: id, KernelID: 1,
			CorrelationID: corr, Start: 100 * id, End: 100*id + 10 + id,
			Grid: [3]uint32{64, 1, 1}, Workgroup: [3]uint32{64, 1, 1}}
	}
	b.Add(disp(1, 2, 11))
	b.Add(disp(2, 4, 11))
	b.Add(tracing.CounterSample{DispatchID: 2, CounterID: 3, Value: 8, AgentNode: 1})
	b.Add(tracing.Marker{Domain: tracing.DomainMarkerCoreRange, Function: tracing.MarkerThreadRange,
		TID: 11, CorrelationID: 3, RangeID: 6, Start: 150, End: 450, Message: []byte("inner")})
	b.Add(disp(3, 7, 11))
	b.Add(tracing.Marker{Domain: tracing.DomainMarkerCoreRange, Function: tracing.MarkerThreadRange,
		TID: 11, CorrelationID: 1, RangeID: 9, Start: 50, End: 950, Message: []byte("outer")})
	b.Add(tracing.Marker{Domain: tracing.DomainMarkerCoreRange, Function: tracing.MarkerMark,
		TID: 11, CorrelationID: 8, Start: 800, End: 800, Message: []byte("a mark")})
	b.Add(disp(4, 10, 11))
	b.Add(disp(5, 5, 12))
	_, err := b.WriteFile(dir)
	require.NoError(t, err)
}

func TestKernelRenameCSV(t *testing.T) {
	spools, out := t.TempDir(), t.TempDir()
	renameFixture(t, spools)
	for _, rename := range []bool{false, true} {
		_, err := Write(model.Config{Dir: out, PrefixTemplate: "r", Formats: []model.Format{model.FormatCSV},
			Stats: true, TruncateKernels: true, KernelRename: rename}, spools)
		require.NoError(t, err)
		names := func(file string, col int) []string {
			data, err := os.ReadFile(filepath.Join(out, "r_"+file+".csv"))
			require.NoError(t, err)
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n")[1:] {
				got = append(got, strings.Split(l, ",")[col])
			}
			return got
		}
		k := `"addition_kernel"`
		if !rename {
			require.Equal(t, []string{k, k, k, k, k}, names("kernel_trace", 7))
			require.Equal(t, []string{k}, names("counter_collection", 8))
			continue
		}
		require.Equal(t, []string{`"outer"`, `"inner"`, `"outer"`, `"outer"`, k}, names("kernel_trace", 7))
		require.Equal(t, []string{`"inner"`}, names("counter_collection", 8))
		// kernel_stats.csv is keyed by the new names (sorted by total time).
		require.ElementsMatch(t, []string{`"outer"`, `"inner"`, k}, names("kernel_stats", 0))
	}
}

func TestKernelRenameOtherWriters(t *testing.T) {
	spools := t.TempDir()
	renameFixture(t, spools)
	paths, err := tracing.List(spools)
	require.NoError(t, err)
	for _, rename := range []bool{false, true} {
		in := &model.Input{Spools: paths, Config: model.Config{TruncateKernels: true, KernelRename: rename}}
		var got []string
		require.NoError(t, in.OpenEach(func(p *model.Catalogue, r *model.SpoolView) error {
			for r.Next() {
				if r.Kind() == tracing.KindKernelDispatch {
					d := r.KernelDispatch()
					got = append(got, p.DispatchName(&d))
				}
			}
			return nil
		}))
		if rename {
			require.Equal(t, []string{"outer", "inner", "outer", "outer", "addition_kernel"}, got)
		} else {
			require.Equal(t, []string{"addition_kernel", "addition_kernel", "addition_kernel",
				"addition_kernel", "addition_kernel"}, got)
		}
	}
}

// rocprofv3's JSON keeps every kernel's own name (kernel_symbols) and marks
// a renamed dispatch by its correlation_id.external: the id of its range
// message in strings.correlation_id.external (the first push's correlation
// id). Perfetto keeps the kernel names too, as rocprofv3's does.
func TestKernelRenameJSONAndPerfetto(t *testing.T) {
	spools := t.TempDir()
	renameFixture(t, spools)
	paths, err := tracing.List(spools)
	require.NoError(t, err)
	type corr struct {
		Internal, External uint64
	}
	var doc struct {
		Tool []struct {
			Strings struct {
				CorrelationID struct {
					External []struct {
						Key   uint64
						Value string
					}
				} `json:"correlation_id"`
			}
			KernelSymbols []struct {
				KernelID            uint64 `json:"kernel_id"`
				TruncatedKernelName string `json:"truncated_kernel_name"`
				FormattedKernelName string `json:"formatted_kernel_name"`
			} `json:"kernel_symbols"`
			BufferRecords struct {
				KernelDispatch []struct {
					CorrelationID corr `json:"correlation_id"`
					DispatchInfo  struct {
						DispatchID uint64 `json:"dispatch_id"`
						KernelID   uint64 `json:"kernel_id"`
					} `json:"dispatch_info"`
				} `json:"kernel_dispatch"`
			} `json:"buffer_records"`
			CallbackRecords struct {
				CounterCollection []struct {
					DispatchData struct {
						CorrelationID corr `json:"correlation_id"`
					} `json:"dispatch_data"`
				} `json:"counter_collection"`
			} `json:"callback_records"`
		} `json:"rocprofiler-sdk-tool"`
	}
	for _, rename := range []bool{false, true} {
		in := &model.Input{Spools: paths, Config: model.Config{TruncateKernels: true, KernelRename: rename}}
		var buf bytes.Buffer
		require.NoError(t, jsonout.Write(&buf, in))
		require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
		require.Len(t, doc.Tool, 1)
		p := doc.Tool[0]
		require.Len(t, p.KernelSymbols, 2, "indexed by kernel id, entry 0 empty")
		require.Equal(t, "addition_kernel", p.KernelSymbols[1].FormattedKernelName)
		var ext []uint64
		for _, d := range p.BufferRecords.KernelDispatch {
			require.EqualValues(t, 1, d.DispatchInfo.KernelID)
			ext = append(ext, d.CorrelationID.External)
		}
		require.Len(t, p.CallbackRecords.CounterCollection, 1)
		counterExt := p.CallbackRecords.CounterCollection[0].DispatchData.CorrelationID.External
		strs := map[uint64]string{}
		for _, e := range p.Strings.CorrelationID.External {
			strs[e.Key] = e.Value
		}
		if !rename {
			require.Equal(t, []uint64{0, 0, 0, 0, 0}, ext)
			require.Zero(t, counterExt)
			require.Empty(t, strs)
		} else {
			// outer was pushed with correlation id 1, inner with 3; the
			// mark is listed too, as rocprofv3 lists marks. Ids are
			// renumbered by start (order.go): the mark's raw 8 starts
			// ninth (after the pop of inner and dispatch 5).
			require.Equal(t, []uint64{1, 3, 1, 1, 0}, ext)
			require.EqualValues(t, 3, counterExt, "the counter record is dispatch 2's, inside inner")
			require.Equal(t, map[uint64]string{1: "outer", 3: "inner", 9: "a mark"}, strs)
		}

		var pf bytes.Buffer
		require.NoError(t, perfetto.Write(&pf, in))
		kernels := 0
		for _, s := range outputtest.ImportSlices(t, pf.Bytes()) {
			if s.Track == "STREAM [0]" {
				require.Equal(t, "addition_kernel(float*, float const*, float const*, int, int)", s.Name)
				kernels++
			}
		}
		require.Equal(t, 5, kernels)
	}
}

// A message's rename id is its first push in time, not its lowest raw id:
// the recorder's ids increase per thread only (per-thread blocks), so a
// later push on another thread can carry a lower id.
func TestRenameIDIsTheEarliestPush(t *testing.T) {
	k := model.NewKernelRenamer()
	k.AddMarker(&tracing.Marker{Function: tracing.MarkerThreadRange, TID: 2, CorrelationID: 5, RangeID: 9,
		Start: 2000, End: 3000, Message: []byte("phase")})
	k.AddMarker(&tracing.Marker{Function: tracing.MarkerThreadRange, TID: 1, CorrelationID: 40, RangeID: 50,
		Start: 1000, End: 1500, Message: []byte("phase")})
	require.EqualValues(t, 40, k.External(1, 45), "thread 1's push started first")
	require.EqualValues(t, 40, k.External(2, 7))
}
