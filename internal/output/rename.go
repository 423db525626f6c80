package output

import (
	"github.com/rocprof-go/rocprof-go/internal/hsa/hiptrace/ranges"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// kernelRenamer implements --kernel-rename on the output side: a dispatch is
// named after the innermost roctxRangePush..roctxRangePop range that was open
// on its submitting thread when its HIP call was made. The spool holds each
// push/pop pair as one thread-range marker with the push's correlation id
// and, in RangeID, the pop's; a dispatch carries its HIP call's correlation
// id and thread, so the lookup is ranges.Index.Find(tid, correlation id).
//
// Markers are written at the pop, after the dispatches they enclose, so the
// index is filled during a writer's first (catalogue) pass and used in the
// second. A nil *kernelRenamer renames nothing.
type kernelRenamer struct {
	idx *ranges.Index
	n   int
}

func newKernelRenamer() *kernelRenamer { return &kernelRenamer{idx: ranges.New()} }

// addMarker records a marker if it is a thread (push/pop) range.
func (k *kernelRenamer) addMarker(m *tracing.Marker) {
	if k == nil || m.Function != tracing.MarkerThreadRange || m.RangeID <= m.CorrelationID {
		return
	}
	k.idx.Add(m.TID, m.CorrelationID, m.RangeID, string(m.Message))
	k.n++
}

// name returns the range message enclosing (tid, corr), or fallback when the
// dispatch was made outside every range (rocprofv3 then keeps the kernel's
// own name).
func (k *kernelRenamer) name(tid uint32, corr uint64, fallback string) string {
	if k == nil || k.n == 0 || corr == 0 {
		return fallback
	}
	if msg, ok := k.idx.Find(tid, corr); ok {
		return msg
	}
	return fallback
}

// dispatchName is the name every writer should give a dispatch: its kernel's
// formatted name (-M/-T), or with --kernel-rename the enclosing ROCTx range.
func (p *process) dispatchName(d *tracing.KernelDispatch) string {
	return p.renamer.name(d.TID, d.CorrelationID, p.kernelName(d.KernelID))
}

// regionName is a ROCpd dispatch's region_name_id: the string id of its
// enclosing ROCTx range under --kernel-rename, else none (the empty string).
func (w *rocpdWriter) regionName(p *process, d *tracing.KernelDispatch, none int64) int64 {
	if p.renamer == nil {
		return none
	}
	if msg := p.renamer.name(d.TID, d.CorrelationID, ""); msg != "" {
		return w.str(msg)
	}
	return none
}
