package tracing

// Re-reading records out of spool order. The writers put each domain's
// records in rocprofv3's order (completion order), which a spool written by
// many threads does not keep; they note where each record is (Mark) in one
// pass and come back to it (Seek) in the next, instead of holding records.

// Pos is where a record is in its spool, with what decoding it needs: the
// chunk's writer at that point (compact API records take their thread from
// it) and the clock that converts its tick stamps.
type Pos struct {
	chunk uint32
	off   uint16 // the record's offset in its chunk
	size  uint16 // its size (records never span chunks: 64 KiB at most)
	tid   uint32
	clock uint32 // index in the Marks' clock table; 0 = none
}

// Marks notes positions of one reader's records; it keeps the few distinct
// clocks those positions need (one per chunk at most), so a Pos stays small.
type Marks struct {
	clocks []tscClock // clocks[0] is "no clock"
	index  map[tscClock]uint32
}

// Mark returns the position of the reader's current record.
func (m *Marks) Mark(r *Reader) Pos {
	off := r.off - len(r.rec) // r.off is just past the record, in its chunk
	p := Pos{chunk: uint32(r.chunk), off: uint16(off), size: uint16(len(r.rec)), tid: r.tid}
	if r.clock.ok {
		if last := len(m.clocks) - 1; last > 0 && m.clocks[last] == r.clock {
			p.clock = uint32(last) // the usual case: the same chunk as the last mark
			return p
		}
		if m.index == nil {
			m.clocks, m.index = []tscClock{{}}, map[tscClock]uint32{}
		}
		i, ok := m.index[r.clock]
		if !ok {
			i = uint32(len(m.clocks))
			m.clocks = append(m.clocks, r.clock)
			m.index[r.clock] = i
		}
		p.clock = i
	}
	return p
}

// Seek makes the record at p the reader's current record, as Next had just
// returned it: the accessors decode it, and the next Next continues with the
// record after it in spool order.
func (m *Marks) Seek(r *Reader, p Pos) {
	r.chunk = uint64(p.chunk)
	if r.released > r.chunk {
		r.released = r.chunk // pages before it were dropped; they fault back in
	}
	start := int(p.chunk)*ChunkSize + int(p.off)
	r.rec = r.data[start : start+int(p.size) : start+int(p.size)]
	r.off = int(p.off) + int(p.size)
	r.kind = Kind(le.Uint16(r.rec[4:]))
	r.form = r.rec[6] // the decoders also go by the record's size
	r.tid = p.tid
	r.clock = tscClock{}
	if p.clock != 0 {
		r.clock = m.clocks[p.clock]
	}
}
