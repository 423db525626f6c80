package output

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

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

// nestSlice is a slice as the importer would build it.
type nestSlice struct {
	name, track string
	start, end  uint64
}

func pbWalk(t *testing.T, b []byte, fn func(num protowire.Number, v uint64, sub []byte)) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		require.Positive(t, n)
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			require.Positive(t, n)
			fn(num, v, nil)
			b = b[n:]
		case protowire.Fixed64Type:
			v, n := protowire.ConsumeFixed64(b)
			require.Positive(t, n)
			fn(num, v, nil)
			b = b[n:]
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			require.GreaterOrEqual(t, n, 0)
			fn(num, 0, v)
			b = b[n:]
		default:
			t.Fatalf("wire type %d", typ)
		}
	}
}

// importSlices replays a trace's slice events and fails the test when an
// END would close another slice than the one it was written for. Slices
// are keyed by name ("name#2" for the second of a name, and so on).
func importSlices(t *testing.T, trace []byte) map[string]nestSlice {
	type event struct {
		ts, track uint64
		begin     bool
		name      string
		order     int // position in the file
		pair      int // index of the BEGIN an END was written for
	}
	endTS := map[int]uint64{} // BEGIN index -> its END's timestamp
	names := map[uint64]string{}
	trackName := map[uint64]string{}
	var events []event
	open := map[uint64][]int{} // per track: BEGINs written and not yet ended
	pbWalk(t, trace, func(num protowire.Number, _ uint64, pkt []byte) {
		require.EqualValues(t, 1, num) // Trace.packet
		var ts uint64
		var ev []byte
		pbWalk(t, pkt, func(num protowire.Number, v uint64, sub []byte) {
			switch num {
			case 8: // timestamp
				ts = v
			case 11: // track_event
				ev = sub
			case 12: // interned_data
				pbWalk(t, sub, func(num protowire.Number, _ uint64, sub []byte) {
					if num != 2 { // event_names
						return
					}
					var iid uint64
					var name string
					pbWalk(t, sub, func(num protowire.Number, v uint64, sub []byte) {
						if num == 1 {
							iid = v
						} else if num == 2 {
							name = string(sub)
						}
					})
					names[iid] = name
				})
			case 60: // track_descriptor
				var uuid uint64
				var name string
				pbWalk(t, sub, func(num protowire.Number, v uint64, sub []byte) {
					switch num {
					case 1:
						uuid = v
					case 2:
						name = string(sub)
					case 4: // thread
						pbWalk(t, sub, func(num protowire.Number, _ uint64, sub []byte) {
							if num == 5 {
								name = string(sub)
							}
						})
					}
				})
				trackName[uuid] = name
			}
		})
		if ev == nil {
			return
		}
		e := event{ts: ts, order: len(events), pair: -1}
		var typ uint64
		pbWalk(t, ev, func(num protowire.Number, v uint64, _ []byte) {
			switch num {
			case 9:
				typ = v
			case 10:
				e.name = names[v]
			case 11:
				e.track = v
			}
		})
		switch typ {
		case 1: // TYPE_SLICE_BEGIN
			e.begin = true
			open[e.track] = append(open[e.track], e.order)
		case 2: // TYPE_SLICE_END
			o := open[e.track]
			require.NotEmpty(t, o, "END written before any BEGIN on its track")
			e.pair, open[e.track] = o[len(o)-1], o[:len(o)-1]
			endTS[e.pair] = e.ts
		default:
			return // counters
		}
		events = append(events, e)
	})
	sorted := append([]event(nil), events...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].ts < sorted[j].ts })
	stacks := map[uint64][]event{}
	out := map[string]nestSlice{}
	for _, e := range sorted {
		if e.begin {
			stacks[e.track] = append(stacks[e.track], e)
			continue
		}
		st := stacks[e.track]
		require.NotEmpty(t, st, "END at %d on %q closes nothing", e.ts, trackName[e.track])
		top := st[len(st)-1]
		stacks[e.track] = st[:len(st)-1]
		want := events[e.pair]
		// The END may close another slice than its own only when both end
		// at the same time (same result).
		require.Equal(t, endTS[top.order], e.ts,
			"on %q the END of %q at %d closes %q", trackName[e.track], want.name, e.ts, top.name)
		key := top.name // names repeat: "name", "name#2", ... in import order
		for i := 2; ; i++ {
			if _, dup := out[key]; !dup {
				break
			}
			key = fmt.Sprintf("%s#%d", top.name, i)
		}
		out[key] = nestSlice{name: top.name, track: trackName[e.track], start: top.ts, end: e.ts}
	}
	for tr, st := range stacks {
		require.Empty(t, st, "slices left open on %q", trackName[tr])
	}
	return out
}

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
		require.NoError(t, WritePerfetto(&buf, &model.Input{Spools: spools, Config: model.Config{GroupByQueue: byQueue}}))
		got := importSlices(t, buf.Bytes())

		// Host slices keep their times; those that cannot nest move to a lane.
		want := map[string]nestSlice{
			"A": {"A", "app", 100, 200}, "C": {"C", "app", 120, 130},
			"B": {"B", "app (overlap 1)", 150, 205},
			"E": {"E", "app", 250, 300}, "D": {"D", "app", 300, 400},
			"F": {"F", "app", 700, 800}, "G": {"G", "app (overlap 1)", 700, 750},
		}
		for name, w := range want {
			require.Equal(t, w, got[name], name)
		}
		// GPU slices that overlap are cut in the middle of the overlap.
		gpu := "STREAM [0]"
		if byQueue {
			gpu = "COMPUTE Agent 1 QUEUE [1] GPU"
		}
		require.Equal(t, nestSlice{"K1", gpu, 1000, 1995}, got["K1"])
		require.Equal(t, nestSlice{"K2", gpu, 1995, 3000}, got["K2"])
		require.Equal(t, nestSlice{"K3", gpu, 3000, 3500}, got["K3"])
		require.Equal(t, nestSlice{"K5", gpu, 5000, 5000}, got["K5"])
		if byQueue {
			// The copy has its own track; K4 follows K3 (recorded before it,
			// written after it: completion order).
			require.Equal(t, nestSlice{"K4", gpu, 3500, 4000}, got["K4"])
			require.Equal(t, uint64(3900), got["MEMORY_COPY_HOST_TO_DEVICE"].start)
		} else {
			// The copy shares the stream: cut against K4.
			require.Equal(t, nestSlice{"K4", gpu, 3500, 3950}, got["K4"])
			require.Equal(t, nestSlice{"MEMORY_COPY_HOST_TO_DEVICE", gpu, 3950, 4100},
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
		require.NoError(t, WritePerfetto(&buf, &model.Input{Spools: spools}))
		got := importSlices(t, buf.Bytes())
		require.Len(t, got, 120)
		for name, w := range want {
			require.Equal(t, w, [2]uint64{got[name].start, got[name].end}, name)
		}
	}
}
