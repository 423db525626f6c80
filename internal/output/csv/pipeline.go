package csv

import (
	"runtime"
	"sync"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// The second CSV pass runs as a pipeline so that a conversion uses every
// core without changing a byte of the output:
//
//   - the calling goroutine walks the spool in order, decodes each record
//     and resolves what needs the process's caches (function names, kernel
//     symbols, --kernel-rename ranges), appending it to a numbered batch;
//   - formatting goroutines turn whole batches into rows, one byte buffer
//     per domain, touching nothing shared but read-only tables; then, when
//     every earlier batch is written (csvTurn), the same goroutine feeds the
//     order-sensitive parts (stats, counter rows) and
//     writes each domain's buffer to its file, while the rows are still in
//     its cache.
//
// Every file therefore gets its rows in spool order, as before; only the
// interleaving between different files' writes changes.

// BatchRecords is how many records a batch holds: large enough that the
// hand-offs cost nothing, small enough that the batches in flight stay a few
// MiB.
const BatchRecords = 8192

// csvAPIRow is a decoded API call or marker: the seven columns they share.
type csvAPIRow struct {
	domain, name          string
	tid, corr, start, end uint64
}

// csvDispatchRow is a decoded dispatch with its symbol and (renamed) name.
type csvDispatchRow struct {
	d    tracing.KernelDispatch
	k    *csvKernel
	name string
}

// csvBatch is a run of consecutive records, split by domain.
type csvBatch struct {
	api        [model.NumDomains][]csvAPIRow // domHIP, domHSA, domMarker, domRCCL
	dispatches []csvDispatchRow
	copies     []tracing.MemoryCopy
	allocs     []tracing.MemoryAllocation
	scratch    []tracing.ScratchMemory
	n          int

	out  [model.NumDomains][]byte // formatted rows per domain
	rows [model.NumDomains]uint64
	seq  uint64 // batches are numbered in reading order
}

func (b *csvBatch) reset() {
	for d := range b.api {
		b.api[d] = b.api[d][:0]
	}
	b.dispatches, b.copies = b.dispatches[:0], b.copies[:0]
	b.allocs, b.scratch = b.allocs[:0], b.scratch[:0]
	b.n = 0
	for d := range b.out {
		b.out[d] = b.out[d][:0]
		b.rows[d] = 0
	}
}

// csvFormatWorkers is how many goroutines format batches.
func csvFormatWorkers() int { return max(1, min(runtime.GOMAXPROCS(0), 4)) }

// csvTurn lets the formatting goroutines write their batches in reading
// order: batch seq waits until every batch before it is written.
type csvTurn struct {
	mu   sync.Mutex
	cond sync.Cond
	next uint64
}

func (t *csvTurn) wait(seq uint64) {
	t.mu.Lock()
	for t.next != seq {
		t.cond.Wait()
	}
	t.mu.Unlock()
}

func (t *csvTurn) done() {
	t.mu.Lock()
	t.next++
	t.cond.Broadcast()
	t.mu.Unlock()
}

// writeProcess streams one spool's records into the set's files.
func (g *csvGroup) writeProcess(p *csvProcess, r *model.SpoolView) {
	workers := csvFormatWorkers()
	depth := 2*workers + 1
	free := make(chan *csvBatch, depth)
	for i := 0; i < depth; i++ {
		free <- &csvBatch{}
	}
	work := make(chan *csvBatch, depth)
	turn := &csvTurn{}
	turn.cond.L = &turn.mu
	var counted map[uint64]bool
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				g.formatBatch(p, b)
				// The batch's rows are written by the goroutine that
				// formatted them, while they are in its cache.
				turn.wait(b.seq)
				counted = g.accountBatch(p, b, counted)
				for d, f := range g.files {
					if f != nil {
						f.writeRows(b.out[d], b.rows[d])
					}
				}
				turn.done()
				b.reset()
				free <- b
			}
		}()
	}
	g.readBatches(p, r, free, work)
	wg.Wait()
	g.orphanCounterRows(p, counted)
}

// readBatches walks the spool: records in rocprofv3's order (order.go), decoded and named,
// in numbered batches handed to the formatting goroutines.
func (g *csvGroup) readBatches(p *csvProcess, r *model.SpoolView, free <-chan *csvBatch,
	work chan<- *csvBatch) {
	defer close(work)
	var b *csvBatch
	var seq uint64
	for r.Next() {
		if b == nil {
			b = <-free
			b.seq, seq = seq, seq+1
		}
		switch r.Kind() {
		case tracing.KindHIPAPI, tracing.KindHSAAPI, tracing.KindRCCLAPI:
			d := model.KindDomain(r.Kind())
			a := r.APICall()
			b.api[d] = append(b.api[d], csvAPIRow{domain: a.Domain.String(),
				name: p.FuncName(a.Domain, a.Function), tid: uint64(a.TID),
				corr: a.CorrelationID, start: a.Start, end: a.End})
		case tracing.KindMarker:
			m := r.Marker()
			var name string
			if m.Function.CarriesMessage() {
				name = string(m.Message)
			} else {
				name = m.Function.String()
			}
			b.api[model.DomMarker] = append(b.api[model.DomMarker], csvAPIRow{
				domain: m.Domain.String(), name: name, tid: uint64(m.TID),
				corr: m.CorrelationID, start: m.Start, end: m.End})
		case tracing.KindKernelDispatch:
			b.dispatches = append(b.dispatches, csvDispatchRow{d: r.KernelDispatch()})
			row := &b.dispatches[len(b.dispatches)-1]
			row.k = p.kernel(row.d.KernelID, &row.d)
			row.name = p.Renamer.Name(row.d.TID, row.d.CorrelationID, row.k.name)
		case tracing.KindMemoryCopy:
			b.copies = append(b.copies, r.MemoryCopy())
		case tracing.KindMemoryAllocation:
			b.allocs = append(b.allocs, r.MemoryAllocation())
		case tracing.KindScratchMemory:
			b.scratch = append(b.scratch, r.ScratchMemory())
		default:
			continue
		}
		if b.n++; b.n == BatchRecords {
			work <- b
			b = nil
		}
	}
	if b != nil {
		work <- b
	}
}

// formatBatch formats a batch's rows of every domain that has a file. It
// runs on a formatting goroutine: it reads the process's tables, never
// writes them.
func (g *csvGroup) formatBatch(p *csvProcess, bt *csvBatch) {
	pid := uint64(uint32(p.Info.PID))
	for _, d := range [...]model.Domain{model.DomHIP, model.DomHSA, model.DomMarker, model.DomRCCL} {
		if g.files[d] == nil || len(bt.api[d]) == 0 {
			continue
		}
		b := bt.out[d]
		for i := range bt.api[d] {
			a := &bt.api[d][i]
			b = appendAPIRow(b, a.domain, a.name, pid, a.tid, p.CID(a.corr), a.start, a.end)
			b = append(b, '\n')
		}
		bt.out[d], bt.rows[d] = b, uint64(len(bt.api[d]))
	}
	if g.files[model.DomKernel] != nil && len(bt.dispatches) > 0 {
		b := bt.out[model.DomKernel]
		for i := range bt.dispatches {
			row := &bt.dispatches[i]
			d, k := &row.d, row.k
			b = append(b, `"KERNEL_DISPATCH",`...)
			b = appendQuoted(b, p.Label(d.AgentNode))
			b = append(b, ',')
			b = appendUint(b, d.QueueID)
			b = appendUint(b, d.StreamID)
			b = appendUint(b, uint64(d.TID))
			b = appendUint(b, d.DispatchID)
			b = appendUint(b, d.KernelID)
			b = appendQuoted(b, row.name)
			b = append(b, ',')
			b = appendUint(b, p.CID(d.CorrelationID))
			b = appendUint(b, d.Start)
			b = appendUint(b, d.End)
			b = appendUint(b, k.ldsBlockSize)
			b = appendUint(b, uint64(d.PrivateSegmentSize))
			b = appendUint(b, uint64(k.vgpr))
			b = appendUint(b, uint64(k.agpr))
			b = appendUint(b, uint64(k.sgpr))
			b = appendUint(b, uint64(d.Workgroup[0]))
			b = appendUint(b, uint64(d.Workgroup[1]))
			b = appendUint(b, uint64(d.Workgroup[2]))
			b = appendUint(b, uint64(d.Grid[0]))
			b = appendUint(b, uint64(d.Grid[1]))
			b = appendDecimal(b, uint64(d.Grid[2]))
			b = append(b, '\n')
		}
		bt.out[model.DomKernel], bt.rows[model.DomKernel] = b, uint64(len(bt.dispatches))
	}
	if g.files[model.DomCopy] != nil && len(bt.copies) > 0 {
		b := bt.out[model.DomCopy]
		for i := range bt.copies {
			c := &bt.copies[i]
			b = append(b, `"MEMORY_COPY",`...)
			b = appendQuoted(b, c.Direction.String())
			b = append(b, ',')
			b = appendUint(b, c.StreamID)
			b = appendQuoted(b, p.Label(c.SrcAgentNode))
			b = append(b, ',')
			b = appendQuoted(b, p.Label(c.DstAgentNode))
			b = append(b, ',')
			b = appendUint(b, p.CID(c.CorrelationID))
			b = appendUint(b, c.Start)
			b = appendDecimal(b, c.End)
			b = append(b, '\n')
		}
		bt.out[model.DomCopy], bt.rows[model.DomCopy] = b, uint64(len(bt.copies))
	}
	if g.files[model.DomAlloc] != nil && len(bt.allocs) > 0 {
		b := bt.out[model.DomAlloc]
		for i := range bt.allocs {
			a := &bt.allocs[i]
			b = append(b, `"MEMORY_ALLOCATION",`...)
			b = appendQuoted(b, a.Operation.String())
			b = append(b, ',')
			if a.Operation.IsAllocate() {
				b = appendQuoted(b, p.Label(a.AgentNode))
			} else {
				b = append(b, `""`...)
			}
			b = append(b, ',')
			b = appendUint(b, a.Size)
			b = appendAddress(b, a.Address)
			b = append(b, ',')
			b = appendUint(b, p.CID(a.CorrelationID))
			b = appendUint(b, a.Start)
			b = appendDecimal(b, a.End)
			b = append(b, '\n')
		}
		bt.out[model.DomAlloc], bt.rows[model.DomAlloc] = b, uint64(len(bt.allocs))
	}
	if g.files[model.DomScratch] != nil && len(bt.scratch) > 0 {
		b := bt.out[model.DomScratch]
		for i := range bt.scratch {
			s := &bt.scratch[i]
			b = append(b, `"SCRATCH_MEMORY",`...)
			b = appendQuoted(b, s.Operation.String())
			b = append(b, ',')
			b = appendQuoted(b, p.Label(s.AgentNode))
			b = append(b, ',')
			b = appendUint(b, s.QueueID)
			b = appendUint(b, uint64(s.TID))
			b = appendUint(b, uint64(s.Flags))
			b = appendUint(b, s.Start)
			b = appendUint(b, s.End)
			b = appendDecimal(b, s.Size)
			b = append(b, '\n')
		}
		bt.out[model.DomScratch], bt.rows[model.DomScratch] = b, uint64(len(bt.scratch))
	}
}

// accountBatch feeds a batch, in reading order, to what depends on the
// order of the records: the stats tables and the counter rows (written on a
// dispatch's first record). It returns the dispatch ids whose counter rows
// are written.
func (g *csvGroup) accountBatch(p *csvProcess, bt *csvBatch, counted map[uint64]bool) map[uint64]bool {
	for _, d := range [...]model.Domain{model.DomHIP, model.DomHSA, model.DomMarker, model.DomRCCL} {
		t := g.stats[d]
		if t == nil {
			continue
		}
		var last string
		var lastStat *model.NamedStat
		for i := range bt.api[d] {
			a := &bt.api[d][i]
			if lastStat == nil || a.name != last {
				last = a.name
				lastStat = t.Get(a.name)
			}
			lastStat.Add(model.SpanUnsigned(a.start, a.end))
		}
	}
	countersOn := len(p.CounterSums) > 0 && g.files[model.DomCounter] != nil
	if t := g.stats[model.DomKernel]; t != nil || countersOn {
		for i := range bt.dispatches {
			row := &bt.dispatches[i]
			d := &row.d
			if t != nil {
				t.Get(row.name).Add(model.SpanUnsigned(d.Start, d.End))
			}
			if !countersOn {
				continue
			}
			if sums, ok := p.CounterSums[d.DispatchID]; ok {
				if counted == nil {
					counted = map[uint64]bool{}
				}
				if !counted[d.DispatchID] {
					counted[d.DispatchID] = true
					g.counterRows(p, d, row.k, row.name, sums)
				}
			}
		}
	}
	if t := g.stats[model.DomCopy]; t != nil {
		for i := range bt.copies {
			c := &bt.copies[i]
			t.Get(c.Direction.String()).Add(model.SpanUnsigned(c.Start, c.End))
		}
	}
	if t := g.stats[model.DomAlloc]; t != nil {
		for i := range bt.allocs {
			a := &bt.allocs[i]
			t.Get(a.Operation.String()).Add(model.SpanUnsigned(a.Start, a.End))
		}
	}
	if t := g.stats[model.DomScratch]; t != nil {
		for i := range bt.scratch {
			s := &bt.scratch[i]
			t.Get(s.Operation.String()).Add(model.SpanUnsigned(s.Start, s.End))
		}
	}
	return counted
}
