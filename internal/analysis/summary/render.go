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

// Write renders the summary in a format (text, csv or json).
func Write(w io.Writer, s *Summary, format string) error {
	switch format {
	case "text", "":
		return writeText(w, s)
	case "csv":
		return writeCSV(w, s)
	case "json":
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(s)
	}
	return fmt.Errorf("unknown summary format %q: use one of %s", format, strings.Join(Formats, ", "))
}

var textHeader = []string{"NAME", "CALLS", "DURATION (nsec)", "AVERAGE (nsec)", "PERCENT (INC)", "MIN (nsec)", "MAX (nsec)", "STDDEV"}

func textCells(r Row) []string {
	return []string{r.Name, strconv.FormatInt(r.Calls, 10), strconv.FormatInt(r.TotalNs, 10),
		strconv.FormatFloat(r.AverageNs, 'f', 1, 64), strconv.FormatFloat(r.Percent, 'f', 2, 64),
		strconv.FormatInt(r.MinNs, 10), strconv.FormatInt(r.MaxNs, 10), strconv.FormatFloat(r.StdDevNs, 'f', 1, 64)}
}

// table prints a title and a pipe table: names left-aligned, numbers
// right-aligned, widths from the content (names at least 40 wide, as
// rocprofv3's summary).
func table(w io.Writer, title string, rows []Row) error {
	cells := [][]string{textHeader}
	for _, r := range rows {
		cells = append(cells, textCells(r))
	}
	width := make([]int, len(textHeader))
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
			if i == 0 {
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

func writeGroup(w io.Writer, prefix string, g *Group) error {
	for _, t := range g.Tables {
		if err := table(w, prefix+t.Domain.Title()+" SUMMARY", t.Rows); err != nil {
			return err
		}
	}
	if len(g.Domains) > 0 {
		return table(w, prefix+"DOMAIN SUMMARY", g.Domains)
	}
	return nil
}

func writeText(w io.Writer, s *Summary) error {
	if len(s.Total.Tables) == 0 {
		_, err := fmt.Fprintf(w, "no records in %s\n", strings.Join(s.Inputs, ", "))
		return err
	}
	if len(s.TopKernels) > 0 {
		if err := table(w, fmt.Sprintf("TOP %d KERNELS", len(s.TopKernels)), s.TopKernels); err != nil {
			return err
		}
	}
	if err := writeGroup(w, "", &s.Total); err != nil {
		return err
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
		if err := writeGroup(w, label+": ", g); err != nil {
			return err
		}
	}
	return nil
}

// csvHeader: one long table, so a script filters by Section and Domain.
var csvHeader = []string{"Section", "Domain", "Process", "Rank", "Name", "Calls", "TotalDurationNs",
	"AverageNs", "Percentage", "MinNs", "MaxNs", "StdDev"}

func writeCSV(w io.Writer, s *Summary) error {
	c := csv.NewWriter(w)
	if err := c.Write(csvHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
	put := func(section, domain string, g *Group, r Row) error {
		proc, rank := "", ""
		if g != nil {
			proc, rank = g.Process, strconv.Itoa(g.Rank)
		}
		return c.Write([]string{section, domain, proc, rank, r.Name, strconv.FormatInt(r.Calls, 10),
			strconv.FormatInt(r.TotalNs, 10), f(r.AverageNs), f(r.Percent), strconv.FormatInt(r.MinNs, 10),
			strconv.FormatInt(r.MaxNs, 10), f(r.StdDevNs)})
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
	c.Flush()
	return c.Error()
}
