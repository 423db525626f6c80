package perfetto

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// The nesting check decodes the trace with its own field numbers (from
// Perfetto's trace_packet.proto, track_event.proto, track_descriptor.proto
// and interned_data.proto), not the writer's constants, and replays what
// Perfetto's importer does: events in timestamp order, ties in file order,
// one stack per track, an END closing the slice on top.

func TestPerfettoSlicesNestOnEveryTrack(t *testing.T) {
	dir := t.TempDir()
	sp := spooltest.New(tracing.ProcessInfo{PID: 10, StartBoottimeNs: 1, Hostname: "h", Argv: []string{"app"}})
	sp.Add(outputtest.Agent(1, 1, 0, tracing.AgentGPU, "gpu"))
	rng := func(name string, start, end uint64) tracing.Marker {
		return tracing.Marker{Domain: tracing.DomainMarkerCoreRange, Function: tracing.MarkerProcessRange,
			TID: 10, Start: start, End: end, Message: []byte(name)}
	}
	// Host thread: A encloses C; B crosses A's end by 5 ns; E and D touch
	// at 300 and D is recorded first (the writers put records in completion
	// order, so E comes first and D nests after it); F and its same-start
	// child G, child written first (API calls are written when they return).
	for _, m := range []tracing.Marker{
		rng("A", 100, 200), rng("C", 120, 130), rng("B", 150, 205),
		rng("D", 300, 400), rng("E", 250, 300),
		rng("G", 700, 750), rng("F", 700, 800),
	} {
		sp.Add(m)
	}
	// GPU stream 0: K2 starts 10 ns before K1 ends; K4 is written before
	// K3, which it follows exactly; a copy overlaps K4.
	for k, name := range []string{"K1", "K2", "K3", "K4", "K5"} {
		sp.Add(tracing.KernelSymbol{KernelID: uint64(k + 1), Name: []byte(name)})
	}
	disp := func(id uint64, start, end uint64) tracing.KernelDispatch {
		return tracing.KernelDispatch{AgentNode: 1, QueueID: 1, DispatchID: id, KernelID: id,
			CorrelationID: id, TID: 10, Start: start, End: end}
	}
	sp.Add(disp(1, 1000, 2000))
	sp.Add(disp(2, 1990, 3000))
	sp.Add(disp(4, 3500, 4000))
	sp.Add(disp(3, 3000, 3500))
	sp.Add(tracing.MemoryCopy{Direction: tracing.CopyHostToDevice, DstAgentNode: 1, CorrelationID: 9,
		Start: 3900, End: 4100})
	sp.Add(disp(5, 5000, 4990)) // end before start: an instant
	_, err := sp.WriteFile(dir)
	require.NoError(t, err)
	spools, err := tracing.List(dir)
	require.NoError(t, err)

	for _, byQueue := range []bool{false, true} {
		var buf bytes.Buffer
		require.NoError(t, Write(&buf, &model.Input{Spools: spools, Config: model.Config{GroupByQueue: byQueue}}))
		got := outputtest.ImportSlices(t, buf.Bytes())

		// Host slices keep their times; those that cannot nest move to a lane.
		want := map[string]outputtest.NestSlice{
			"A": {Name: "A", Track: "app", Start: 100, End: 200}, "C": {Name: "C", Track: "app", Start: 120, End: 130},
			"B": {Name: "B", Track: "app (overlap 1)", Start: 150, End: 205},
			"E": {Name: "E", Track: "app", Start: 250, End: 300}, "D": {Name: "D", Track: "app", Start: 300, End: 400},
			"F": {Name: "F", Track: "app", Start: 700, End: 800}, "G": {Name: "G", Track: "app (overlap 1)", Start: 700, End: 750},
		}
		for name, w := range want {
			require.Equal(t, w, got[name], name)
		}
		// GPU slices that overlap are cut in the middle of the overlap.
		gpu := "STREAM [0]"
		if byQueue {
			gpu = "COMPUTE Agent 1 QUEUE [1] GPU"
		}
		require.Equal(t, outputtest.NestSlice{Name: "K1", Track: gpu, Start: 1000, End: 1995}, got["K1"])
		require.Equal(t, outputtest.NestSlice{Name: "K2", Track: gpu, Start: 1995, End: 3000}, got["K2"])
		require.Equal(t, outputtest.NestSlice{Name: "K3", Track: gpu, Start: 3000, End: 3500}, got["K3"])
		require.Equal(t, outputtest.NestSlice{Name: "K5", Track: gpu, Start: 5000, End: 5000}, got["K5"])
		if byQueue {
			// The copy has its own track; K4 follows K3 (recorded before it,
			// written after it: completion order).
			require.Equal(t, outputtest.NestSlice{Name: "K4", Track: gpu, Start: 3500, End: 4000}, got["K4"])
			require.Equal(t, uint64(3900), got["MEMORY_COPY_HOST_TO_DEVICE"].Start)
		} else {
			// The copy shares the stream: cut against K4.
			require.Equal(t, outputtest.NestSlice{Name: "K4", Track: gpu, Start: 3500, End: 3950}, got["K4"])
			require.Equal(t, outputtest.NestSlice{Name: "MEMORY_COPY_HOST_TO_DEVICE", Track: gpu, Start: 3950, End: 4100},
				got["MEMORY_COPY_HOST_TO_DEVICE"])
		}
	}
}

// Random slices with many equal timestamps, written in random order: every
// track must still import as properly nested slices, host slices with
// their recorded times.
func TestPerfettoRandomSlicesNest(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 11))
	for round := 0; round < 20; round++ {
		dir := t.TempDir()
		sp := spooltest.New(tracing.ProcessInfo{PID: 10, StartBoottimeNs: 1, Hostname: "h", Argv: []string{"app"}})
		sp.Add(outputtest.Agent(1, 1, 0, tracing.AgentGPU, "gpu"))
		want := map[string][2]uint64{}
		for i := 0; i < 60; i++ {
			start := uint64(rnd.IntN(40))
			end := start + uint64(rnd.IntN(12))
			name := fmt.Sprintf("m%d", i)
			want[name] = [2]uint64{start, end}
			sp.Add(tracing.Marker{Domain: tracing.DomainMarkerCoreRange, Function: tracing.MarkerProcessRange,
				TID: uint32(10 + i%2), Start: start, End: end, Message: []byte(name)})
			id := uint64(i + 1)
			sp.Add(tracing.KernelSymbol{KernelID: id, Name: []byte(fmt.Sprintf("k%d", i))})
			sp.Add(tracing.KernelDispatch{AgentNode: 1, QueueID: 1, DispatchID: id, KernelID: id,
				StreamID: uint64(i % 2), Start: start, End: end})
		}
		_, err := sp.WriteFile(dir)
		require.NoError(t, err)
		spools, err := tracing.List(dir)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, Write(&buf, &model.Input{Spools: spools}))
		got := outputtest.ImportSlices(t, buf.Bytes())
		require.Len(t, got, 120)
		for name, w := range want {
			require.Equal(t, w, [2]uint64{got[name].Start, got[name].End}, name)
		}
	}
}
