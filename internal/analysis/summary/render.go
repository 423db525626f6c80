package summary

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Formats lists the output formats of Write.
var Formats = []string{"text", "csv", "json"}

// Write renders the summary in a format (text, csv or json), durations in
// nanoseconds.
func Write(w io.Writer, s *Summary, format string) error {
	return WriteUnits(w, s, format, "nsec")
}

// WriteUnits renders the summary with the text and CSV durations in unit
// (sec, msec, usec or nsec, rocprofv3's -u). JSON keeps nanoseconds, which
// its field names say (total_ns, ...).
func WriteUnits(w io.Writer, s *Summary, format, unit string) error {
	u, err := newUnits(unit)
	if err != nil {
		return err
	}
	switch format {
	case "text", "":
		return writeText(w, s, u)
	case "csv":
		return writeCSV(w, s, u)
	case "json":
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(s)
	}
	return fmt.Errorf("unknown summary format %q: use one of %s", format, strings.Join(Formats, ", "))
}

// units renders nanosecond durations in one unit.
type units struct {
	name     string
	ns       int64 // nanoseconds per unit
	decimals int   // digits after the point that keep nanosecond resolution
}

func newUnits(name string) (units, error) {
	ns, ok := unitNs[name]
	if !ok {
		return units{}, fmt.Errorf("unknown summary unit %q: use one of %s", name, strings.Join(Units, ", "))
	}
	return units{name: name, ns: ns, decimals: len(strconv.FormatInt(ns, 10)) - 1}, nil
}

// whole renders an exact duration (a total, min or max): an integer in
// nanoseconds, else every digit down to the nanosecond.
func (u units) whole(ns int64) string {
	if u.ns == 1 {
		return strconv.FormatInt(ns, 10)
	}
	return strconv.FormatFloat(float64(ns)/float64(u.ns), 'f', u.decimals, 64)
}

// mean renders a derived duration (an average, a standard deviation) to a
// tenth of a nanosecond.
func (u units) mean(ns float64) string {
	return strconv.FormatFloat(ns/float64(u.ns), 'f', u.decimals+1, 64)
}

func textHeader(u units) []string {
	return []string{"NAME", "CALLS", "DURATION (" + u.name + ")", "AVERAGE (" + u.name + ")", "PERCENT (INC)",
		"MIN (" + u.name + ")", "MAX (" + u.name + ")", "STDDEV (" + u.name + ")"}
}

func textCells(r Row, u units) []string {
	return []string{r.Name, strconv.FormatInt(r.Calls, 10), u.whole(r.TotalNs),
		u.mean(r.AverageNs), strconv.FormatFloat(r.Percent, 'f', 2, 64),
		u.whole(r.MinNs), u.whole(r.MaxNs), u.mean(r.StdDevNs)}
}

// table prints a title and a pipe table of duration rows.
func table(w io.Writer, title string, rows []Row, u units) error {
	cells := [][]string{textHeader(u)}
	for _, r := range rows {
		cells = append(cells, textCells(r, u))
	}
	return pipeTable(w, title, cells, 1)
}

// pipeTable prints a title and a pipe table: the first left columns
// left-aligned (the first at least 40 wide, as rocprofv3's summary), the
// others (numbers) right-aligned, widths from the content. cells[0] is the
// header.
func pipeTable(w io.Writer, title string, cells [][]string, left int) error {
	return alignedTable(w, title, cells, func(i int) bool { return i < left })
}

// alignedTable is pipeTable with the left-aligned columns chosen one by
// one.
func alignedTable(w io.Writer, title string, cells [][]string, isLeft func(col int) bool) error {
	width := make([]int, len(cells[0]))
	width[0] = 40
	for _, c := range cells {
		for i, v := range c {
			width[i] = max(width[i], len(v))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s:\n\n", title)
	line := func(c []string) {
		for i, v := range c {
			if i > 0 {
				b.WriteString(" | ")
			}
			if isLeft(i) && i == len(c)-1 {
				b.WriteString(v) // no trailing blanks
			} else if isLeft(i) {
				fmt.Fprintf(&b, "%-*s", width[i], v)
			} else {
				fmt.Fprintf(&b, "%*s", width[i], v)
			}
		}
		b.WriteString("\n")
	}
	line(cells[0])
	for i := range width {
		if i > 0 {
			b.WriteString("-|-")
		}
		b.WriteString(strings.Repeat("-", width[i]))
	}
	b.WriteString("\n")
	for _, c := range cells[1:] {
		line(c)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// counterValue renders a counter value: integers as integers, fractions
// (derived counters, averages) with up to 6 significant decimals.
func counterValue(v float64) string {
	if v == float64(int64(v)) && v < 1e15 && v > -1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 10, 64)
}

// counterTable prints the counters per kernel.
func counterTable(w io.Writer, rows []CounterRow) error {
	cells := [][]string{{"KERNEL", "COUNTER", "DISPATCHES", "TOTAL", "AVERAGE", "MIN", "MAX"}}
	for _, r := range rows {
		cells = append(cells, []string{r.Kernel, r.Counter, strconv.FormatInt(r.Dispatches, 10),
			counterValue(r.Total), counterValue(r.Average), counterValue(r.Min), counterValue(r.Max)})
	}
	return pipeTable(w, "COUNTER SUMMARY (per dispatch, summed over instances)", cells, 2)
}

// hotTable prints each kernel's most sampled instructions; prefix
// starts the title (a rank's label).
func hotTable(w io.Writer, prefix string, kernels []PCKernel) error {
	cells := [][]string{{"KERNEL", "KERNEL SAMPLES", "OFFSET", "INSTRUCTION", "SAMPLES", "PERCENT (OF KERNEL)"}}
	stochastic := false
	for _, k := range kernels {
		stochastic = stochastic || k.Method == "stochastic"
	}
	if stochastic {
		cells[0] = append(cells[0], "STALL REASONS (OF NOT ISSUED)")
	}
	for _, k := range kernels {
		for _, h := range k.Instructions {
			off := ""
			if h.HasOffset {
				off = "0x" + strconv.FormatUint(h.Offset, 16)
			}
			c := []string{k.Kernel, strconv.FormatInt(k.Samples, 10), off, h.Instruction,
				strconv.FormatInt(h.Samples, 10), strconv.FormatFloat(h.Percent, 'f', 2, 64)}
			if stochastic {
				st := stallText(h.Stalls)
				if st == "" {
					st = "(all issued)" // or a host-trap kernel's: no reason recorded
				}
				c = append(c, st)
			}
			cells = append(cells, c)
		}
	}
	return alignedTable(w, prefix+"HOTTEST INSTRUCTIONS (PC samples, most sampled per kernel)", cells,
		func(i int) bool { return i == 0 || i == 3 || i == 6 })
}

// stallText is "WAITCNT 75.0%, ALU_DEPENDENCY 25.0%".
func stallText(st []Stall) string {
	parts := make([]string, len(st))
	for i, s := range st {
		parts[i] = s.Reason + " " + strconv.FormatFloat(s.Percent, 'f', 1, 64) + "%"
	}
	return strings.Join(parts, ", ")
}

func writeGroup(w io.Writer, prefix string, g *Group, u units) error {
	for _, t := range g.Tables {
		if err := table(w, prefix+t.Domain.Title()+" SUMMARY", t.Rows, u); err != nil {
			return err
		}
	}
	if len(g.Domains) > 0 {
		return table(w, prefix+"DOMAIN SUMMARY", g.Domains, u)
	}
	return nil
}

func writeText(w io.Writer, s *Summary, u units) error {
	if len(s.Total.Tables) == 0 {
		_, err := fmt.Fprintf(w, "no records in %s\n", strings.Join(s.Inputs, ", "))
		return err
	}
	if len(s.TopKernels) > 0 {
		if err := table(w, fmt.Sprintf("TOP %d KERNELS", len(s.TopKernels)), s.TopKernels, u); err != nil {
			return err
		}
	}
	if err := writeGroup(w, "", &s.Total, u); err != nil {
		return err
	}
	if len(s.Counters) > 0 {
		if err := counterTable(w, s.Counters); err != nil {
			return err
		}
	}
	if len(s.HotInstructions) > 0 {
		if err := hotTable(w, "", s.HotInstructions); err != nil {
			return err
		}
	}
	for i := range s.ByRank {
		g := &s.ByRank[i]
		// Titles are upper case; host names keep their case.
		label := fmt.Sprintf("PID %d", g.PID)
		if g.Hostname != "" {
			label += "@" + g.Hostname
		}
		if g.Rank >= 0 {
			label = fmt.Sprintf("RANK %d (%s)", g.Rank, label)
		}
		if err := writeGroup(w, label+": ", g, u); err != nil {
			return err
		}
		if len(g.HotInstructions) > 0 {
			if err := hotTable(w, label+": ", g.HotInstructions); err != nil {
				return err
			}
		}
	}
	return nil
}

// csvHeader: one long table, so a script filters by Section and Domain.
// Duration columns name their unit: TotalDurationNs in nanoseconds (the
// default), TotalDurationUsec with -u usec, ... Rows of Section "counters"
// (Domain COUNTER_COLLECTION) are one kernel's counter: Name is the
// kernel, Counter the counter, Calls the dispatches that have it, and the
// Total, Average, Min and Max columns its per-dispatch values (summed over
// instances; counts, not durations). Rows of Section hottest_instructions
// (Domain PC_SAMPLING_HOST_TRAP or PC_SAMPLING_STOCHASTIC) are one sampled
// instruction of a kernel: Name is the kernel, Calls its samples,
// Percentage their share of the kernel's samples, Instruction its text,
// Offset its offset in the code object (empty from CSV inputs) and
// StallReasons the stochastic samples' top not-issued reasons; Section
// by_rank_hottest_instructions holds a rank's own, with its Process and
// Rank.
func csvHeader(u units) []string {
	suffix := map[string]string{"nsec": "Ns", "usec": "Usec", "msec": "Msec", "sec": "Sec"}[u.name]
	return []string{"Section", "Domain", "Process", "Rank", "Name", "Calls", "TotalDuration" + suffix,
		"Average" + suffix, "Percentage", "Min" + suffix, "Max" + suffix, "StdDev", "Counter",
		"Instruction", "Offset", "StallReasons"}
}

func writeCSV(w io.Writer, s *Summary, u units) error {
	c := csv.NewWriter(w)
	if err := c.Write(csvHeader(u)); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
	fu := func(ns float64) string { return strconv.FormatFloat(ns/float64(u.ns), 'f', 6+u.decimals, 64) }
	whole := func(ns int64) string { return u.whole(ns) }
	put := func(section, domain string, g *Group, r Row) error {
		proc, rank := "", ""
		if g != nil {
			proc, rank = g.Process, strconv.Itoa(g.Rank)
		}
		return c.Write([]string{section, domain, proc, rank, r.Name, strconv.FormatInt(r.Calls, 10),
			whole(r.TotalNs), fu(r.AverageNs), f(r.Percent), whole(r.MinNs),
			whole(r.MaxNs), fu(r.StdDevNs), "", "", "", ""})
	}
	for _, r := range s.TopKernels {
		if err := put("top_kernels", "KERNEL_DISPATCH", nil, r); err != nil {
			return err
		}
	}
	groups := []*Group{&s.Total}
	for i := range s.ByRank {
		groups = append(groups, &s.ByRank[i])
	}
	for i, g := range groups {
		section, gg := "domain", (*Group)(nil)
		if i > 0 {
			section, gg = "by_rank", g
		}
		for _, t := range g.Tables {
			for _, r := range t.Rows {
				if err := put(section, string(t.Domain), gg, r); err != nil {
					return err
				}
			}
		}
		for _, r := range g.Domains {
			if err := put(section+"_total", r.Name, gg, r); err != nil {
				return err
			}
		}
	}
	for _, r := range s.Counters {
		if err := c.Write([]string{"counters", "COUNTER_COLLECTION", "", "", r.Kernel, strconv.FormatInt(r.Dispatches, 10),
			f(r.Total), f(r.Average), "", f(r.Min), f(r.Max), "", r.Counter, "", "", ""}); err != nil {
			return err
		}
	}
	hot := func(section string, g *Group, kernels []PCKernel) error {
		proc, rank := "", ""
		if g != nil {
			proc, rank = g.Process, strconv.Itoa(g.Rank)
		}
		for _, k := range kernels {
			dom := "PC_SAMPLING_HOST_TRAP"
			if k.Method == "stochastic" {
				dom = "PC_SAMPLING_STOCHASTIC"
			}
			for _, h := range k.Instructions {
				off := ""
				if h.HasOffset {
					off = strconv.FormatUint(h.Offset, 10)
				}
				if err := c.Write([]string{section, dom, proc, rank, k.Kernel, strconv.FormatInt(h.Samples, 10),
					"", "", f(h.Percent), "", "", "", "", h.Instruction, off, stallText(h.Stalls)}); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := hot("hottest_instructions", nil, s.HotInstructions); err != nil {
		return err
	}
	for i := range s.ByRank {
		if err := hot("by_rank_hottest_instructions", &s.ByRank[i], s.ByRank[i].HotInstructions); err != nil {
			return err
		}
	}
	c.Flush()
	return c.Error()
}
