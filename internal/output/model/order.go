package model

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"

	"github.com/rocprof-go/rocprof-go/internal/spill"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// recordOrder makes a spool read as rocprofv3 writes its files:
//
//   - Records of each kind in completion order. rocprofv3's buffers take a
//     record when its call, dispatch or copy completes, from every thread in
//     turn, and its writers keep that order; a spool holds each thread's
//     records in that thread's chunks, so a kind recorded by several threads
//     (or kernels recorded by whichever thread saw them complete) comes out
//     of spool order interleaved differently. The order is by end timestamp,
//     then start, then spool position; a counter sample follows its dispatch.
//   - Correlation ids numbered 1, 2, 3, ... per process, in the order of the
//     calls' starts, over the ids traced records carry. The preload library
//     hands ids out in per-thread blocks (no shared counter on the call
//     path), so raw ids have gaps and are not in global order; rocprofv3
//     numbers only the calls it traces. A dispatch or copy keeps pointing to
//     its call (both are renumbered alike); a thread range's pop also takes
//     a number, as rocprofv3's roctxRangePop does. The spool keeps the raw
//     ids; lookups that compare ids (--kernel-rename, stream numbers) use
//     them.
//
// A writer's catalogue pass shows every record to observe, then finish
// sorts what needs sorting (nothing, when each kind is in order already:
// then no position is held). Kinds in order cost nothing per record beyond
// their key; a kind out of order costs 16 bytes per record (its position)
// while the spool is written, and the renumbering 16 bytes per distinct id
// during finish and 4 bytes per raw id afterwards. A spool with counter
// samples is read once more in finish (sampleOrder: the dispatches' keys,
// 24 bytes per dispatch, and whether the samples are in their order).
//
// Past spillAt ids or out-of-order records, that per-record state goes to
// disk instead (internal/spill, issue 43): the ids and the positions are
// sorted by an external merge sort in runs of bounded size, and the tables
// the writers read (the numbers by raw id, the positions in order) are
// file-backed arrays, so the CLI's memory does not grow with the trace.
// Both ways give the same order and numbers.
type recordOrder struct {
	ids corrIDs

	spill    spill.Dir
	pairSort *spill.Sorter[corrPair] // the pairs, once past spillAt
	npairs   int
	lo, hi   uint64 // the raw ids' range
	err      error  // a spill file's failure: the scan fails with it
	arrays   []interface{ Close() error }

	last     [32]orderKey
	unsorted [32]bool
	count    [32]int // records per kind: the second pass's lists are made to size
	// pairs are the ids seen, in fixed blocks: a growing slice would copy
	// them over and over on a spool of millions of calls.
	pairs [][]corrPair

	marks  tracing.Marks
	sorted [32][]tracing.Pos // records of a kind out of order, in order; nil for others
}

type orderKey struct{ end, start uint64 }

func (a orderKey) less(b orderKey) bool {
	return a.end < b.end || a.end == b.end && a.start < b.start
}

// corrPair is a raw correlation id and the start of something carrying it.
type corrPair struct{ raw, start uint64 }

// orderedKind reports whether records of a kind are put in completion order.
func orderedKind(k tracing.Kind) bool {
	switch k {
	case tracing.KindHIPAPI, tracing.KindHSAAPI, tracing.KindRCCLAPI, tracing.KindMarker, tracing.KindKernelDispatch,
		tracing.KindMemoryCopy, tracing.KindMemoryAllocation, tracing.KindScratchMemory:
		return true
	}
	return false
}

// observe notes the reader's current record (the catalogue pass).
func (o *recordOrder) observe(r *tracing.Reader) {
	k := r.Kind()
	if !orderedKind(k) {
		o.note(k, orderKey{}, 0)
		return
	}
	key, corr := recordKey(r)
	o.note(k, key, corr)
	if k == tracing.KindMarker {
		m := r.Marker()
		o.notePop(&m)
	}
}

// note is observe for a record the caller decoded: its kind, and for an
// ordered kind its completion key and raw correlation id. The catalogue
// scan decodes each record once, for itself and the order.
func (o *recordOrder) note(k tracing.Kind, key orderKey, corr uint64) {
	if k < 32 {
		o.count[k]++
	}
	if !orderedKind(k) {
		return
	}
	if key.less(o.last[k]) {
		o.unsorted[k] = true
	}
	o.last[k] = key
	if corr != 0 {
		o.addPair(corrPair{corr, key.start})
	}
}

// notePop notes a thread range's pop, which takes a correlation id of its
// own (a marker's note covers its push).
func (o *recordOrder) notePop(m *tracing.Marker) {
	if m.Function == tracing.MarkerThreadRange && m.RangeID > m.CorrelationID {
		o.addPair(corrPair{m.RangeID, m.End})
	}
}

const pairBlock = 8192

// spillAt is how many ids, or out-of-order records, the order holds in
// memory before it spills them (tests lower it).
var spillAt = spill.DefaultRun

func byRawStart(a, b corrPair) int {
	if c := cmp.Compare(a.raw, b.raw); c != 0 {
		return c
	}
	return cmp.Compare(a.start, b.start)
}

func byStartRaw(a, b corrPair) int {
	if c := cmp.Compare(a.start, b.start); c != 0 {
		return c
	}
	return cmp.Compare(a.raw, b.raw)
}

func (o *recordOrder) fail(err error) {
	if err != nil && o.err == nil {
		o.err = fmt.Errorf("putting the records in order: %w", err)
	}
}

func (o *recordOrder) addPair(p corrPair) {
	if o.npairs == 0 {
		o.lo, o.hi = p.raw, p.raw
	}
	o.lo, o.hi = min(o.lo, p.raw), max(o.hi, p.raw)
	o.npairs++
	if o.pairSort != nil {
		o.fail(o.pairSort.Add(p))
		return
	}
	if o.npairs > spillAt {
		o.pairSort = spill.NewSorter(&o.spill, spillAt, byRawStart)
		for _, b := range o.pairs {
			for _, q := range b {
				o.fail(o.pairSort.Add(q))
			}
		}
		o.pairs = nil
		o.fail(o.pairSort.Add(p))
		return
	}
	n := len(o.pairs)
	if n == 0 || len(o.pairs[n-1]) == pairBlock {
		o.pairs = append(o.pairs, make([]corrPair, 0, pairBlock))
		n++
	}
	o.pairs[n-1] = append(o.pairs[n-1], p)
}

// recordKey is a record's completion key and raw correlation id.
func recordKey(r *tracing.Reader) (orderKey, uint64) {
	switch r.Kind() {
	case tracing.KindHIPAPI, tracing.KindHSAAPI, tracing.KindRCCLAPI:
		a := r.APICall()
		return orderKey{a.End, a.Start}, a.CorrelationID
	case tracing.KindMarker:
		m := r.Marker()
		return orderKey{m.End, m.Start}, m.CorrelationID
	case tracing.KindKernelDispatch:
		d := r.KernelDispatch()
		return orderKey{d.End, d.Start}, d.CorrelationID
	case tracing.KindMemoryCopy:
		c := r.MemoryCopy()
		return orderKey{c.End, c.Start}, c.CorrelationID
	case tracing.KindMemoryAllocation:
		a := r.MemoryAllocation()
		return orderKey{a.End, a.Start}, a.CorrelationID
	case tracing.KindScratchMemory:
		s := r.ScratchMemory()
		return orderKey{s.End, s.Start}, s.CorrelationID
	}
	return orderKey{}, 0
}

// finish numbers the correlation ids and, for the kinds found out of order,
// reads the spool again to note their records' positions in order. Markers
// the writers hide (recorded for --kernel-rename only) keep their numbers
// (rocprofv3 numbers the ROCTx calls it watches for renaming) but need no
// order. keepIDs leaves the ids as they are (a spool made from a ROCpd
// database has rocprofv3's own). The reader is rewound.
func (o *recordOrder) finish(r *tracing.Reader, hideMarkers, keepIDs bool) {
	if !keepIDs && o.pairSort != nil {
		o.fail(o.numberSpilled())
	} else if !keepIDs {
		o.ids = numberCorrelations(o.pairs)
	}
	if o.pairSort != nil {
		o.pairSort.Close()
		o.pairSort = nil
	}
	o.pairs = nil
	if hideMarkers {
		o.unsorted[tracing.KindMarker] = false
	}
	// Counter samples go by their dispatch's key. Their own spool order is
	// checked apart from the dispatches': the shim records a dispatch when
	// its kernel's signal completes and its samples when the counter read
	// after it completes, each on whichever thread saw it (the queue's
	// completion thread, an app thread waiting), so a dispatch's samples can
	// sit in a chunk before its record, and before the samples of the
	// dispatches that completed ahead of it, with the dispatch records
	// themselves in order. Only a run with counters has any.
	var dispatchKey map[uint64]orderKey
	if o.count[tracing.KindCounterSample] > 0 {
		var inOrder bool
		dispatchKey, inOrder = sampleOrder(r)
		o.unsorted[tracing.KindCounterSample] = o.unsorted[tracing.KindKernelDispatch] || !inOrder
	} else {
		o.unsorted[tracing.KindCounterSample] = false
	}
	if !slices.Contains(o.unsorted[:], true) {
		r.Rewind()
		return
	}
	total, kinds := 0, 0
	for k, u := range o.unsorted {
		if u {
			total += o.count[k]
			kinds++
		}
	}
	if total > spillAt {
		o.fail(o.sortSpilled(r, dispatchKey, kinds))
		r.Rewind()
		return
	}
	var lists [32][]entry
	for k, u := range o.unsorted {
		if u {
			lists[k] = make([]entry, 0, o.count[k])
		}
	}
	r.Rewind()
	for r.Next() {
		k := r.Kind()
		if !o.unsorted[k] {
			continue
		}
		lists[k] = append(lists[k], entry{key: sortKey(r, dispatchKey), pos: o.marks.Mark(r)})
	}
	for k := range lists {
		l := lists[k]
		if len(l) == 0 {
			continue
		}
		// Stable: equal keys keep spool order (a dispatch's samples stay in
		// the order the shim wrote them).
		slices.SortStableFunc(l, func(a, b entry) int {
			if c := cmp.Compare(a.key.end, b.key.end); c != 0 {
				return c
			}
			return cmp.Compare(a.key.start, b.key.start)
		})
		pos := make([]tracing.Pos, len(l))
		for i := range l {
			pos[i] = l[i].pos
		}
		o.sorted[k] = pos
		lists[k] = nil
	}
	r.Rewind()
}

// sortKey is the key an out-of-order record of the current position sorts
// by: a counter sample takes its dispatch's (dispatchKey), any other record
// its own times.
func sortKey(r *tracing.Reader, dispatchKey map[uint64]orderKey) orderKey {
	if r.Kind() == tracing.KindCounterSample {
		return dispatchKey[r.CounterSample().DispatchID]
	}
	key, _ := recordKey(r)
	return key
}

// entry is an out-of-order record: its key, its place in spool order (the
// spilled sort's tie-break, as the stable sort in memory keeps it) and its
// position.
type entry struct {
	key orderKey
	seq uint64
	pos tracing.Pos
}

func byKeySeq(a, b entry) int {
	if c := cmp.Compare(a.key.end, b.key.end); c != 0 {
		return c
	}
	if c := cmp.Compare(a.key.start, b.key.start); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// sortSpilled is finish's sort of the out-of-order kinds through spill
// files: each kind's entries sorted in runs sharing spillAt entries of
// memory, merged into a file-backed array of positions.
func (o *recordOrder) sortSpilled(r *tracing.Reader, dispatchKey map[uint64]orderKey, kinds int) error {
	var sorters [32]*spill.Sorter[entry]
	defer func() {
		for _, s := range sorters {
			if s != nil {
				s.Close()
			}
		}
	}()
	for k, u := range o.unsorted {
		if u {
			sorters[k] = spill.NewSorter(&o.spill, max(spillAt/kinds, 1), byKeySeq)
		}
	}
	r.Rewind()
	var seq uint64
	for r.Next() {
		k := r.Kind()
		if !o.unsorted[k] {
			continue
		}
		seq++
		if err := sorters[k].Add(entry{sortKey(r, dispatchKey), seq, o.marks.Mark(r)}); err != nil {
			return err
		}
	}
	for k, s := range sorters {
		if s == nil || s.Len() == 0 {
			continue
		}
		a, err := spill.NewArray[tracing.Pos](&o.spill, int(s.Len()))
		if err != nil {
			return err
		}
		o.keep(a)
		i := 0
		if err := s.Each(func(e entry) error { a.Values[i] = e.pos; i++; return nil }); err != nil {
			return err
		}
		o.sorted[k] = a.Values
		sorters[k] = nil
	}
	return nil
}

// keep holds a file-backed array for as long as the order is in use: it is
// unmapped once the order (its catalogue, every view of it) is unreachable.
func (o *recordOrder) keep(a interface{ Close() error }) {
	o.arrays = append(o.arrays, a)
	runtime.SetFinalizer(a, func(a interface{ Close() error }) { a.Close() })
}

// numberSpilled is numberCorrelations for pairs spilled to disk: the
// pairs sorted by raw id give each id its earliest start, those sorted by
// start give the numbers, written to a file-backed table indexed by raw id
// (ids dense enough) or sorted by it.
func (o *recordOrder) numberSpilled() error {
	byStart := spill.NewSorter(&o.spill, spillAt, byStartRaw)
	defer byStart.Close()
	var last corrPair
	have := false
	err := o.pairSort.Each(func(p corrPair) error {
		if have && p.raw == last.raw {
			return nil // its earliest start came first
		}
		last, have = p, true
		return byStart.Add(p)
	})
	o.pairSort = nil
	if err != nil {
		return err
	}
	if span := o.hi - o.lo + 1; span <= 4*uint64(o.npairs)+4096 && span < 1<<32 {
		a, err := spill.NewArray[uint32](&o.spill, int(span))
		if err != nil {
			return err
		}
		o.keep(a)
		var n uint32
		if err := byStart.Each(func(p corrPair) error { n++; a.Values[p.raw-o.lo] = n; return nil }); err != nil {
			return err
		}
		o.ids = corrIDs{base: o.lo, dense: a.Values}
		return nil
	}
	byRaw := spill.NewSorter(&o.spill, spillAt, byRawStart)
	defer byRaw.Close()
	var n uint64
	if err := byStart.Each(func(p corrPair) error { n++; return byRaw.Add(corrPair{p.raw, n}) }); err != nil {
		return err
	}
	a, err := spill.NewArray[corrPair](&o.spill, int(byRaw.Len()))
	if err != nil {
		return err
	}
	o.keep(a)
	i := 0
	if err := byRaw.Each(func(p corrPair) error { a.Values[i] = p; i++; return nil }); err != nil {
		return err
	}
	o.ids = corrIDs{table: a.Values}
	return nil
}

// sampleOrder reads the spool's dispatch records and counter samples: the
// completion key of every dispatch (all of them before any sample is given
// one: a sample may come before its dispatch's record), and whether the
// samples are in their dispatches' completion order already, as the runs of
// samples of one dispatch follow each other in the spool. A sample whose
// dispatch has no record takes the zero key (first).
func sampleOrder(r *tracing.Reader) (map[uint64]orderKey, bool) {
	keys := map[uint64]orderKey{}
	var runs []uint64 // the dispatch of each run of samples, in spool order
	r.Rewind()
	for r.Next() {
		switch r.Kind() {
		case tracing.KindKernelDispatch:
			d := r.KernelDispatch()
			keys[d.DispatchID] = orderKey{d.End, d.Start}
		case tracing.KindCounterSample:
			if id := r.CounterSample().DispatchID; len(runs) == 0 || runs[len(runs)-1] != id {
				runs = append(runs, id)
			}
		}
	}
	for i := 1; i < len(runs); i++ {
		if keys[runs[i]].less(keys[runs[i-1]]) {
			return keys, false
		}
	}
	return keys, true
}

// corrIDs maps raw correlation ids to rocprofv3's dense numbers. The zero
// value maps every id to itself.
type corrIDs struct {
	base   uint64
	dense  []uint32          // dense[raw-base]: the number, 0 for ids never seen
	sparse map[uint64]uint64 // when raw ids are too spread out for dense
	table  []corrPair        // spilled sparse: {raw, number} sorted by raw
}

// of returns the number of a raw correlation id (0 stays 0).
func (c *corrIDs) of(raw uint64) uint64 {
	if c == nil || raw == 0 {
		return raw
	}
	if c.dense != nil {
		if i := raw - c.base; raw >= c.base && i < uint64(len(c.dense)) && c.dense[i] != 0 {
			return uint64(c.dense[i])
		}
		return raw
	}
	if c.table != nil {
		if i, ok := slices.BinarySearchFunc(c.table, raw, func(p corrPair, raw uint64) int { return cmp.Compare(p.raw, raw) }); ok {
			return c.table[i].start
		}
		return raw
	}
	if n, ok := c.sparse[raw]; ok {
		return n
	}
	return raw
}

// numberCorrelations gives each distinct raw id its place by the earliest
// start among the records carrying it (a call starts before the dispatches
// and copies it made), ties by raw id.
func numberCorrelations(blocks [][]corrPair) corrIDs {
	if len(blocks) == 0 {
		return corrIDs{}
	}
	n := 0
	lo, hi := blocks[0][0].raw, blocks[0][0].raw
	for _, b := range blocks {
		n += len(b)
		for _, p := range b {
			lo, hi = min(lo, p.raw), max(hi, p.raw)
		}
	}
	byStart := func(a, b corrPair) int {
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		return cmp.Compare(a.raw, b.raw)
	}
	// Raw ids come in per-thread blocks, mostly used: a table indexed by raw
	// id is small, and fills without sorting. Ids spread far apart (many
	// untraced calls between traced ones) are sorted and get a map instead.
	if span := hi - lo + 1; span <= 4*uint64(n)+4096 && span < 1<<32 {
		const none = ^uint64(0)
		first := make([]uint64, span)
		for i := range first {
			first[i] = none
		}
		for _, b := range blocks {
			for _, p := range b {
				first[p.raw-lo] = min(first[p.raw-lo], p.start)
			}
		}
		ids := corrIDs{base: lo, dense: make([]uint32, span)}
		// One thread's ids are in start order already: number them in raw
		// order while that holds.
		var count, prev uint64
		inOrder := true
		for i, start := range first {
			if start == none {
				continue
			}
			if count > 0 && start < prev {
				inOrder = false
				break
			}
			prev, count = start, count+1
			ids.dense[i] = uint32(count)
		}
		if inOrder {
			return ids
		}
		uniq := make([]corrPair, 0, n)
		for i, start := range first {
			if start != none {
				uniq = append(uniq, corrPair{lo + uint64(i), start})
			}
		}
		slices.SortFunc(uniq, byStart)
		for i, p := range uniq {
			ids.dense[p.raw-lo] = uint32(i + 1)
		}
		return ids
	}
	pairs := make([]corrPair, 0, n)
	for _, b := range blocks {
		pairs = append(pairs, b...)
	}
	slices.SortFunc(pairs, func(a, b corrPair) int {
		if c := cmp.Compare(a.raw, b.raw); c != 0 {
			return c
		}
		return cmp.Compare(a.start, b.start)
	})
	uniq := pairs[:1]
	for _, p := range pairs[1:] {
		if p.raw != uniq[len(uniq)-1].raw {
			uniq = append(uniq, p)
		}
	}
	slices.SortFunc(uniq, byStart)
	ids := corrIDs{sparse: make(map[uint64]uint64, len(uniq))}
	for i, p := range uniq {
		ids.sparse[p.raw] = uint64(i + 1)
	}
	return ids
}

// SpoolView is a reader whose Next follows the recordOrder: wherever spool
// order has a record of a kind that is out of order, the view shows that
// kind's next record in completion order instead. Records of other kinds,
// and the kinds' places among each other, stay as the spool has them.
type SpoolView struct {
	*tracing.Reader
	order *recordOrder
	seq   tracing.Pos // the spool-order position behind the record shown
	moved bool        // the record shown is not the one at seq
	next  [32]int
}

// NewSpoolView reads r in the order o noted (nil: spool order).
func NewSpoolView(r *tracing.Reader, o *recordOrder) *SpoolView {
	return &SpoolView{Reader: r, order: o}
}

// Rewind starts the view again.
func (v *SpoolView) Rewind() {
	v.Reader.Rewind()
	v.moved = false
	v.next = [32]int{}
}

// Next advances to the next record in rocprofv3's order.
func (v *SpoolView) Next() bool {
	o := v.order
	if o == nil {
		return v.Reader.Next()
	}
	if v.moved {
		o.marks.Seek(v.Reader, v.seq) // back to where spool order was
		v.moved = false
	}
	if !v.Reader.Next() {
		return false
	}
	k := v.Reader.Kind()
	if k < 32 && o.sorted[k] != nil && v.next[k] < len(o.sorted[k]) {
		v.seq = o.marks.Mark(v.Reader)
		o.marks.Seek(v.Reader, o.sorted[k][v.next[k]])
		v.next[k]++
		v.moved = true
	}
	return true
}

// SetSpillThreshold makes the order spill past n ids or out-of-order
// records instead of spill.DefaultRun, for tests that take the spilled
// path with small spools; it returns the function that restores it.
func SetSpillThreshold(n int) (restore func()) {
	old := spillAt
	spillAt = n
	return func() { spillAt = old }
}

// SpillThreshold is how many values a writer may hold per record in memory
// before it works through spill files instead (internal/spill).
func SpillThreshold() int { return spillAt }

// Spill is where the catalogue's writers put their spill files
// (Config.SpillDir).
func (p *Catalogue) Spill() *spill.Dir { return &p.Order.spill }
