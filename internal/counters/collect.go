package counters

import (
	"encoding/binary"

	"github.com/rocprof-go/rocprof-go/internal/aql"
)

var accumNames = map[uint32]string{uint32(aql.AccumLoRes): "LOW_RES", uint32(aql.AccumHiRes): "HIGH_RES"}

// hardwareEvent is what a sample reports: a block's event.
type hardwareEvent struct {
	block aql.BlockID
	event uint32
}

// hardwareCounterNames lists the basic counters of this database by the
// event they count (several names may count one event).
func (db *DB) hardwareCounterNames() map[hardwareEvent][]string {
	names := map[hardwareEvent][]string{}
	for _, c := range db.Counters {
		if c.Kind == Basic {
			k := hardwareEvent{c.block.ID, c.Event}
			names[k] = append(names[k], c.Name)
		}
	}
	return names
}

// Collect turns decoded PMC samples into evaluator inputs: every hardware
// counter of this database whose (block, event) a sample carries gets a
// record at the sample's dimension position. Accumulated samples are keyed by
// InputKey(name, mode).
func (db *DB) Collect(samples []aql.Sample) Inputs {
	names := db.hardwareCounterNames()
	in := Inputs{}
	for _, s := range samples {
		var pos Position
		for _, c := range s.Coords {
			pos = pos.With(FromAQLDim(c.ID), c.Value)
		}
		for _, n := range names[hardwareEvent{s.Event.Block, s.Event.EventID}] {
			k := InputKey(n, accumNames[s.Event.Flags&7])
			in[k] = append(in[k], Record{Pos: pos, Value: float64(s.Value)})
		}
	}
	return in
}

// SampleMap is Collect precomputed for one packet set: for each reported
// sample of its output buffer, the evaluator inputs it feeds. The shim's
// completion thread reads a buffer per counted dispatch; Collect rebuilds
// its lookup on every call (~100 us per dispatch), a SampleMap once.
type SampleMap []sampleInput

// sampleInput is one reported sample: its u64 index in the output buffer,
// its input keys and its dimension position.
type sampleInput struct {
	slot int
	keys []string
	pos  Position
}

// PlanSamples maps the samples a packet set reports to this database's
// inputs.
func (db *DB) PlanSamples(p *aql.PMCPackets) SampleMap {
	names := db.hardwareCounterNames()
	var out SampleMap
	for _, r := range p.Samples() {
		var pos Position
		for _, c := range r.Coords {
			pos = pos.With(FromAQLDim(c.ID), c.Value)
		}
		in := sampleInput{slot: r.Slot, pos: pos}
		for _, n := range names[hardwareEvent{r.Event.Block, r.Event.EventID}] {
			in.keys = append(in.keys, InputKey(n, accumNames[r.Event.Flags&7]))
		}
		if len(in.keys) > 0 {
			out = append(out, in)
		}
	}
	return out
}

// Collect reads one output buffer (little-endian u64 samples) into in,
// reusing its slices: what DB.Collect gives for the buffer's decoded
// samples.
func (m SampleMap) Collect(buf []byte, in Inputs) {
	for k, v := range in {
		in[k] = v[:0]
	}
	for _, x := range m {
		v := float64(binary.LittleEndian.Uint64(buf[x.slot*8:]))
		for _, k := range x.keys {
			in[k] = append(in[k], Record{Pos: x.pos, Value: v})
		}
	}
}
