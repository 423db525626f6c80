package output

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
)

// pfSummary is what a small independent decoder of the wire format sees.
type pfSummary struct {
	begins      map[string]uint64 // BEGIN events per category
	ends        uint64
	counters    uint64
	trackNames  map[string]bool
	threadNames map[string]bool
	flows       map[uint64]int
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

func decodePerfetto(t *testing.T, trace []byte) *pfSummary {
	s := &pfSummary{begins: map[string]uint64{}, trackNames: map[string]bool{}, threadNames: map[string]bool{}, flows: map[uint64]int{}}
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
				var iid uint64
				var name string
				pbFields(t, sub, func(num protowire.Number, _ protowire.Type, v uint64, sub []byte) {
					if num == pfInternedIID {
						iid = v
					} else if num == pfInternedName {
						name = string(sub)
					}
				})
				cats[iid] = name
			})
		})
		pbFields(t, pkt, func(num protowire.Number, _ protowire.Type, _ uint64, sub []byte) {
			switch num {
			case pfPacketTrackDescriptor:
				pbFields(t, sub, func(num protowire.Number, _ protowire.Type, _ uint64, sub []byte) {
					switch num {
					case pfTrackName:
						s.trackNames[string(sub)] = true
					case pfTrackThread:
						pbFields(t, sub, func(num protowire.Number, _ protowire.Type, _ uint64, sub []byte) {
							if num == pfThreadName {
								s.threadNames[string(sub)] = true
							}
						})
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
					s.begins[cat]++
					for _, f := range flows {
						s.flows[f]++
					}
				case pfTypeSliceEnd:
					s.ends++
				case pfTypeCounter:
					s.counters++
				}
			}
		})
	})
	return s
}

func perfettoCounts(s *pfSummary) [model.NumDomains]uint64 {
	var c [model.NumDomains]uint64
	for d := model.Domain(0); d < model.NumDomains; d++ {
		c[d] = s.begins[model.Domains[d].Category]
	}
	return c
}

func TestPerfettoSlicesTracksFlows(t *testing.T) {
	in := outputtest.NewInput(t, []int32{100, 200}, 16)
	var buf bytes.Buffer
	require.NoError(t, WritePerfetto(&buf, in))
	s := decodePerfetto(t, buf.Bytes())
	want := outputtest.Counts(16)
	got := perfettoCounts(s)
	for d := model.Domain(0); d < model.NumDomains; d++ {
		if d == model.DomCounter {
			continue // counters are counter tracks, not slices
		}
		require.Equal(t, 2*want[d], got[d], d.String())
	}
	var slices uint64
	for _, n := range s.begins {
		slices += n
	}
	require.Equal(t, slices, s.ends, "every slice ends")
	require.True(t, s.trackNames["STREAM [0]"])
	require.True(t, s.threadNames["THREAD 1 (101)"])
	require.True(t, s.threadNames["app"])
	pmc := 0
	for name := range s.trackNames {
		if strings.Contains(name, " PMC ") {
			pmc++
		}
	}
	require.Equal(t, 4, pmc, "one PMC track per (agent, counter)")
	// Each dispatch's correlation id links its API call to it.
	linked := 0
	for _, n := range s.flows {
		if n >= 2 {
			linked++
		}
	}
	require.GreaterOrEqual(t, linked, 2*16)
}

func TestPerfettoGroupByQueue(t *testing.T) {
	in := outputtest.NewInput(t, []int32{100}, 8)
	in.Config.GroupByQueue = true
	var buf bytes.Buffer
	require.NoError(t, WritePerfetto(&buf, in))
	s := decodePerfetto(t, buf.Bytes())
	require.True(t, s.trackNames["COMPUTE Agent 1 QUEUE [1] GPU"], "%v", s.trackNames)
	require.False(t, s.trackNames["STREAM [0]"])
}
