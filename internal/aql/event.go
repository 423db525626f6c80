package aql

import (
	"fmt"
	"sort"
)

// AccumFlag is sq_flags.accum of an event (bits 2:0 of flags).
type AccumFlag uint32

// Accumulation modes.
const (
	AccumNone  AccumFlag = 0
	AccumLoRes AccumFlag = 1
	AccumHiRes AccumFlag = 2
)

// Event is one raw PMC event (aqlprofile_pmc_event_t).
type Event struct {
	Block   BlockID
	Index   uint32 // block instance
	EventID uint32 // raw PERF_SEL
	Flags   uint32
}

// counter is an event placed on a counter register.
type counter struct {
	Event
	block    *Block
	internal bool   // accumulate helper: programmed and read, never reported
	implicit bool   // gfx10's appended GRBM_COUNT: programmed and read, not sized
	sel      uint32 // programmed event id
	regs     CounterRegs
}

// plan expands, validates and places events on counter registers.
func (d *Device) plan(events []Event) ([]counter, error) {
	if len(events) == 0 {
		return nil, fmt.Errorf("no PMC events given")
	}
	cs := make([]counter, 0, len(events)+1)
	flagged := false
	for i, e := range events {
		b, ok := d.Table.BlockByID(e.Block)
		if !ok {
			return nil, fmt.Errorf("event %d: block id %d does not exist on %s", i, e.Block, d.GfxIP)
		}
		if int(e.Index) >= b.InstanceCount {
			return nil, fmt.Errorf("event %d: %s instance %d out of range (0..%d)", i, b.Name, e.Index, b.InstanceCount-1)
		}
		// AQLprofile does not check its tables' event_id_max (stale for some
		// blocks: rocprofiler-compute collects SQ event 337 on gfx90a, whose
		// max says 303); an id the select field cannot hold is an error.
		if e.EventID > b.EventIDMax && e.EventID&^b.SelectMask != 0 {
			return nil, fmt.Errorf("event %d: %s event id %d out of range (0..%d)", i, b.Name, e.EventID, max(b.EventIDMax, b.SelectMask))
		}
		c := counter{Event: e, block: b, sel: e.EventID}
		if e.Flags != 0 {
			if e.Block != BlockSQ {
				return nil, fmt.Errorf("event %d: flags 0x%x are valid only on SQ, not %s", i, e.Flags, b.Name)
			}
			var id uint32
			switch AccumFlag(e.Flags & 7) {
			case AccumLoRes:
				id = d.arch.accumLo
			case AccumHiRes:
				id = d.arch.accumHi
			}
			if id == 0 || e.Flags&^7 != 0 {
				return nil, fmt.Errorf("event %d: SQ accumulate flags 0x%x are not supported on %s", i, e.Flags, d.GfxIP)
			}
			c.sel = id
			flagged = true
		}
		cs = append(cs, c)
	}
	if flagged {
		cs = expandAccumulate(cs)
	}
	if d.spec.implicitGRBM && !hasAttr(cs, AttrGRBM) {
		if b, ok := d.Table.BlockByID(BlockGRBM); ok {
			cs = append(cs, counter{Event: Event{Block: BlockGRBM}, block: b, implicit: true})
		}
	}
	used := map[[2]uint32]int{}
	for i := range cs {
		c := &cs[i]
		k := [2]uint32{uint32(c.Block), c.Index}
		slot := used[k]
		used[k] = slot + 1
		if slot >= c.block.CounterCount {
			return nil, &CapacityError{Block: c.block.Name, Index: c.Index, Limit: c.block.CounterCount}
		}
		row := slot
		if c.block.Attr.Has(AttrExplInst) {
			row += int(c.Index) * c.block.CounterCount
		}
		if row >= len(c.block.Regs) {
			return nil, fmt.Errorf("%s: no registers for counter row %d", c.block.Name, row)
		}
		c.regs = c.block.Regs[row]
	}
	return cs, nil
}

func hasAttr(cs []counter, a Attr) bool {
	for _, c := range cs {
		if c.block.Attr.Any(a) {
			return true
		}
	}
	return false
}

func sortKey(c *counter) (uint64, uint64) {
	k1 := uint64(c.Block)<<32 | uint64(c.Index)
	k2 := uint64(c.Flags)<<1 | uint64(c.EventID)<<33
	if !c.internal {
		k2 |= 1
	}
	return k1, k2
}

func sortCounters(cs []counter) {
	sort.SliceStable(cs, func(i, j int) bool {
		a1, a2 := sortKey(&cs[i])
		b1, b2 := sortKey(&cs[j])
		if a1 != b1 {
			return a1 < b1
		}
		return a2 < b2
	})
}

// expandAccumulate adds, for each flagged SQ event, the unflagged internal
// copy that AQLprofile programs in the slot before it, in its sort order.
func expandAccumulate(cs []counter) []counter {
	sortCounters(cs)
	out := make([]counter, 0, 2*len(cs))
	out = append(out, cs...)
	for i, c := range cs {
		if c.Flags == 0 {
			continue
		}
		if i > 0 {
			p := cs[i-1]
			if p.Block == c.Block && p.Index == c.Index && p.EventID == c.EventID && (p.Flags == 0 || p.internal) {
				continue
			}
		}
		in := c
		in.Flags, in.internal, in.sel = 0, true, c.EventID
		out = append(out, in)
	}
	sortCounters(out)
	return out
}

// CapacityError reports a block instance asked for more counters than it has.
type CapacityError struct {
	Block string
	Index uint32
	Limit int
}

func (e *CapacityError) Error() string {
	return fmt.Sprintf("%s instance %d: more than %d counters requested in one pass", e.Block, e.Index, e.Limit)
}

// CheckEvents validates events and checks that they fit on the counter
// registers in one pass (accumulate helpers and gfx10's implicit GRBM event
// included). A *CapacityError means they need more than one pass.
func (d *Device) CheckEvents(events []Event) error {
	_, err := d.plan(events)
	return err
}
