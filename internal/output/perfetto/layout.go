package perfetto

import (
	"cmp"
	"slices"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/spill"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// Perfetto's importer keeps one stack of open slices per track: a BEGIN
// pushes, an END (which names nothing) pops whatever is on top, and events
// are taken in timestamp order, ties in the order they were written. Slices
// that cross on one track therefore come out wrong: the END of the first
// closes the second. Records do cross: a dispatch's converted GPU timestamps
// can start it a few ns before the previous dispatch on its queue ended, a
// process range (roctxRangeStart/Stop) overlaps what it likes, and two
// slices that merely touch (one ends at t, the next starts at t) go wrong
// when the later one was written first.
//
// Before writing a process, perfettoLayout sorts every slice track's
// intervals and decides:
//
//   - GPU tracks (streams, queues, copy engines): consecutive slices that
//     overlap are cut at the midpoint of the overlap, the first ending and
//     the next starting there, as rocprofv3 does for dispatches on one queue;
//     the slices' begin_ns/end_ns arguments keep the recorded times;
//   - every track: a slice that would still not nest where it is written
//     (it crosses the slice enclosing it, or an equal timestamp would be
//     taken in the wrong order) moves to the first overlap lane where it
//     nests: a child track named "<track> (overlap <n>)". Its times are not
//     changed.
//
// Only slices that need either fix are remembered (by their record's index
// in the spool); the intervals themselves are dropped before writing.

// pfTrackKey names a slice track before it has a uuid.
type pfTrackKey struct {
	kind uint8
	a, b uint64
}

const (
	pfKeyThread uint8 = iota + 1 // a: tid
	pfKeyQueue                   // a: agent node, b: queue id (--group-by-queue)
	pfKeyStream                  // a: stream id
	pfKeyCopy                    // a: destination agent node (--group-by-queue)
)

// pfSpan is one slice's interval on track number track; seq is its
// record's index in the spool, which is also the order its packets are
// written in.
type pfSpan struct {
	start, end uint64
	seq, track uint32
}

// pfPlace is where a slice goes when it is not simply on its track with its
// recorded times.
type pfPlace struct {
	start, end uint64
	lane       uint32 // 0: the track itself
	seq        uint32 // the record's index (pfPlaces)
}

// pfPlaces are the slices to move or cut, by record index; the writing pass
// walks them in step with the records.
type pfPlaces struct {
	list []pfPlace
	next int
	arr  interface{ Close() error } // the file-backed list, when spilled
}

// close releases a spilled list.
func (ps *pfPlaces) close() {
	if ps.arr != nil {
		ps.arr.Close()
		ps.arr, ps.list = nil, nil
	}
}

// at returns the place of record seq; seq must not decrease between calls.
func (ps *pfPlaces) at(seq uint32) (pfPlace, bool) {
	for ps.next < len(ps.list) && ps.list[ps.next].seq < seq {
		ps.next++
	}
	if ps.next < len(ps.list) && ps.list[ps.next].seq == seq {
		return ps.list[ps.next], true
	}
	return pfPlace{}, false
}

// pfSliceOf returns the track and interval of a record that is a slice.
func pfSliceOf(p *model.Catalogue, r *model.SpoolView) (pfTrackKey, uint64, uint64, bool) {
	switch r.Kind() {
	case tracing.KindHIPAPI, tracing.KindHSAAPI, tracing.KindRCCLAPI:
		a := r.APICall()
		return pfTrackKey{kind: pfKeyThread, a: uint64(a.TID)}, a.Start, a.End, true
	case tracing.KindMarker:
		m := r.Marker()
		return pfTrackKey{kind: pfKeyThread, a: uint64(m.TID)}, m.Start, m.End, true
	case tracing.KindMemoryAllocation:
		a := r.MemoryAllocation()
		return pfTrackKey{kind: pfKeyThread, a: uint64(a.TID)}, a.Start, a.End, true
	case tracing.KindScratchMemory:
		s := r.ScratchMemory()
		return pfTrackKey{kind: pfKeyThread, a: uint64(s.TID)}, s.Start, s.End, true
	case tracing.KindKernelDispatch:
		d := r.KernelDispatch()
		if p.Config.GroupByQueue {
			return pfTrackKey{kind: pfKeyQueue, a: uint64(d.AgentNode), b: d.QueueID}, d.Start, d.End, true
		}
		return pfTrackKey{kind: pfKeyStream, a: d.StreamID}, d.Start, d.End, true
	case tracing.KindMemoryCopy:
		c := r.MemoryCopy()
		if p.Config.GroupByQueue {
			return pfTrackKey{kind: pfKeyCopy, a: uint64(c.DstAgentNode)}, c.Start, c.End, true
		}
		return pfTrackKey{kind: pfKeyStream, a: c.StreamID}, c.Start, c.End, true
	}
	return pfTrackKey{}, 0, 0, false
}

// perfettoLayout is the pass over a process's spool that finds the slices
// to move or cut; records are numbered from 1 as r.Next returns them. The
// reader is rewound for the writing pass. It holds 24 bytes per slice
// while it works (one array, sized from the catalogue's counts); past
// model.SpillThreshold slices it works through spill files instead
// (perfettoLayoutSpilled), with the same result.
func perfettoLayout(p *model.Catalogue, r *model.SpoolView) (*pfPlaces, error) {
	var n uint64
	for _, d := range [...]model.Domain{model.DomHIP, model.DomHSA, model.DomRCCL, model.DomMarker, model.DomKernel, model.DomCopy, model.DomAlloc, model.DomScratch} {
		n += p.Counts[d]
	}
	if n > uint64(model.SpillThreshold()) {
		ps, err := perfettoLayoutSpilled(p, r)
		r.Rewind()
		return ps, err
	}
	spans := make([]pfSpan, 0, n)
	places := map[uint32]pfPlace{}
	tracks := pfTracks{index: map[pfTrackKey]uint32{}}
	var seq uint32
	r.Rewind()
	for r.Next() {
		seq++
		k, start, end, ok := pfSliceOf(p, r)
		if !ok {
			continue
		}
		if end < start {
			places[seq] = pfPlace{start: start, end: start} // shown as an instant
			end = start
		}
		spans = append(spans, pfSpan{start: start, end: end, seq: seq, track: tracks.of(k)})
	}
	r.Rewind()
	slices.SortFunc(spans, pfCompareSpans)
	for len(spans) > 0 {
		i := 1
		for i < len(spans) && spans[i].track == spans[0].track {
			i++
		}
		track := spans[:i]
		if tracks.gpu[track[0].track] && pfSplitOverlaps(track, places) {
			slices.SortFunc(track, pfCompareSpans)
		}
		pfAssignLanes(track, places)
		spans = spans[i:]
	}
	ps := &pfPlaces{list: make([]pfPlace, 0, len(places))}
	for seq, pl := range places {
		pl.seq = seq
		ps.list = append(ps.list, pl)
	}
	slices.SortFunc(ps.list, func(a, b pfPlace) int { return cmp.Compare(a.seq, b.seq) })
	return ps, nil
}

// pfTracks numbers the slice tracks as the layout meets them (both
// layouts).
type pfTracks struct {
	index   map[pfTrackKey]uint32
	gpu     []bool // per track index: a GPU track
	lastKey pfTrackKey
	last    uint32
}

func (t *pfTracks) of(k pfTrackKey) uint32 {
	if k != t.lastKey || len(t.gpu) == 0 {
		i, seen := t.index[k]
		if !seen {
			i = uint32(len(t.gpu))
			t.index[k] = i
			t.gpu = append(t.gpu, k.kind != pfKeyThread)
		}
		t.lastKey, t.last = k, i
	}
	return t.last
}

// pfPlaceV is a place decided for a slice; of the places decided for one
// slice, the last (highest ver) holds.
type pfPlaceV struct {
	pfPlace
	ver uint64
}

// perfettoLayoutSpilled is perfettoLayout for a spool too long to hold its
// slices: the slices are sorted on disk by track and opening; each GPU
// track's overlaps are cut as the sorted slices stream by (a slice is
// final once its successor is seen) and the track sorted again on disk;
// lanes are assigned as the track streams by; the places decided are
// sorted by record and kept in a file-backed array for the writing pass.
func perfettoLayoutSpilled(p *model.Catalogue, r *model.SpoolView) (*pfPlaces, error) {
	dir, run := p.Spill(), max(model.SpillThreshold()/3, 1)
	spans := spill.NewSorter(dir, run, pfCompareSpans)
	defer spans.Close()
	places := spill.NewSorter(dir, run, func(a, b pfPlaceV) int {
		if c := cmp.Compare(a.seq, b.seq); c != 0 {
			return c
		}
		return cmp.Compare(a.ver, b.ver)
	})
	defer places.Close()
	var ver uint64
	put := func(seq uint32, start, end uint64, lane uint32) error {
		ver++
		return places.Add(pfPlaceV{pfPlace{start: start, end: end, lane: lane, seq: seq}, ver})
	}
	tracks := pfTracks{index: map[pfTrackKey]uint32{}}
	var seq uint32
	r.Rewind()
	for r.Next() {
		seq++
		k, start, end, ok := pfSliceOf(p, r)
		if !ok {
			continue
		}
		if end < start {
			if err := put(seq, start, start, 0); err != nil { // shown as an instant
				return nil, err
			}
			end = start
		}
		if err := spans.Add(pfSpan{start: start, end: end, seq: seq, track: tracks.of(k)}); err != nil {
			return nil, err
		}
	}
	r.Rewind()

	// One track at a time: its lanes, and for a GPU track its cut slices
	// sorted again.
	var lanes pfLanes
	assign := func(s pfSpan) error {
		if lane := lanes.place(s); lane > 0 {
			return put(s.seq, s.start, s.end, uint32(lane))
		}
		return nil
	}
	var resort *spill.Sorter[pfSpan]
	var cur pfSpan
	have := false
	endTrack := func() error {
		if resort == nil {
			return nil
		}
		if have {
			if err := resort.Add(cur); err != nil {
				return err
			}
		}
		have = false
		err := resort.Each(assign)
		resort = nil
		return err
	}
	track := ^uint32(0)
	err := spans.Each(func(s pfSpan) error {
		if s.track != track {
			if err := endTrack(); err != nil {
				return err
			}
			track, lanes = s.track, pfLanes{}
			if tracks.gpu[track] {
				resort = spill.NewSorter(dir, run, pfCompareSpans)
			}
		}
		if resort == nil {
			return assign(s)
		}
		if !have {
			cur, have = s, true
			return nil
		}
		next := s
		if next.start < cur.end { // pfSplitOverlaps, one pair
			lo := max(next.start, cur.start)
			hi := max(lo, min(cur.end, next.end))
			mid := lo + (hi-lo)/2
			cur.end, next.start = mid, mid
			next.end = max(next.end, mid)
			if err := put(cur.seq, cur.start, cur.end, 0); err != nil {
				return err
			}
			if err := put(next.seq, next.start, next.end, 0); err != nil {
				return err
			}
		}
		if err := resort.Add(cur); err != nil {
			return err
		}
		cur = next
		return nil
	})
	if err == nil {
		err = endTrack()
	}
	if resort != nil {
		resort.Close()
	}
	if err != nil {
		return nil, err
	}

	// The last place of each slice, in record order, in a file-backed
	// array as long as the places decided (the distinct slices use its
	// first part).
	arr, err := spill.NewArray[pfPlace](dir, int(places.Len()))
	if err != nil {
		return nil, err
	}
	count := 0
	var last pfPlaceV
	have = false
	err = places.Each(func(v pfPlaceV) error {
		if have && v.seq != last.seq {
			arr.Values[count] = last.pfPlace
			count++
		}
		last, have = v, true
		return nil
	})
	if err != nil {
		arr.Close()
		return nil, err
	}
	if have {
		arr.Values[count] = last.pfPlace
		count++
	}
	list := arr.Values[:count]
	ps := &pfPlaces{list: list, arr: arr}
	return ps, nil
}

// pfCompareSpans orders slices by track, then as they open: by start, the
// longer (enclosing) one first, then in writing order.
func pfCompareSpans(a, b pfSpan) int {
	if c := cmp.Compare(a.track, b.track); c != 0 {
		return c
	}
	if c := cmp.Compare(a.start, b.start); c != 0 {
		return c
	}
	if c := cmp.Compare(b.end, a.end); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// pfSplitOverlaps cuts overlapping neighbours of a GPU track at the middle
// of their overlap; it reports whether it changed anything.
func pfSplitOverlaps(s []pfSpan, places map[uint32]pfPlace) bool {
	changed := false
	for i := 0; i+1 < len(s); i++ {
		cur, next := &s[i], &s[i+1]
		if next.start >= cur.end {
			continue
		}
		lo := max(next.start, cur.start)
		hi := max(lo, min(cur.end, next.end))
		mid := lo + (hi-lo)/2
		cur.end, next.start = mid, mid
		next.end = max(next.end, mid)
		places[cur.seq] = pfPlace{start: cur.start, end: cur.end}
		places[next.seq] = pfPlace{start: next.start, end: next.end}
		changed = true
	}
	return changed
}

// pfAssignLanes replays how the importer will stack a track's slices and
// moves each slice that would not nest to the first lane where it does.
func pfAssignLanes(spans []pfSpan, places map[uint32]pfPlace) {
	var lanes pfLanes
	for _, s := range spans {
		if lane := lanes.place(s); lane > 0 {
			pl, ok := places[s.seq]
			if !ok {
				pl = pfPlace{start: s.start, end: s.end}
			}
			pl.lane = uint32(lane)
			places[s.seq] = pl
		}
	}
}

// pfLanes are a track's overlap lanes as its slices open in order: the
// open slices per lane, innermost last.
type pfLanes [][]pfSpan

// place puts slice s on the first lane where it nests and returns the lane.
func (lanes *pfLanes) place(s pfSpan) int {
	ls := *lanes
	lane := -1
	for l := range ls {
		st := ls[l]
		for len(st) > 0 && st[len(st)-1].end < s.start {
			st = st[:len(st)-1] // ended before s starts
		}
		ls[l] = st
		if pfNests(st, s) {
			lane = l
			break
		}
	}
	if lane < 0 {
		ls = append(ls, nil)
		lane = len(ls) - 1
	}
	ls[lane] = append(ls[lane], s)
	*lanes = ls
	return lane
}

// pfNests reports whether slice s, opened on a lane whose open slices are
// st, is closed by its own END. A slice that ends exactly when s starts
// and was written first is already closed when s begins (ties are taken in
// writing order), so it does not enclose s; nor do the slices it was
// keeping on the stack that ended before.
func pfNests(st []pfSpan, s pfSpan) bool {
	i := len(st) - 1
	for i >= 0 && (st[i].end < s.start || st[i].end == s.start && st[i].seq < s.seq) {
		i--
	}
	if i < 0 {
		return true
	}
	parent := st[i]
	if s.end > parent.end {
		return false // crosses its parent's end
	}
	if parent.start == s.start && parent.seq > s.seq && parent.end != s.end {
		return false // s's BEGIN would be taken first, making s the outer slice
	}
	return true
}
