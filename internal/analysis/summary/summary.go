package summary

import (
	"sort"

	"github.com/rocprof-go/rocprof-go/internal/analysis"
)

// Options selects what Build computes.
type Options struct {
	Top    int  // rows in the top-kernels table (0: 10)
	ByRank bool // also one set of domain tables per rank/process
	// TopInstructions is how many of each kernel's most sampled
	// instructions the PC-sample table lists (0: 10).
	TopInstructions int
	// AllowIncomplete reads runs whose run.json says they are incomplete
	// (timed out, killed by a signal, records lost); without it Build
	// refuses them (analysis.IncompleteError).
	AllowIncomplete bool
}

// Units are the duration units of the text and CSV renderings
// (rocprofv3's -u/--summary-units), with their size in nanoseconds.
var Units = []string{"sec", "msec", "usec", "nsec"}

var unitNs = map[string]int64{"sec": 1e9, "msec": 1e6, "usec": 1e3, "nsec": 1}

// Row is one name's statistics; durations in ns.
type Row struct {
	Name      string  `json:"name"`
	Calls     int64   `json:"calls"`
	TotalNs   int64   `json:"total_ns"`
	AverageNs float64 `json:"average_ns"`
	Percent   float64 `json:"percent"`
	MinNs     int64   `json:"min_ns"`
	MaxNs     int64   `json:"max_ns"`
	StdDevNs  float64 `json:"stddev_ns"`
}

// Table is one domain's rows, sorted by total duration, longest first.
type Table struct {
	Domain analysis.Domain `json:"domain"`
	Rows   []Row           `json:"rows"`
}

// Group is the tables of one rank or process (or of the whole run).
type Group struct {
	Process  string  `json:"process,omitempty"` // label, e.g. "rank 2" or "pid 1234@node0"
	Rank     int     `json:"rank"`
	PID      int64   `json:"pid,omitempty"`
	Hostname string  `json:"hostname,omitempty"`
	Tables   []Table `json:"tables"`
	Domains  []Row   `json:"domain_summary"` // one row per domain
	// HotInstructions are, in a rank's group (--by-rank), the hottest
	// instructions of its own PC samples, per kernel as Summary's.
	HotInstructions []PCKernel `json:"hottest_instructions,omitempty"`
}

// Summary is what summary prints.
type Summary struct {
	Inputs     []string `json:"inputs"`
	TopKernels []Row    `json:"top_kernels"`
	Total      Group    `json:"total"`
	ByRank     []Group  `json:"by_rank,omitempty"`
	// Counters are the counter values of the kernels' dispatches, over
	// every input (ROCpd inputs only; empty when no counter was collected).
	Counters []CounterRow `json:"counters,omitempty"`
	// HotInstructions are, per kernel with PC samples, its most sampled
	// instructions (empty when the runs sampled no PC).
	HotInstructions []PCKernel `json:"hottest_instructions,omitempty"`
}

type key struct {
	domain analysis.Domain
	name   string
}

type accum struct {
	proc  *analysis.Process
	stats map[key]*analysis.Stats
	pc    *pcAccum // the process's PC samples (--by-rank)
}

// procKey identifies a process across Build's inputs: the input's index
// and the process's Key (unique within a run), which the PC-sample
// readers rebuild for their samples.
type procKey struct {
	input int
	key   string
}

func (a *accum) add(ev *analysis.Event) {
	k := key{ev.Domain, ev.Name}
	s := a.stats[k]
	if s == nil {
		s = analysis.NewStats(false)
		a.stats[k] = s
	}
	s.Add(ev.Duration())
}

// Build reads every input (ROCpd database or CSV directory) and computes the
// summary.
func Build(inputs []string, opt Options) (*Summary, error) {
	if opt.Top <= 0 {
		opt.Top = 10
	}
	if opt.TopInstructions <= 0 {
		opt.TopInstructions = 10
	}
	total := &accum{stats: map[key]*analysis.Stats{}}
	// Readers hand out one *Process per process of an input, so the
	// pointer identifies a rank without building a key per event.
	ranks := map[*analysis.Process]*accum{}
	var rankOrder []*analysis.Process
	byKey := map[procKey]*accum{}
	for i, in := range inputs {
		src, err := analysis.Resolve(in)
		if err == nil {
			err = src.CheckComplete(opt.AllowIncomplete)
		}
		if err != nil {
			return nil, err
		}
		err = analysis.ScanSource(src, func(ev *analysis.Event) error {
			total.add(ev)
			if opt.ByRank {
				a := ranks[ev.Process]
				if a == nil {
					a = &accum{proc: ev.Process, stats: map[key]*analysis.Stats{}}
					ranks[ev.Process] = a
					rankOrder = append(rankOrder, ev.Process)
					byKey[procKey{i, ev.Process.Key}] = a
				}
				a.add(ev)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	s := &Summary{Inputs: inputs, Total: group(total)}
	s.Total.Rank = -1
	var kernels []Row
	for _, t := range s.Total.Tables {
		if t.Domain == analysis.Kernel {
			kernels = t.Rows
			s.TopKernels = t.Rows[:min(opt.Top, len(t.Rows))]
		}
	}
	var err error
	if s.Counters, err = counterRows(inputs, kernels); err != nil {
		return nil, err
	}
	var perProcess pcProcessOf
	if opt.ByRank {
		perProcess = func(input int, p *analysis.Process) *pcAccum {
			a := byKey[procKey{input, p.Key}]
			if a == nil {
				// Samples of a process without timed records (not
				// seen in a run's outputs, but a database may be so).
				a = &accum{proc: p, stats: map[key]*analysis.Stats{}}
				ranks[p] = a
				rankOrder = append(rankOrder, p)
				byKey[procKey{input, p.Key}] = a
			}
			if a.pc == nil {
				a.pc = newPCAccum()
			}
			return a.pc
		}
	}
	pc, err := pcSampleRows(inputs, perProcess)
	if err != nil {
		return nil, err
	}
	s.HotInstructions = pc.hottest(opt.TopInstructions)
	for _, pk := range rankOrder {
		a := ranks[pk]
		g := group(a)
		if a.pc != nil {
			g.HotInstructions = a.pc.hottest(opt.TopInstructions)
		}
		g.Process, g.Rank, g.PID, g.Hostname = a.proc.Label(), a.proc.Rank, a.proc.PID, a.proc.Hostname
		s.ByRank = append(s.ByRank, g)
	}
	// Ranks in rank order; processes without a rank after them, by pid.
	sort.SliceStable(s.ByRank, func(i, j int) bool {
		a, b := s.ByRank[i], s.ByRank[j]
		if (a.Rank < 0) != (b.Rank < 0) {
			return a.Rank >= 0
		}
		if a.Rank != b.Rank {
			return a.Rank < b.Rank
		}
		return a.PID < b.PID
	})
	return s, nil
}

func group(a *accum) Group {
	byDomain := map[analysis.Domain][]key{}
	for k := range a.stats {
		byDomain[k.domain] = append(byDomain[k.domain], k)
	}
	domains := make([]analysis.Domain, 0, len(byDomain))
	for d, keys := range byDomain {
		domains = append(domains, d)
		// Merge in name order: floating-point sums then repeat exactly.
		sort.Slice(keys, func(i, j int) bool { return keys[i].name < keys[j].name })
	}
	sort.Slice(domains, func(i, j int) bool {
		if oi, oj := domains[i].Order(), domains[j].Order(); oi != oj {
			return oi < oj
		}
		return domains[i] < domains[j]
	})
	var g Group
	domainStats := map[analysis.Domain]*analysis.Stats{}
	for _, d := range domains {
		ds := analysis.NewStats(false)
		t := Table{Domain: d}
		for _, k := range byDomain[d] {
			st := a.stats[k]
			ds.Merge(st)
			t.Rows = append(t.Rows, row(k.name, st))
		}
		domainStats[d] = ds
		finish(t.Rows, ds.Sum)
		g.Tables = append(g.Tables, t)
	}
	var all int64
	for _, d := range domains {
		all += domainStats[d].Sum
		g.Domains = append(g.Domains, row(string(d), domainStats[d]))
	}
	finish(g.Domains, all)
	return g
}

func row(name string, s *analysis.Stats) Row {
	return Row{Name: name, Calls: s.Count, TotalNs: s.Sum, AverageNs: s.Mean(), MinNs: s.Min, MaxNs: s.Max, StdDevNs: s.StdDev()}
}

// finish sets percentages of a table total and sorts by total duration,
// then name, so equal totals print in a stable order.
func finish(rows []Row, total int64) {
	for i := range rows {
		if total > 0 {
			rows[i].Percent = 100 * float64(rows[i].TotalNs) / float64(total)
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].TotalNs != rows[j].TotalNs {
			return rows[i].TotalNs > rows[j].TotalNs
		}
		return rows[i].Name < rows[j].Name
	})
}
