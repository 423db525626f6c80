package summary

import "github.com/rocprof-go/rocprof-go/internal/output/model"

// ForTerminal is a copy of the summary whose names (kernels, API
// functions, ROCTx messages, counters, host names) print safely on a
// terminal: control characters escaped (model.TerminalString). The CLI
// prints it when the tables go to standard output; files keep the names.
func (s *Summary) ForTerminal() *Summary {
	t := *s
	t.TopKernels = terminalRows(s.TopKernels)
	t.Total = terminalGroup(s.Total)
	t.ByRank = make([]Group, len(s.ByRank))
	for i := range s.ByRank {
		t.ByRank[i] = terminalGroup(s.ByRank[i])
	}
	t.Counters = append([]CounterRow(nil), s.Counters...)
	for i := range t.Counters {
		t.Counters[i].Kernel = model.TerminalString(t.Counters[i].Kernel)
		t.Counters[i].Counter = model.TerminalString(t.Counters[i].Counter)
	}
	t.HotInstructions = terminalHot(s.HotInstructions)
	return &t
}

func terminalHot(kernels []PCKernel) []PCKernel {
	if kernels == nil {
		return nil
	}
	out := make([]PCKernel, len(kernels))
	for i, k := range kernels {
		k.Kernel = model.TerminalString(k.Kernel)
		k.Instructions = append([]HotInstruction(nil), k.Instructions...)
		for j := range k.Instructions {
			h := &k.Instructions[j]
			h.Instruction = model.TerminalString(h.Instruction)
			h.Comment = model.TerminalString(h.Comment)
			h.Stalls = append([]Stall(nil), h.Stalls...)
			for n := range h.Stalls {
				h.Stalls[n].Reason = model.TerminalString(h.Stalls[n].Reason)
			}
		}
		out[i] = k
	}
	return out
}

func terminalRows(rows []Row) []Row {
	out := append([]Row(nil), rows...)
	for i := range out {
		out[i].Name = model.TerminalString(out[i].Name)
	}
	return out
}

func terminalGroup(g Group) Group {
	g.Process = model.TerminalString(g.Process)
	g.Hostname = model.TerminalString(g.Hostname)
	g.Domains = terminalRows(g.Domains)
	tables := make([]Table, len(g.Tables))
	for i, t := range g.Tables {
		tables[i] = Table{Domain: t.Domain, Rows: terminalRows(t.Rows)}
	}
	g.Tables = tables
	g.HotInstructions = terminalHot(g.HotInstructions)
	return g
}
