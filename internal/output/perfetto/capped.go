package perfetto

import (
	"io"
	"math"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
)

// bufferCap is --perfetto-buffer-size acting on the trace, as rocprofv3's
// in-process Perfetto buffer would: at most limit bytes of packets. A
// record's packets (its slice's BEGIN and END, its counter values, the
// descriptors and interned names it is the first to use) are one bundle,
// kept or left out whole, so the trace never holds half a slice or an
// event whose track or name was left out.
//
// The discard policy keeps the bundles in order until one does not fit and
// leaves out every later one (the buffer is full). The ring buffer keeps
// the newest bundles that fit: writeCapped measures the trace, then leaves
// out the oldest bundles (skip); a bundle left out is rolled back (the
// tracks and names it introduced are sent again by the next bundle that
// uses them), so the trace stays self-contained.
type bufferCap struct {
	limit   uint64 // bytes of packets
	written uint64
	ring    bool
	skip    int   // ring buffer: leave out the bundles before this one
	sizes   []int // measuring: each bundle's size, nothing written
	full    bool  // discard: a bundle did not fit, every later one is left out

	bundle  int    // index of the bundle being built
	pending []byte // its packets
	records uint64 // the spool records it shows
	// domainRecords are those of rocprofv3's domains, counted in the part
	// that keeps the bundle (parts.go)
	domainRecords uint64
	newTracks     []uint64
	newIIDs       []internedKey
	firstAtStart  bool // perfettoWriter.first when the bundle began
	rolledBack    bool // a bundle was left out: tracks are resolved again

	// left counts the records left out, by process id.
	left map[int32]uint64
}

type internedKey struct {
	table map[string]uint64
	key   string
}

// commit ends the bundle of one record (or of nothing, when the record
// wrote no packet: its records count with the next bundle, whose packets
// show them, as a counter sample's value shows in the next pulse).
func (pw *perfettoWriter) commit(pid int32) {
	c := pw.cap
	if c == nil || len(c.pending) == 0 {
		return
	}
	i := c.bundle
	c.bundle++
	n := uint64(len(c.pending))
	switch {
	case c.sizes != nil: // measuring: as if kept, nothing written
		c.sizes = append(c.sizes, len(c.pending))
		c.written += n
	case i >= c.skip && !c.full && c.written+n <= c.limit:
		if pw.err == nil {
			if _, err := pw.w.Write(c.pending); err != nil {
				pw.err = err
			}
		}
		c.written += n
		pw.keep(c.domainRecords)
	default:
		// Left out. A bundle that does not fit fills the buffer: every
		// later one is left out too (with the ring buffer, writeCapped
		// measured the trace so that none is).
		c.full = c.full || i >= c.skip
		c.left[pid] += c.records
		// Undo what the bundle introduced, for the bundles that follow.
		for _, u := range c.newTracks {
			delete(pw.tracks, u)
		}
		for _, k := range c.newIIDs {
			delete(k.table, k.key)
		}
		pw.first = c.firstAtStart
		c.rolledBack = true
	}
	c.pending, c.records, c.domainRecords, c.newTracks, c.newIIDs = c.pending[:0], 0, 0, c.newTracks[:0], c.newIIDs[:0]
	c.firstAtStart = pw.first
}

// writeCapped writes the trace under Config.PerfettoBufferBytes and adds
// the records it left out to in.PerfettoCapped.
func writeCapped(w io.Writer, in *model.Input, parts *partLimit) error {
	limit := in.Config.PerfettoBufferBytes
	skip := 0
	if in.Config.PerfettoRingBuffer {
		// Measure every bundle, then leave out the oldest until the rest
		// fits; the rest is measured again, because the first bundles kept
		// now carry the descriptors and names the left-out ones had.
		m := &bufferCap{limit: math.MaxUint64, sizes: []int{}, left: map[int32]uint64{}}
		if err := writeTrace(io.Discard, in, m, nil); err != nil {
			return err
		}
		var total uint64
		for _, n := range m.sizes {
			total += uint64(n)
		}
		for over := int64(total) - int64(limit); over > 0 && skip < len(m.sizes); skip++ {
			over -= int64(m.sizes[skip])
		}
		for skip > 0 && skip < len(m.sizes) {
			t := &bufferCap{limit: math.MaxUint64, ring: true, skip: skip, left: map[int32]uint64{}}
			if err := writeTrace(io.Discard, in, t, nil); err != nil {
				return err
			}
			if t.written <= limit {
				break
			}
			for over := int64(t.written) - int64(limit); over > 0 && skip < len(m.sizes); skip++ {
				over -= int64(m.sizes[skip])
			}
		}
	}
	c := &bufferCap{limit: limit, ring: in.Config.PerfettoRingBuffer, skip: skip, left: map[int32]uint64{}}
	if err := writeTrace(w, in, c, parts); err != nil {
		return err
	}
	for pid, n := range c.left {
		if n == 0 {
			continue
		}
		if in.PerfettoCapped == nil {
			in.PerfettoCapped = map[int32]uint64{}
		}
		in.PerfettoCapped[pid] += n
	}
	return nil
}
