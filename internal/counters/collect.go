package counters

import (
	"github.com/rocprof-go/rocprof-go/internal/aql"
)

var accumNames = map[uint32]string{uint32(aql.AccumLoRes): "LOW_RES", uint32(aql.AccumHiRes): "HIGH_RES"}

// Collect turns decoded PMC samples into evaluator inputs: every hardware
// counter of this database whose (block, event) a sample carries gets a
// record at the sample's dimension position. Accumulated samples are keyed by
// InputKey(name, mode).
func (db *DB) Collect(samples []aql.Sample) Inputs {
	type key struct {
		block aql.BlockID
		event uint32
	}
	names := map[key][]string{}
	for _, c := range db.Counters {
		if c.Kind == Basic {
			k := key{c.block.ID, c.Event}
			names[k] = append(names[k], c.Name)
		}
	}
	in := Inputs{}
	for _, s := range samples {
		var pos Position
		for _, c := range s.Coords {
			pos = pos.With(FromAQLDim(c.ID), c.Value)
		}
		for _, n := range names[key{s.Event.Block, s.Event.EventID}] {
			k := InputKey(n, accumNames[s.Event.Flags&7])
			in[k] = append(in[k], Record{Pos: pos, Value: float64(s.Value)})
		}
	}
	return in
}
