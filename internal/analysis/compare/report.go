package compare

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Formats lists the report formats.
var Formats = []string{"text", "markdown", "json", "junit"}

// Write renders a report.
func Write(w io.Writer, r *Report, format string) error {
	switch format {
	case "text", "":
		return writeText(w, r)
	case "markdown", "md":
		return writeMarkdown(w, r)
	case "json":
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(r)
	case "junit":
		return writeJUnit(w, r)
	}
	return fmt.Errorf("unknown compare format %q: use one of %s", format, strings.Join(Formats, ", "))
}

// Duration formats ns with a unit that keeps 3-4 significant digits.
func Duration(ns float64) string {
	a := ns
	if a < 0 {
		a = -a
	}
	switch {
	case a >= 1e9:
		return strconv.FormatFloat(ns/1e9, 'f', 3, 64) + " s"
	case a >= 1e6:
		return strconv.FormatFloat(ns/1e6, 'f', 3, 64) + " ms"
	case a >= 1e3:
		return strconv.FormatFloat(ns/1e3, 'f', 3, 64) + " us"
	}
	return strconv.FormatFloat(ns, 'f', 0, 64) + " ns"
}

func signed(ns float64) string {
	if ns > 0 {
		return "+" + Duration(ns)
	}
	return Duration(ns)
}

func (row *Row) status() string {
	if row.Status == Regression && !row.Gated {
		return "regression (not gated)"
	}
	return string(row.Status)
}

func (row *Row) samples() string {
	count := func(s *Side) string {
		if s == nil {
			return "0"
		}
		if row.Basis == ByCalls || row.Basis == "" {
			return strconv.FormatInt(s.Calls, 10)
		}
		return strconv.Itoa(s.Runs)
	}
	unit := " runs"
	if row.Basis == ByCalls || row.Basis == "" {
		unit = " calls"
	}
	return count(row.Base) + " → " + count(row.New) + unit
}

func (row *Row) cells(withConfig bool) []string {
	val := func(s *Side) string {
		if s == nil {
			return "-"
		}
		return Duration(s.Value)
	}
	change, delta, p := "-", "-", "-"
	if row.Base != nil && row.New != nil {
		delta = signed(row.Delta)
		change = "n/a"
		if row.Base.Value > 0 {
			change = fmt.Sprintf("%+.1f%%", 100*row.Change)
		}
		if row.Status != Insufficient {
			p = formatP(row.PAdjusted)
		}
	}
	c := []string{row.status(), string(row.Domain), row.Name}
	if withConfig {
		c = append(c, row.Config)
	}
	return append(c, val(row.Base), val(row.New), delta, change, p, row.samples())
}

func formatP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

// header is the table's column names; the last six are numbers.
func header(withConfig bool) []string {
	h := []string{"STATUS", "DOMAIN", "NAME"}
	if withConfig {
		h = append(h, "CONFIG")
	}
	return append(h, "BASE", "NEW", "DELTA", "CHANGE", "P", "SAMPLES")
}

func (r *Report) hasConfig() bool {
	for i := range r.Rows {
		if r.Rows[i].Config != "" {
			return true
		}
	}
	return false
}

func (r *Report) headline() string {
	h := fmt.Sprintf("%d regression(s), %d improvement(s) in %d compared entries (metric: %s per run; a change counts beyond %s and %s at p < %g; gated: %s)",
		r.Regressions, r.Improvements, len(r.Rows), r.Metric, strconv.FormatFloat(100*r.Threshold, 'f', -1, 64)+"%",
		Duration(r.MinDelta), r.Alpha, strings.Join(r.Gate, ", "))
	if r.Ungated > 0 {
		h += fmt.Sprintf("; %d regression(s) in domains not gated", r.Ungated)
	}
	if r.Missing > 0 {
		h += fmt.Sprintf("; %d entries on one side only", r.Missing)
	}
	for _, in := range r.Incomplete {
		h += "\nFAILED: " + in
	}
	return h
}

// basisNote says what the samples were when calls had to be pooled, or
// that there were too few runs for the test to flag anything.
func (r *Report) basisNote() string {
	nb, nn := len(r.Base), len(r.New)
	if nb < 2 || nn < 2 {
		return fmt.Sprintf("%d run(s) against %d: each entry's calls are pooled, so run-to-run variation is not measured; "+
			"give %d runs per side (compare BASE... -- NEW...)", nb, nn, RunsNeeded(r.Alpha, r.Tested))
	}
	if need := RunsNeeded(r.Alpha, r.Tested); min(nb, nn) < need {
		return fmt.Sprintf("%d runs against %d: too few for the test to flag a change among %d gated entries at alpha %g; give %d runs per side",
			nb, nn, r.Tested, r.Alpha, need)
	}
	return ""
}

func writeText(w io.Writer, r *Report) error {
	wc := r.hasConfig()
	h := header(wc)
	rows := [][]string{h}
	for i := range r.Rows {
		rows = append(rows, r.Rows[i].cells(wc))
	}
	width := make([]int, len(h))
	for _, c := range rows {
		for i, v := range c {
			width[i] = max(width[i], len([]rune(v)))
		}
	}
	firstNum := len(h) - 6
	var b strings.Builder
	fmt.Fprintf(&b, "base: %s\nnew:  %s\n%s\n", strings.Join(r.Base, " "), strings.Join(r.New, " "), r.headline())
	if n := r.basisNote(); n != "" {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(&b, "note: %s\n", wn)
	}
	b.WriteString("\n")
	for _, c := range rows {
		for i, v := range c {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-len([]rune(v)))
			if i >= firstNum {
				b.WriteString(pad + v)
			} else if i < len(c)-1 {
				b.WriteString(v + pad)
			} else {
				b.WriteString(v)
			}
		}
		b.WriteString("\n")
	}
	for i := range r.Rows {
		if n := r.Rows[i].Note; n != "" {
			fmt.Fprintf(&b, "%s %s%s: %s\n", r.Rows[i].Status, r.Rows[i].Name, configSuffix(r.Rows[i].Config), n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func configSuffix(c string) string {
	if c == "" {
		return ""
	}
	return " [" + c + "]"
}

// mdCell escapes what would break a Markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "`", "'")
}

func mdTable(b *strings.Builder, rows []Row, withConfig bool) {
	h := header(withConfig)
	b.WriteString("| " + strings.Join(h, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat("---|", len(h)-6) + strings.Repeat("---:|", 6) + "\n")
	for i := range rows {
		c := rows[i].cells(withConfig)
		c[2] = "`" + mdCell(c[2]) + "`"
		if withConfig {
			c[3] = mdCell(c[3])
		}
		if rows[i].Status == Regression && rows[i].Gated {
			c[0] = "**regression**"
		}
		b.WriteString("| " + strings.Join(c, " | ") + " |\n")
	}
}

// writeMarkdown writes the comment a CI job posts: a verdict line, the
// changed names in a table, the unchanged ones folded away.
func writeMarkdown(w io.Writer, r *Report) error {
	var b strings.Builder
	verdict := "✅ no regressions"
	switch {
	case r.Regressions > 0:
		verdict = fmt.Sprintf("❌ %d regression(s)", r.Regressions)
	case r.Failed:
		verdict = fmt.Sprintf("❌ %d entries on one side only (--fail-on-missing)", r.Missing)
	}
	fmt.Fprintf(&b, "### rocprof-go compare: %s\n\n%s.\nBase `%s`, new `%s`.\n\n", verdict, r.headline(),
		mdCell(strings.Join(r.Base, " ")), mdCell(strings.Join(r.New, " ")))
	notes := r.Warnings
	if n := r.basisNote(); n != "" {
		notes = append([]string{n}, notes...)
	}
	for _, n := range notes {
		fmt.Fprintf(&b, "> %s\n", mdCell(n))
	}
	if len(notes) > 0 {
		b.WriteString("\n")
	}
	var changed, same []Row
	for _, row := range r.Rows {
		if row.Status == Unchanged {
			same = append(same, row)
		} else {
			changed = append(changed, row)
		}
	}
	wc := r.hasConfig()
	if len(changed) > 0 {
		mdTable(&b, changed, wc)
	}
	if len(same) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>%d unchanged</summary>\n\n", len(same))
		mdTable(&b, same, wc)
		b.WriteString("\n</details>\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Name    string       `xml:"name,attr"`
	Tests   int          `xml:"tests,attr"`
	Fail    int          `xml:"failures,attr"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name  string      `xml:"name,attr"`
	Tests int         `xml:"tests,attr"`
	Fail  int         `xml:"failures,attr"`
	Skip  int         `xml:"skipped,attr"`
	Cases []junitCase `xml:"testcase"`
}

type junitCase struct {
	Class   string        `xml:"classname,attr"`
	Name    string        `xml:"name,attr"`
	Failure *junitFailure `xml:"failure,omitempty"`
	Skipped *junitSkipped `xml:"skipped,omitempty"`
	Out     string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// writeJUnit writes one test suite per domain and one test case per name;
// regressions are failures, names missing from one run are skipped.
func writeJUnit(w io.Writer, r *Report) error {
	all := junitSuites{Name: "rocprof-go compare"}
	index := map[string]int{}
	for i := range r.Rows {
		row := &r.Rows[i]
		d := string(row.Domain)
		si, ok := index[d]
		if !ok {
			si = len(all.Suites)
			index[d] = si
			all.Suites = append(all.Suites, junitSuite{Name: d})
		}
		s := &all.Suites[si]
		c := junitCase{Class: "rocprof-go." + d, Name: row.Name + configSuffix(row.Config)}
		cells := row.cells(false)
		detail := strings.Join(cells[3:], " ")
		switch {
		case row.Status == Regression && row.Gated:
			c.Failure = &junitFailure{Type: "regression",
				Message: fmt.Sprintf("%s %s rose %s (%+.1f%%), beyond the %s threshold, p = %s",
					row.Name, r.Metric, signed(row.Delta), 100*row.Change,
					strconv.FormatFloat(100*r.Threshold, 'f', -1, 64)+"%", formatP(row.PAdjusted)),
				Text: detail}
			s.Fail++
		case (row.Status == New || row.Status == Removed) && r.FailOnMissing:
			c.Failure = &junitFailure{Type: "missing", Message: string(row.Status) + ": " + row.Note, Text: detail}
			s.Fail++
		case row.Status == New || row.Status == Removed || row.Status == Insufficient:
			c.Skipped = &junitSkipped{Message: string(row.Status) + ": " + row.Note}
			s.Skip++
		default:
			c.Out = row.status() + ": " + detail
		}
		s.Cases = append(s.Cases, c)
		s.Tests++
	}
	for _, s := range all.Suites {
		all.Tests += s.Tests
		all.Fail += s.Fail
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	e := xml.NewEncoder(w)
	e.Indent("", "  ")
	if err := e.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
