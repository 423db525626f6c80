package perfetto

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
)

// checkedTrace is what a strict reader of a trace sees: the BEGIN events'
// timestamps in file order, after checking that the first packet clears
// the incremental state and that every event's track was described and
// every interned id defined before the event used it.
type checkedTrace struct {
	begins []uint64
	bytes  int
}

func fields(t *testing.T, b []byte, fn func(num protowire.Number, v uint64, sub []byte)) {
	t.Helper()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		require.Positive(t, n)
		b = b[n:]
		var v uint64
		var sub []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(b)
		case protowire.Fixed32Type:
			var v32 uint32
			v32, n = protowire.ConsumeFixed32(b)
			v = uint64(v32)
		case protowire.BytesType:
			sub, n = protowire.ConsumeBytes(b)
		default:
			t.Fatalf("wire type %d", typ)
		}
		require.GreaterOrEqual(t, n, 0)
		fn(num, v, sub)
		b = b[n:]
	}
}

func checkTrace(t *testing.T, trace []byte) checkedTrace {
	t.Helper()
	out := checkedTrace{bytes: len(trace)}
	tracks := map[uint64]bool{}
	interned := map[protowire.Number]map[uint64]bool{pfInternedCategories: {}, pfInternedNames: {}, pfInternedAnnNames: {}}
	first := true
	fields(t, trace, func(num protowire.Number, _ uint64, pkt []byte) {
		require.EqualValues(t, pfTracePacket, num)
		var flags, ts uint64
		var event, desc []byte
		fields(t, pkt, func(num protowire.Number, v uint64, sub []byte) {
			switch num {
			case pfPacketSequenceFlags:
				flags = v
			case pfPacketTimestamp:
				ts = v
			case pfPacketTrackEvent:
				event = sub
			case pfPacketTrackDescriptor:
				desc = sub
			case pfPacketInternedData:
				fields(t, sub, func(table protowire.Number, _ uint64, entry []byte) {
					fields(t, entry, func(num protowire.Number, v uint64, _ []byte) {
						if num == pfInternedIID {
							interned[table][v] = true
						}
					})
				})
			}
		})
		if first {
			require.Equal(t, uint64(pfSeqIncrementalStateCleared), flags, "the first packet clears the incremental state")
			first = false
		} else {
			require.Equal(t, uint64(pfSeqNeedsIncrementalState), flags)
		}
		if desc != nil {
			fields(t, desc, func(num protowire.Number, v uint64, _ []byte) {
				if num == pfTrackUUID {
					tracks[v] = true
				}
				if num == pfTrackParent {
					require.True(t, tracks[v], "a track's parent %x is described before it", v)
				}
			})
		}
		if event == nil {
			return
		}
		var typ uint64
		fields(t, event, func(num protowire.Number, v uint64, sub []byte) {
			switch num {
			case pfEventType:
				typ = v
			case pfEventTrackUUID:
				require.True(t, tracks[v], "event on track %x, never described", v)
			case pfEventCategoryIIDs:
				require.True(t, interned[pfInternedCategories][v], "category iid %d not interned", v)
			case pfEventNameIID:
				require.True(t, interned[pfInternedNames][v], "name iid %d not interned", v)
			case pfEventDebug:
				fields(t, sub, func(num protowire.Number, v uint64, _ []byte) {
					if num == pfDebugNameIID {
						require.True(t, interned[pfInternedAnnNames][v], "annotation name iid %d not interned", v)
					}
				})
			}
		})
		if typ == pfTypeSliceBegin {
			out.begins = append(out.begins, ts)
		}
	})
	outputtest.ImportSlices(t, trace) // every END closes its own BEGIN
	return out
}

func sum(m map[int32]uint64) (n uint64) {
	for _, v := range m {
		n += v
	}
	return n
}

// --perfetto-buffer-size caps the trace as rocprofv3's Perfetto buffer
// does: a cap it fits in changes nothing; below it, whole records are left
// out (the discard policy keeps the first ones, byte for byte; the ring
// buffer the last ones), the trace stays one a reader takes (tracks and
// names defined before use, slices whole), and the records left out are
// counted by process (issue 35).
func TestPerfettoBufferCap(t *testing.T) {
	in := outputtest.NewInput(t, []int32{100, 200}, 16)
	var full bytes.Buffer
	require.NoError(t, Write(&full, in))
	all := checkTrace(t, full.Bytes())
	require.Nil(t, in.PerfettoCapped)

	for _, ring := range []bool{false, true} {
		in.Config.PerfettoRingBuffer = ring

		in.Config.PerfettoBufferBytes = uint64(full.Len())
		in.PerfettoCapped = nil
		var same bytes.Buffer
		require.NoError(t, Write(&same, in))
		require.Equal(t, full.Bytes(), same.Bytes(), "ring %v: a cap the trace fits in changes nothing", ring)
		require.Nil(t, in.PerfettoCapped)

		limit := full.Len() / 3
		in.Config.PerfettoBufferBytes = uint64(limit)
		in.PerfettoCapped = nil
		var capped bytes.Buffer
		require.NoError(t, Write(&capped, in))
		got := checkTrace(t, capped.Bytes())
		require.LessOrEqual(t, got.bytes, limit)
		require.Greater(t, got.bytes, limit/2, "ring %v: the buffer is used", ring)
		require.NotEmpty(t, got.begins)
		leftSlices := uint64(len(all.begins) - len(got.begins))
		require.Positive(t, leftSlices)
		// Every slice left out is a record counted; counter samples count
		// too (their values are the PMC pulses left out).
		require.GreaterOrEqual(t, sum(in.PerfettoCapped), leftSlices, "ring %v", ring)
		if ring {
			require.Equal(t, all.begins[len(all.begins)-len(got.begins):], got.begins, "the ring buffer keeps the newest records")
			require.Contains(t, in.PerfettoCapped, int32(100), "the first process's records went first")
		} else {
			require.True(t, bytes.HasPrefix(full.Bytes(), capped.Bytes()), "discard keeps the trace's beginning as it is")
			require.Equal(t, all.begins[:len(got.begins)], got.begins)
			require.Contains(t, in.PerfettoCapped, int32(200), "the last process's records were left out")
		}
	}
}

// A cap below any record leaves everything out, counted.
func TestPerfettoBufferCapTiny(t *testing.T) {
	in := outputtest.NewInput(t, []int32{100}, 4)
	in.Config.PerfettoBufferBytes = 1
	for _, ring := range []bool{false, true} {
		in.Config.PerfettoRingBuffer = ring
		in.PerfettoCapped = nil
		var buf bytes.Buffer
		require.NoError(t, Write(&buf, in))
		require.Zero(t, buf.Len())
		require.Positive(t, in.PerfettoCapped[100])
		require.Len(t, in.PerfettoCapped, 1)
	}
}
