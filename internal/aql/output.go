package aql

import (
	"encoding/binary"
	"fmt"
)

// SampleRef says where one reported sample lives in the PMC output buffer and
// what it is, in aqlprofile_pmc_iterate_data's order.
type SampleRef struct {
	Event     Event // the user-visible event (accumulate flags kept)
	Block     *Block
	CounterID uint64 // AQLprofile's counter_id for the callback
	Slot      int    // u64 index in the output buffer
	Coords    []Coord
}

// Sample is a decoded sample.
type Sample struct {
	SampleRef
	Value uint64
}

// Samples lists the reported samples in AQLprofile's iteration order: on
// multi-XCC parts UMC events first, then XCC-major, event, sample. Internal
// accumulate helpers consume slots but are not reported.
func (p *PMCPackets) Samples() []SampleRef {
	d := p.Device
	var out []SampleRef
	slot := 0
	walk := func(c *counter, x int) {
		n := d.SamplesPerXCC(c.block)
		inst := d.InstanceExtent(c.block)
		for blk := 0; blk < n; blk++ {
			if !c.internal {
				id := uint64(x*inst*n + int(c.Index)*n + blk)
				out = append(out, SampleRef{Event: c.Event, Block: c.block, CounterID: id, Slot: slot, Coords: d.Coords(c.block, id)})
			}
			slot++
		}
	}
	umcFirst := d.XCC > 1
	if umcFirst {
		for i := range p.counters {
			if c := &p.counters[i]; !c.implicit && c.block.Attr.Has(AttrUmc) {
				walk(c, 0)
			}
		}
	}
	for x := 0; x < d.XCC; x++ {
		for i := range p.counters {
			c := &p.counters[i]
			if c.implicit || (umcFirst && c.block.Attr.Has(AttrUmc)) {
				continue
			}
			walk(c, x)
		}
	}
	return out
}

// Decode reads every reported sample's value from a raw output buffer.
func (p *PMCPackets) Decode(buf []byte) ([]Sample, error) {
	if uint64(len(buf)) < p.OutputSize {
		return nil, fmt.Errorf("PMC output buffer has %d bytes, the packets need %d", len(buf), p.OutputSize)
	}
	refs := p.Samples()
	out := make([]Sample, len(refs))
	for i, r := range refs {
		out[i] = Sample{SampleRef: r, Value: binary.LittleEndian.Uint64(buf[r.Slot*8:])}
	}
	return out, nil
}
