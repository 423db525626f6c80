package summarytables

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
)

// summaryUnits divides durations for -u/--summary-units.
var summaryUnits = map[string]uint64{"sec": 1e9, "msec": 1e6, "usec": 1e3, "nsec": 1}

// Target tells where --summary-output-file NAME goes: rocprofv3
// prints to stdout for "stdout", "stderr" (its quirk) and no name, with
// every line indented; any other name is the file <prefix>_<NAME>.txt.
func Target(prefix, name string) (path string, stdout bool) {
	switch name {
	case "", "stdout", "STDOUT", "stderr", "STDERR":
		return "", true
	}
	return prefix + "_" + name + ".txt", false
}

// Write writes rocprofv3's summary tables for the input: -D (one
// table per domain, in domain order), then one table per --summary-groups
// regex (matched against the whole domain name), then -S (all domains).
// indent is true when writing to the terminal.
func Write(w io.Writer, in *model.Input, indent bool) error {
	o := &in.Config
	if !o.Summary && !o.SummaryPerDomain && len(o.SummaryGroups) == 0 {
		return nil
	}
	st, err := model.CollectStats(in)
	if err != nil {
		return err
	}
	return writeSummaryTables(w, st, o, indent)
}

func writeSummaryTables(w io.Writer, st *model.RunStats, o *model.Config, indent bool) error {
	unit := o.SummaryUnits
	if unit == "" {
		unit = "nsec"
	}
	div, ok := summaryUnits[unit]
	if !ok {
		return fmt.Errorf("summary unit %q is not one of sec, msec, usec, nsec", unit)
	}
	pad := ""
	if indent {
		pad = "    "
	}
	var b strings.Builder
	// Names are the app's text (already valid UTF-8, model/text.go); on
	// the terminal their control characters are printed escaped.
	name := func(s string) string { return s }
	if indent {
		name = model.TerminalString
	}
	table := func(label string, doms []model.Domain) {
		writeSummaryTable(&b, label, st, doms, unit, div, pad, name)
	}
	var withData []model.Domain
	for d := model.Domain(0); d < model.NumDomains; d++ {
		if st[d].Total.Count > 0 {
			withData = append(withData, d)
		}
	}
	if o.SummaryPerDomain {
		for _, d := range withData {
			table(d.String()+" SUMMARY", []model.Domain{d})
		}
	}
	for _, g := range o.SummaryGroups {
		re, err := regexp.Compile("^(?:" + g + ")$")
		if err != nil {
			return fmt.Errorf("--summary-groups %q: %w", g, err)
		}
		var doms []model.Domain
		var names []string
		for _, d := range withData {
			if re.MatchString(d.String()) {
				doms = append(doms, d)
				names = append(names, d.String())
			}
		}
		table(strings.Join(names, " + ")+" SUMMARY", doms)
	}
	if o.Summary {
		table("SUMMARY", withData)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// center pads s to width with the extra space on the right, as fmt's {:^N}.
func center(s string, width int) string {
	n := width - len(s)
	if n <= 0 {
		return s
	}
	return strings.Repeat(" ", n/2) + s + strings.Repeat(" ", n-n/2)
}

// shortestFloat prints a double as C++'s shortest round-trip form, fixed
// or scientific, whichever is shorter (fmt's {} for doubles).
func shortestFloat(v float64) string {
	f := strconv.FormatFloat(v, 'f', -1, 64)
	e := strconv.FormatFloat(v, 'e', -1, 64)
	if len(e) < len(f) {
		return e
	}
	return f
}

func writeSummaryTable(b *strings.Builder, label string, st *model.RunStats, doms []model.Domain, unit string, div uint64, pad string,
	shown func(string) string) {
	type entry struct {
		name string
		dom  model.Domain
		s    model.Stat
	}
	var entries []*entry
	byName := map[string]*entry{}
	var total model.Stat
	nameW, domW := 40, 12
	for _, d := range doms {
		ds := &st[d]
		for _, row := range ds.ByTotalDesc() {
			k := row.Name
			e := byName[k]
			if e == nil {
				e = &entry{name: k, dom: d}
				byName[k] = e
				entries = append(entries, e)
			}
			e.s.Merge(&row.Stat)
			total.Merge(&row.Stat)
			nameW = max(nameW, len(k))
		}
		domW = max(domW, len(d.String()))
	}
	if total.Count == 0 {
		return
	}
	for _, e := range entries {
		e.name = shown(e.name)
		nameW = max(nameW, len(e.name))
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].s.Sum > entries[j].s.Sum })
	fmt.Fprintf(b, "\n%sROCPROFV3 %s:\n\n", pad, label)
	fmt.Fprintf(b, "%s| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", pad,
		center("NAME", nameW), center("DOMAIN", domW), center("CALLS", 15),
		center("DURATION ("+unit+")", 15), center("AVERAGE ("+unit+")", 15), center("PERCENT (INC)", 13),
		center("MIN ("+unit+")", 15), center("MAX ("+unit+")", 15), center("STDDEV", 15))
	dash := func(n int) string { return strings.Repeat("-", n) }
	fmt.Fprintf(b, "%s|-%s-|-%s-|-%s-|-%s-|-%s-|-%s-|-%s-|-%s-|-%s-|\n", pad,
		dash(nameW), dash(domW), dash(15), dash(15), dash(15), dash(13), dash(15), dash(15), dash(15))
	for _, e := range entries {
		pct := 0.0
		if total.Sum > 0 {
			pct = float64(e.s.Sum) * 100 / float64(total.Sum)
		}
		var sum, mn, mx string
		if div > 1 {
			d := float64(div)
			sum, mn, mx = shortestFloat(float64(e.s.Sum)/d), shortestFloat(float64(e.s.Min)/d), shortestFloat(float64(e.s.Max)/d)
		} else {
			sum, mn, mx = strconv.FormatUint(e.s.Sum, 10), strconv.FormatUint(e.s.Min, 10), strconv.FormatUint(e.s.Max, 10)
		}
		fmt.Fprintf(b, "%s| %-*s | %-*s | %15d | %15s | %15.3e | %13s | %15s | %15s | %15.3e |\n", pad,
			nameW, e.name, domW, e.dom.String(), e.s.Count, sum, e.s.Mean()/float64(div),
			strconv.FormatFloat(pct, 'f', 6, 64), mn, mx, e.s.StdDev()/float64(div))
	}
	b.WriteString("\n")
}
