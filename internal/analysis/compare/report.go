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

func (row *Row) cells() []string {
	val := func(s *Side) string {
		if s == nil {
			return "-"
		}
		return Duration(s.Value)
	}
	calls := func(s *Side) string {
		if s == nil {
			return "0"
		}
		return strconv.FormatInt(s.Calls, 10)
	}
	change, delta, noise := "-", "-", "-"
	if row.Base != nil && row.New != nil {
		delta, noise = signed(row.Delta), "±"+Duration(row.Noise)
		change = "n/a"
		if row.Base.Value > 0 {
			change = fmt.Sprintf("%+.1f%%", 100*row.Change)
		}
	}
	return []string{string(row.Status), string(row.Domain), row.Name, val(row.Base), val(row.New),
		delta, change, noise, calls(row.Base) + " → " + calls(row.New)}
}

var header = []string{"STATUS", "DOMAIN", "NAME", "BASE", "NEW", "DELTA", "CHANGE", "NOISE (3σ)", "CALLS"}

func (r *Report) headline() string {
	return fmt.Sprintf("%d regression(s), %d improvement(s) in %d compared names (metric %s, threshold %s, noise %g standard errors)",
		r.Regressions, r.Improvements, len(r.Rows), r.Metric, strconv.FormatFloat(100*r.Threshold, 'f', -1, 64)+"%", r.Sigmas)
}

func writeText(w io.Writer, r *Report) error {
	rows := [][]string{header}
	for i := range r.Rows {
		rows = append(rows, r.Rows[i].cells())
	}
	width := make([]int, len(header))
	for _, c := range rows {
		for i, v := range c {
			width[i] = max(width[i], len([]rune(v)))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "base: %s\nnew:  %s\n%s\n\n", r.Base, r.New, r.headline())
	for _, c := range rows {
		for i, v := range c {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-len([]rune(v)))
			if i >= 3 {
				b.WriteString(pad + v)
			} else if i < len(c)-1 {
				b.WriteString(v + pad)
			} else {
				b.WriteString(v)
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCell escapes what would break a Markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "`", "'")
}

func mdTable(b *strings.Builder, rows []Row) {
	b.WriteString("| " + strings.Join(header, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat("---|", 2) + "---|" + strings.Repeat("---:|", len(header)-3) + "\n")
	for i := range rows {
		c := rows[i].cells()
		c[2] = "`" + mdCell(c[2]) + "`"
		if rows[i].Status == Regression {
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
	if r.Regressions > 0 {
		verdict = fmt.Sprintf("❌ %d regression(s)", r.Regressions)
	}
	fmt.Fprintf(&b, "### rocprof-go compare: %s\n\n%s.\nBase `%s`, new `%s`.\n\n", verdict, r.headline(),
		mdCell(r.Base), mdCell(r.New))
	var changed, same []Row
	for _, row := range r.Rows {
		if row.Status == Unchanged {
			same = append(same, row)
		} else {
			changed = append(changed, row)
		}
	}
	if len(changed) > 0 {
		mdTable(&b, changed)
	}
	if len(same) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>%d unchanged</summary>\n\n", len(same))
		mdTable(&b, same)
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
		c := junitCase{Class: "rocprof-go." + d, Name: row.Name}
		detail := strings.Join(row.cells()[3:], " ")
		switch row.Status {
		case Regression:
			c.Failure = &junitFailure{Type: "regression",
				Message: fmt.Sprintf("%s %s rose %s (%+.1f%%), beyond the %s threshold and the noise %s",
					row.Name, r.Metric, signed(row.Delta), 100*row.Change,
					strconv.FormatFloat(100*r.Threshold, 'f', -1, 64)+"%", Duration(row.Noise)),
				Text: detail}
			s.Fail++
		case New, Removed:
			c.Skipped = &junitSkipped{Message: string(row.Status) + ": only in one run"}
			s.Skip++
		default:
			c.Out = string(row.Status) + ": " + detail
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
