package outputtest

import (
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
)

// NestSlice is a slice as the importer would build it.
type NestSlice struct {
	Name, Track string
	Start, End  uint64
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

// ImportSlices replays a trace's slice events and fails the test when an
// END would close another slice than the one it was written for. Slices
// are keyed by name ("name#2" for the second of a name, and so on).
func ImportSlices(t *testing.T, trace []byte) map[string]NestSlice {
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
	out := map[string]NestSlice{}
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
		out[key] = NestSlice{Name: top.name, Track: trackName[e.track], Start: top.ts, End: e.ts}
	}
	for tr, st := range stacks {
		require.Empty(t, st, "slices left open on %q", trackName[tr])
	}
	return out
}

// PerfettoSummary is what a small independent decoder of the wire format sees.
type PerfettoSummary struct {
	Begins      map[string]uint64 // BEGIN events per category
	Ends        uint64
	Counters    uint64
	TrackNames  map[string]bool
	ThreadNames map[string]bool
	Flows       map[uint64]int
	// Processes are the process descriptors' names by pid, Threads the
	// thread descriptors' pids by tid.
	Processes map[int64]string
	Threads   map[int64]int64
}

// fields calls fn for each top-level field of a message.
func pbFields(t *testing.T, b []byte, fn func(num protowire.Number, typ protowire.Type, v uint64, sub []byte)) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		require.GreaterOrEqual(t, n, 0)
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			require.GreaterOrEqual(t, n, 0)
			fn(num, typ, v, nil)
			b = b[n:]
		case protowire.Fixed64Type:
			v, n := protowire.ConsumeFixed64(b)
			require.GreaterOrEqual(t, n, 0)
			fn(num, typ, v, nil)
			b = b[n:]
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			require.GreaterOrEqual(t, n, 0)
			fn(num, typ, 0, v)
			b = b[n:]
		default:
			t.Fatalf("unexpected wire type %d", typ)
		}
	}
}

// DecodePerfetto reads a trace with a small decoder of its own.
func DecodePerfetto(t *testing.T, trace []byte) *PerfettoSummary {
	s := &PerfettoSummary{Begins: map[string]uint64{}, TrackNames: map[string]bool{}, ThreadNames: map[string]bool{}, Flows: map[uint64]int{},
		Processes: map[int64]string{}, Threads: map[int64]int64{}}
	cats := map[uint64]string{}
	pbFields(t, trace, func(num protowire.Number, _ protowire.Type, _ uint64, pkt []byte) {
		require.EqualValues(t, pfTracePacket, num)
		// Interned data first: a packet may define what its event uses.
		pbFields(t, pkt, func(num protowire.Number, _ protowire.Type, _ uint64, sub []byte) {
			if num != pfPacketInternedData {
				return
			}
			pbFields(t, sub, func(num protowire.Number, _ protowire.Type, _ uint64, sub []byte) {
				if num != pfInternedCategories {
					return
				}
				iid, name := internedEntry(t, sub)
				cats[iid] = name
			})
		})
		pbFields(t, pkt, func(num protowire.Number, _ protowire.Type, _ uint64, sub []byte) {
			switch num {
			case pfPacketTrackDescriptor:
				pbFields(t, sub, func(num protowire.Number, _ protowire.Type, _ uint64, sub []byte) {
					switch num {
					case pfTrackName:
						s.TrackNames[string(sub)] = true
					case pfTrackProcess:
						var pid int64
						var name string
						pbFields(t, sub, func(num protowire.Number, _ protowire.Type, v uint64, sub []byte) {
							switch num {
							case pfProcessPID:
								pid = int64(int32(v))
							case pfProcessName:
								name = string(sub)
							}
						})
						if prev, dup := s.Processes[pid]; dup {
							require.Equal(t, prev, name, "two processes with pid %d", pid)
						}
						s.Processes[pid] = name
					case pfTrackThread:
						var pid, tid int64
						pbFields(t, sub, func(num protowire.Number, _ protowire.Type, v uint64, sub []byte) {
							switch num {
							case pfThreadName:
								s.ThreadNames[string(sub)] = true
							case pfThreadPID:
								pid = int64(int32(v))
							case pfThreadTID:
								tid = int64(int32(v))
							}
						})
						if prev, ok := s.Threads[tid]; ok {
							require.Equal(t, prev, pid, "tid %d in two processes", tid)
						}
						s.Threads[tid] = pid
					}
				})
			case pfPacketTrackEvent:
				var typ uint64
				var cat string
				var flows []uint64
				pbFields(t, sub, func(num protowire.Number, _ protowire.Type, v uint64, sub []byte) {
					switch num {
					case pfEventType:
						typ = v
					case pfEventCategoryIIDs:
						c, ok := cats[v]
						require.True(t, ok, "category iid %d used before it was interned", v)
						cat = c
					case pfEventFlowIDs:
						flows = append(flows, v)
					}
				})
				switch typ {
				case pfTypeSliceBegin:
					s.Begins[cat]++
					for _, f := range flows {
						s.Flows[f]++
					}
				case pfTypeSliceEnd:
					s.Ends++
				case pfTypeCounter:
					s.Counters++
				}
			}
		})
	})
	return s
}

// internedEntry decodes one entry of a packet's interned data (a
// category, an event name, a debug annotation's name): its iid and name.
func internedEntry(t *testing.T, b []byte) (iid uint64, name string) {
	pbFields(t, b, func(num protowire.Number, _ protowire.Type, v uint64, sub []byte) {
		switch num {
		case pfInternedIID:
			iid = v
		case pfInternedName:
			name = string(sub)
		}
	})
	return iid, name
}

// PerfettoCounts counts a trace's slices by domain.
func PerfettoCounts(s *PerfettoSummary) [model.NumDomains]uint64 {
	var c [model.NumDomains]uint64
	for d := model.Domain(0); d < model.NumDomains; d++ {
		c[d] = s.Begins[model.Domains[d].Category]
	}
	return c
}

// The Perfetto wire format's field numbers, as a reader independent of the
// writer's own encoder knows them (perfetto_trace.proto).
const (
	pfTracePacket = 1 // Trace.packet

	pfPacketTimestamp     = 8  // TracePacket.timestamp
	pfPacketSequenceID    = 10 // TracePacket.trusted_packet_sequence_id
	pfPacketTrackEvent    = 11 // TracePacket.track_event
	pfPacketInternedData  = 12 // TracePacket.interned_data
	pfPacketSequenceFlags = 13 // TracePacket.sequence_flags

	pfInternedCategories    = 1  // InternedData.event_categories (EventCategory)
	pfInternedNames         = 2  // InternedData.event_names (EventName)
	pfInternedAnnNames      = 3  // InternedData.debug_annotation_names
	pfInternedIID           = 1  // EventCategory/EventName/DebugAnnotationName.iid
	pfInternedName          = 2  // EventCategory/EventName/DebugAnnotationName.name
	pfPacketTrackDescriptor = 60 // TracePacket.track_descriptor

	pfTrackUUID    = 1 // TrackDescriptor.uuid
	pfTrackName    = 2 // TrackDescriptor.name
	pfTrackProcess = 3 // TrackDescriptor.process
	pfTrackThread  = 4 // TrackDescriptor.thread
	pfTrackParent  = 5 // TrackDescriptor.parent_uuid
	pfTrackCounter = 8 // TrackDescriptor.counter

	pfProcessPID  = 1 // ProcessDescriptor.pid
	pfProcessName = 6 // ProcessDescriptor.process_name
	pfThreadPID   = 1 // ThreadDescriptor.pid
	pfThreadTID   = 2 // ThreadDescriptor.tid
	pfThreadName  = 5 // ThreadDescriptor.thread_name

	pfEventCategoryIIDs = 3  // TrackEvent.category_iids
	pfEventDebug        = 4  // TrackEvent.debug_annotations
	pfEventNameIID      = 10 // TrackEvent.name_iid
	pfEventType         = 9  // TrackEvent.type
	pfEventTrackUUID    = 11 // TrackEvent.track_uuid
	pfEventCategories   = 22 // TrackEvent.categories
	pfEventName         = 23 // TrackEvent.name
	pfEventCounterValue = 30 // TrackEvent.counter_value
	pfEventDoubleValue  = 44 // TrackEvent.double_counter_value
	pfEventFlowIDs      = 47 // TrackEvent.flow_ids (fixed64)

	pfTypeSliceBegin = 1
	pfTypeSliceEnd   = 2
	pfTypeInstant    = 3
	pfTypeCounter    = 4
)
