package model

import (
	"sort"

	"github.com/rocprof-go/rocprof-go/internal/output/ranges"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// KernelRenamer implements --kernel-rename on the output side, as rocprofv3
// does it: a dispatch is named after the message on top of its submitting
// thread's ROCTx stack when its HIP call was made, where roctxRangePushA
// and roctxMarkA push and roctxRangePop pops (ranges.Index). The spool holds
// each push/pop pair as one thread-range marker with the push's correlation
// id and, in RangeID, the pop's, and each mark with its own id; a dispatch
// carries its HIP call's correlation id and thread, so the lookup is
// ranges.Index.Find(tid, correlation id).
//
// Markers are written at the pop, after the dispatches they enclose, so the
// index is filled during a writer's first (catalogue) pass and used in the
// second. A nil *kernelRenamer renames nothing.
type KernelRenamer struct {
	idx *ranges.Index
	n   int
	// ids numbers the messages as rocprofv3's JSON does (its
	// correlation_id.external): a message's id is the correlation id of
	// the first push or mark that carried it — first in time: raw ids
	// increase per thread only (the recorder hands them out in per-thread
	// blocks), so across threads the lowest id need not be the earliest.
	ids   map[string]uint64
	first map[string]uint64 // the start of the push or mark ids holds
}

// NewKernelRenamer returns an empty renamer, filled by AddMarker.
func NewKernelRenamer() *KernelRenamer {
	return &KernelRenamer{idx: ranges.New(), ids: map[string]uint64{}, first: map[string]uint64{}}
}

// AddMarker records a marker if it is a thread (push/pop) range or a mark.
func (k *KernelRenamer) AddMarker(m *tracing.Marker) {
	if k == nil {
		return
	}
	msg := string(m.Message)
	switch {
	case m.Function == tracing.MarkerThreadRange && m.RangeID > m.CorrelationID:
		k.idx.Add(m.TID, m.CorrelationID, m.RangeID, msg)
	case m.Function == tracing.MarkerMark:
		k.idx.AddMark(m.TID, m.CorrelationID, msg)
	default:
		return
	}
	k.n++
	if start, ok := k.first[msg]; !ok || m.Start < start || (m.Start == start && m.CorrelationID < k.ids[msg]) {
		k.ids[msg], k.first[msg] = m.CorrelationID, m.Start
	}
}

// External returns the rename id of the range enclosing (tid, corr), 0 when
// none does (or renaming is off): the value rocprofv3 puts in a renamed
// dispatch's correlation_id.external.
func (k *KernelRenamer) External(tid uint32, corr uint64) uint64 {
	if k == nil || k.n == 0 || corr == 0 {
		return 0
	}
	if msg, ok := k.idx.Find(tid, corr); ok {
		return k.ids[msg]
	}
	return 0
}

// RenameStrings is strings.correlation_id.external of rocprofv3's JSON:
// every range message with its id, by id.
func (k *KernelRenamer) RenameStrings() []RenameString {
	if k == nil {
		return nil
	}
	out := make([]RenameString, 0, len(k.ids))
	for msg, id := range k.ids {
		out = append(out, RenameString{id, msg})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// RenameString is a range message and its rename id.
type RenameString struct {
	ID  uint64
	Msg string
}

// Name returns the range message enclosing (tid, corr), or fallback when the
// dispatch was made outside every range (rocprofv3 then keeps the kernel's
// own name).
func (k *KernelRenamer) Name(tid uint32, corr uint64, fallback string) string {
	if k == nil || k.n == 0 || corr == 0 {
		return fallback
	}
	if msg, ok := k.idx.Find(tid, corr); ok {
		return msg
	}
	return fallback
}

// DispatchName is the name every writer should give a dispatch: its kernel's
// formatted name (-M/-T), or with --kernel-rename the enclosing ROCTx range.
func (p *Catalogue) DispatchName(d *tracing.KernelDispatch) string {
	return p.Renamer.Name(d.TID, d.CorrelationID, p.KernelName(d.KernelID))
}
