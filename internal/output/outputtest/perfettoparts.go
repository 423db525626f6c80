package outputtest

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

// PerfettoEvents reads a trace as a reader that opens it alone would, and
// returns its events resolved, one line each: timestamp, type, the
// description of its track (and of the track's parents), category, name,
// annotations, flows and counter value. It fails the test when the trace
// does not stand on its own: its first packet does not clear the
// sequence's incremental state, or an event uses a track whose descriptor,
// or a name, category or annotation name whose interned entry, did not
// come earlier in this trace. The parts of a trace written in parts
// (perfetto.WriteFile) must each pass, and their events together be the
// single file's.
func PerfettoEvents(t *testing.T, trace []byte) []string {
	t.Helper()
	interned := map[protowire.Number]map[uint64]string{pfInternedCategories: {}, pfInternedNames: {}, pfInternedAnnNames: {}}
	tracks := map[uint64]string{} // uuid -> its description
	parents := map[uint64]uint64{}
	var out []string
	first := true
	lookup := func(table protowire.Number, iid uint64) string {
		s, ok := interned[table][iid]
		if !ok {
			t.Fatalf("interned entry %d of table %d used before this trace defined it", iid, table)
		}
		return s
	}
	describe := func(uuid uint64) string {
		var parts []string
		for u := uuid; u != 0; u = parents[u] {
			d, ok := tracks[u]
			if !ok {
				t.Fatalf("track %#x used before this trace described it", u)
			}
			parts = append(parts, d)
		}
		return strings.Join(parts, " < ")
	}
	pbFast(t, trace, func(num protowire.Number, _ protowire.Type, _ uint64, pkt []byte) {
		require.EqualValues(t, pfTracePacket, num)
		var flags uint64
		pbFast(t, pkt, func(num protowire.Number, _ protowire.Type, v uint64, sub []byte) {
			switch num {
			case pfPacketSequenceFlags:
				flags = v
			case pfPacketInternedData:
				pbFast(t, sub, func(num protowire.Number, _ protowire.Type, _ uint64, sub []byte) {
					if table, ok := interned[num]; ok {
						iid, name := internedEntry(t, sub)
						table[iid] = name
					}
				})
			}
		})
		if first {
			require.EqualValues(t, 1, flags, "the trace's first packet clears the incremental state")
			first = false
		}
		var ts uint64
		var ev []byte
		pbFast(t, pkt, func(num protowire.Number, _ protowire.Type, v uint64, sub []byte) {
			switch num {
			case pfPacketTimestamp:
				ts = v
			case pfPacketTrackEvent:
				ev = sub
			case pfPacketTrackDescriptor:
				var uuid, parent uint64
				var desc []string
				pbFast(t, sub, func(num protowire.Number, _ protowire.Type, v uint64, sub []byte) {
					switch num {
					case pfTrackUUID:
						uuid = v
					case pfTrackParent:
						parent = v
					case pfTrackName:
						desc = append(desc, "name="+string(sub))
					case pfTrackProcess, pfTrackThread, pfTrackCounter:
						var f []string
						pbFast(t, sub, func(num protowire.Number, typ protowire.Type, v uint64, sub []byte) {
							if typ == protowire.BytesType {
								f = append(f, fmt.Sprintf("%d:%s", num, sub))
							} else {
								f = append(f, fmt.Sprintf("%d:%d", num, int64(int32(v))))
							}
						})
						desc = append(desc, fmt.Sprintf("%d{%s}", num, strings.Join(f, ",")))
					}
				})
				if parent != 0 {
					_, ok := tracks[parent]
					require.True(t, ok, "track %#x's parent %#x not described before it", uuid, parent)
				}
				d := fmt.Sprintf("%#x[%s]", uuid, strings.Join(desc, ";"))
				if prev, ok := tracks[uuid]; ok {
					require.Equal(t, prev, d, "track %#x described twice differently", uuid)
				}
				tracks[uuid], parents[uuid] = d, parent
			}
		})
		if ev == nil {
			return
		}
		var typ, track uint64
		var cat, name, value string
		var anns, flows []string
		pbFast(t, ev, func(num protowire.Number, _ protowire.Type, v uint64, sub []byte) {
			switch num {
			case pfEventType:
				typ = v
			case pfEventTrackUUID:
				track = v
			case pfEventCategoryIIDs:
				cat = lookup(pfInternedCategories, v)
			case pfEventNameIID:
				name = lookup(pfInternedNames, v)
			case pfEventFlowIDs:
				flows = append(flows, fmt.Sprintf("%#x", v))
			case pfEventDoubleValue:
				value = fmt.Sprint(math.Float64frombits(v))
			case pfEventDebug:
				var an, av string
				pbFast(t, sub, func(num protowire.Number, typ protowire.Type, v uint64, sub []byte) {
					switch {
					case num == 1: // DebugAnnotation.name_iid
						an = lookup(pfInternedAnnNames, v)
					case typ == protowire.BytesType:
						av = string(sub)
					default:
						av = fmt.Sprint(v)
					}
				})
				anns = append(anns, an+"="+av)
			}
		})
		out = append(out, fmt.Sprintf("%d type=%d track=%s cat=%s name=%s anns=%s flows=%s value=%s",
			ts, typ, describe(track), cat, name, strings.Join(anns, ","), strings.Join(flows, ","), value))
	})
	return out
}

// SameEvents fails the test unless two lists of PerfettoEvents lines hold
// the same lines as many times each, in any order.
func SameEvents(t *testing.T, want, got []string) {
	t.Helper()
	a, b := slices.Clone(want), slices.Clone(got)
	slices.Sort(a)
	slices.Sort(b)
	require.Equal(t, len(a), len(b), "events")
	for i := range a {
		require.Equal(t, a[i], b[i], "the %d-th event in sorted order", i)
	}
}

// pbFast is pbFields without a testify call per field (a trace holds
// millions): a malformed message fails the test once.
func pbFast(t *testing.T, b []byte, fn func(num protowire.Number, typ protowire.Type, v uint64, sub []byte)) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("malformed tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		var v uint64
		var sub []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			sub, n = protowire.ConsumeBytes(b)
		default:
			t.Fatalf("unexpected wire type %d", typ)
		}
		if n < 0 {
			t.Fatalf("malformed field %d: %v", num, protowire.ParseError(n))
		}
		fn(num, typ, v, sub)
		b = b[n:]
	}
}
