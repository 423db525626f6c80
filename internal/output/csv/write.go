package csv

import (
	"sort"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// csvGroup writes one set of files.
type csvGroup struct {
	cfg    *model.Config
	prefix string
	files  [model.NumDomains]*csvFile // nil: domain not written
	stats  [model.NumDomains]*model.StatTable
}

// WriteGroup writes one group's CSV files (and with --stats its stats
// files) at prefix from its catalogues, listing them in res.
func WriteGroup(cfg *model.Config, prefix string, cats []*model.Catalogue, res *model.Result) error {
	procs := make([]*csvProcess, len(cats))
	for i, c := range cats {
		procs[i] = newCSVProcess(c)
	}
	// The catalogues (pass 1) hold each domain's raw size.
	var bytes [model.NumDomains]uint64
	var total uint64
	for _, p := range procs {
		for d := range bytes {
			bytes[d] += p.Bytes[d]
			total += p.Bytes[d]
		}
	}
	g := &csvGroup{cfg: cfg, prefix: prefix}
	csvOn := cfg.Has(model.FormatCSV)
	for _, d := range model.CSVOrder {
		if bytes[d] == 0 || bytes[d] < cfg.MinimumOutputBytes {
			continue
		}
		if d == model.DomKernel && cfg.OmitKernelTrace {
			continue // dispatch records exist only to carry the counters' dispatch columns
		}
		if csvOn {
			g.files[d] = newCSVFile(cfg.FS, prefix, model.Domains[d].CSVFile, model.Domains[d].Column,
				Headers[d])
		}
		if cfg.Stats && model.Domains[d].CSVStats != "" {
			g.stats[d] = &model.StatTable{}
		}
	}

	// Pass 2: rows, in rocprofv3's order (completion order per kind; the
	// positions noted in pass 1 stay valid: the spool is the same file).
	for _, p := range procs {
		r, err := tracing.Open(p.Info.Path)
		if err != nil {
			return err
		}
		if cfg.HideMarkers {
			r.Hide(tracing.KindMarker)
		}
		g.writeProcess(p, model.NewSpoolView(r, &p.Order))
		_ = r.Close()
	}

	var firstErr error
	keep := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	for _, d := range model.CSVOrder {
		if f := g.files[d]; f != nil {
			keep(f.close())
			if f.created() {
				res.Files = append(res.Files, model.File{Path: f.path, Format: model.FormatCSV, Name: f.name,
					Domain: f.domain, Records: f.rows, Bytes: f.bytes})
			}
		}
		if t := g.stats[d]; t != nil && len(t.Rows) > 0 {
			f := newCSVFile(cfg.FS, prefix, model.Domains[d].CSVStats, model.Domains[d].Column, csvStatsColumns)
			writeStats(f, t.Rows)
			keep(f.close())
			if f.created() {
				res.Files = append(res.Files, model.File{Path: f.path, Format: model.FormatCSV, Name: f.name, Domain: f.domain,
					Records: f.rows, Bytes: f.bytes})
			}
		}
	}
	// rocprofv3 writes the PC samples after the other domains' files.
	if csvOn {
		keep(writePCSamples(cfg, prefix, procs, res))
	}
	if total == 0 || total < cfg.MinimumOutputBytes {
		return firstErr
	}
	if csvOn {
		f := newCSVFile(cfg.FS, prefix, "agent_info", "", csvAgentColumns)
		writeAgents(f, procs)
		keep(f.close())
		if f.created() {
			res.Files = append(res.Files, model.File{Path: f.path, Format: model.FormatCSV, Name: f.name, Records: f.rows,
				Bytes: f.bytes})
		}
	}
	if cfg.Stats {
		var rows []*model.NamedStat
		for _, d := range model.CSVOrder {
			if t := g.stats[d]; t != nil && len(t.Rows) > 0 {
				rows = append(rows, &model.NamedStat{Name: model.Domains[d].Column, Stat: t.Merged()})
			}
		}
		if len(rows) > 0 {
			f := newCSVFile(cfg.FS, prefix, "domain_stats", "", csvStatsColumns)
			writeStats(f, rows)
			keep(f.close())
			if f.created() {
				res.Files = append(res.Files, model.File{Path: f.path, Format: model.FormatCSV, Name: f.name, Records: f.rows,
					Bytes: f.bytes})
			}
		}
	}
	return firstErr
}

// writeAgents writes every agent of the set once, sorted by node id.
func writeAgents(f *csvFile, procs []*csvProcess) {
	seen := map[uint32]tracing.AgentInfo{}
	for _, p := range procs {
		for _, a := range p.Agents {
			node := uint32(a.NodeID())
			if _, ok := seen[node]; !ok {
				seen[node] = a
			}
		}
	}
	nodes := make([]uint32, 0, len(seen))
	for n := range seen {
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i] < nodes[j] })
	for _, n := range nodes {
		a := seen[n]
		b := f.begin()
		for i := 0; i < tracing.AgentCSVFields; i++ {
			if tracing.AgentField(i) == tracing.AgentTypeField {
				b = appendQuoted(b, a.Type().String())
				b = append(b, ',')
				continue
			}
			b = appendUint(b, a.Values[i])
		}
		b = appendQuoted(b, a.Name)
		b = append(b, ',')
		b = appendQuoted(b, a.VendorName)
		b = append(b, ',')
		b = appendQuoted(b, a.ProductName)
		b = append(b, ',')
		b = appendQuoted(b, a.ModelName)
		f.end(b)
	}
}

// orphanCounterRows writes the counter sums of dispatches the spool holds
// no dispatch record for (the process died before the shim wrote it), so no
// collected value is lost; their dispatch columns are zero.
func (g *csvGroup) orphanCounterRows(p *csvProcess, counted map[uint64]bool) {
	if g.files[model.DomCounter] == nil || len(p.CounterSums) == len(counted) {
		return
	}
	ids := make([]uint64, 0, len(p.CounterSums))
	for id := range p.CounterSums {
		if !counted[id] {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		d := tracing.KernelDispatch{DispatchID: id}
		g.counterRows(p, &d, &csvKernel{}, "unknown_kernel", p.CounterSums[id])
	}
}

// counterRows writes one dispatch's counter_collection.csv rows.
func (g *csvGroup) counterRows(p *csvProcess, d *tracing.KernelDispatch, k *csvKernel,
	name string, sums []model.CounterSum) {
	f := g.files[model.DomCounter]
	grid := uint64(d.Grid[0]) * uint64(d.Grid[1]) * uint64(d.Grid[2])
	wg := uint64(d.Workgroup[0]) * uint64(d.Workgroup[1]) * uint64(d.Workgroup[2])
	for _, s := range sums {
		b := f.begin()
		b = appendUint(b, p.CID(d.CorrelationID))
		b = appendUint(b, d.DispatchID)
		b = appendQuoted(b, p.Label(d.AgentNode))
		b = append(b, ',')
		b = appendUint(b, d.QueueID)
		b = appendUint(b, uint64(uint32(p.Info.PID)))
		b = appendUint(b, uint64(d.TID))
		b = appendUint(b, grid)
		b = appendUint(b, d.KernelID)
		b = appendQuoted(b, name)
		b = append(b, ',')
		b = appendUint(b, wg)
		b = appendUint(b, k.ldsBlockSize)
		b = appendUint(b, uint64(d.PrivateSegmentSize))
		b = appendUint(b, uint64(k.vgpr))
		b = appendUint(b, uint64(k.agpr))
		b = appendUint(b, uint64(k.sgpr))
		b = appendQuoted(b, s.Name)
		b = append(b, ',')
		b = appendTraceFloat(b, s.Value)
		b = append(b, ',')
		b = appendUint(b, d.Start)
		b = appendDecimal(b, d.End)
		f.end(b)
	}
}

// appendAPIRow appends the seven columns API and marker traces share:
// Domain, Function, Process_Id, Thread_Id, Correlation_Id, Start, End.
func appendAPIRow(b []byte, domain, name string, pid, tid, corr, start, end uint64) []byte {
	b = appendQuoted(b, domain)
	b = append(b, ',')
	b = appendQuoted(b, name)
	b = append(b, ',')
	b = appendUint(b, pid)
	b = appendUint(b, tid)
	b = appendUint(b, corr)
	b = appendUint(b, start)
	return appendDecimal(b, end)
}
