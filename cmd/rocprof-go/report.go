package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/domain"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/output/format"
	"github.com/rocprof-go/rocprof-go/internal/pipeline"
	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// The end-of-run report: what a run wrote and how to look at it, a few
// lines on stderr (-q/--quiet silences it). It is built from the run's
// manifest, so it says exactly what run.json lists.

// reportListMax is the number of files listed one per line; beyond it the
// files are summed up per format and domain (one line each), as a run of
// many processes writes the same files once per process.
const reportListMax = 8

// writeReport prints the report of a finished run: its files with their
// record counts, the requested domains that recorded nothing, and how to
// open each format.
func writeReport(w io.Writer, plan *options.Plan, res *pipeline.Result) {
	m := res.Manifest
	if m == nil {
		return
	}
	cwd, _ := os.Getwd()
	disp := func(p string) string { return displayPath(p, cwd) }
	show := func(rel string) string { return disp(filepath.Join(res.Dir, rel)) }
	name := func(f rocprof.ManifestFile) string {
		if f.Path == "stdout" { // -o stdout: the data went to the stream, no file
			return strings.TrimSpace("stdout " + f.Domain)
		}
		return show(f.Path)
	}
	manifest := show(rocprof.ManifestName)

	var b strings.Builder
	switch n := len(m.Files); {
	case n == 0 && m.Error != "":
		// The error that stopped the writing is printed after the report.
		fmt.Fprintf(&b, "rocprof-go: no output files were written; %s describes the run\n", manifest)
	case n == 0:
		fmt.Fprintf(&b, "rocprof-go: no output files were written (nothing was recorded); %s describes the run\n", manifest)
	case n <= reportListMax:
		fmt.Fprintf(&b, "rocprof-go: wrote %s (%s lists them):\n", plural(n, "file"), manifest)
		rows := make([][3]string, n)
		for i, f := range m.Files {
			rows[i] = [3]string{name(f), f.Format, plural(int(f.Records), "record")}
		}
		writeColumns(&b, rows)
	default:
		fmt.Fprintf(&b, "rocprof-go: wrote %s (%s lists each with its records):\n", plural(n, "file"), manifest)
		rows := fileGroups(m.Files, name, func(f rocprof.ManifestFile) string {
			return digits.ReplaceAllString(filepath.Base(f.Path), "*")
		})
		if len(rows) > reportListMax {
			rows = fileGroups(m.Files, name, func(rocprof.ManifestFile) string { return "" })
		}
		writeColumns(&b, rows)
	}
	for _, h := range openHints(m.Files, res.Dir, disp) {
		b.WriteString("  " + h + "\n")
	}
	fmt.Fprint(w, b.String())
	if m.Error != "" {
		return // the domains' counts are of what was written before the error
	}
	for _, d := range emptyDomains(plan, m) {
		fmt.Fprintf(w, "rocprof-go: note: %s recorded nothing (no %s records)%s\n", d.option, d.domain, emptyWhy(d, m))
	}
}

// emptyWhy is what an empty domain means. When a process of the app could
// not be profiled, or its spool could not be read, the profiler did not see
// everything the app did: the note says so instead of blaming the app.
func emptyWhy(d domainOption, m *rocprof.Manifest) string {
	lost := 0
	for _, p := range m.UnprofiledProcesses {
		if p.Lost() {
			lost++
		}
	}
	if n := lost + len(m.SkippedSpools); n > 0 {
		return fmt.Sprintf(": %d process(es) of the app could not be profiled or read, so this says nothing about what the app did", n)
	}
	return d.why
}

// displayPath shows a path relative to the working directory when it is
// below it ("./host/123_results.db"), else absolute.
func displayPath(p, cwd string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if cwd != "" {
		if rel, err := filepath.Rel(cwd, abs); err == nil && !strings.HasPrefix(rel, "..") {
			return "./" + rel
		}
	}
	return abs
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// writeColumns prints rows indented by two, columns padded to their width.
func writeColumns(b *strings.Builder, rows [][3]string) {
	var w [2]int
	for _, r := range rows {
		w[0], w[1] = max(w[0], len(r[0])), max(w[1], len(r[1]))
	}
	for _, r := range rows {
		fmt.Fprintf(b, "  %-*s  %-*s  %s\n", w[0], r[0], w[1], r[1], r[2])
	}
}

// digits are the runs of digits in file names that differ from process to
// process (pids, ranks).
var digits = regexp.MustCompile(`[0-9]+`)

// fileGroups sums many files up by format and shape (e.g. the name with
// its numbers as "*": "*_kernel_trace.csv", as many processes write the
// same files): one row each, with the number of files, their records and
// one file as an example.
func fileGroups(files []rocprof.ManifestFile, name func(rocprof.ManifestFile) string, shape func(rocprof.ManifestFile) string) [][3]string {
	type group struct {
		name    string
		files   int
		records int64
		example string
	}
	var order []*group
	byKey := map[[2]string]*group{}
	for _, f := range files {
		k := [2]string{f.Format, shape(f)}
		g := byKey[k]
		if g == nil {
			g = &group{name: strings.TrimSpace(k[0] + " " + k[1]), example: name(f)}
			byKey[k] = g
			order = append(order, g)
		}
		g.files++
		g.records += f.Records
	}
	rows := make([][3]string, len(order))
	for i, g := range order {
		rows[i] = [3]string{g.name, plural(g.files, "file"), fmt.Sprintf("%s, e.g. %s", plural(int(g.records), "record"), g.example)}
	}
	return rows
}

// countFormat is how many files of a format the manifest lists.
func countFormat(files []rocprof.ManifestFile, format string) int {
	n := 0
	for _, f := range files {
		if f.Format == format {
			n++
		}
	}
	return n
}

// openHints says, once per format written, how to look at it, naming the
// first file of that format. top is the run's directory (run.json's), in
// which the manifest's paths are; disp shows a path.
func openHints(files []rocprof.ManifestFile, top string, show func(string) string) []string {
	first := map[string]string{}
	var formats []string
	for _, f := range files {
		if _, ok := first[f.Format]; !ok && f.Path != "stdout" {
			first[f.Format] = filepath.Join(top, f.Path)
			formats = append(formats, f.Format)
		}
	}
	var out []string
	for _, f := range formats {
		p := first[f]
		switch f {
		case string(format.ROCpd):
			out = append(out, fmt.Sprintf("ROCpd: rocprof-go summary -i %s (tables); sqlite3 %s (SQL); rocprof-go convert -i %s -f pftrace (a timeline)", show(p), show(p), show(p)))
		case string(format.Perfetto):
			hint := fmt.Sprintf("Perfetto: open %s in https://ui.perfetto.dev", show(p))
			if n := countFormat(files, f); n > 1 && strings.Contains(p, ".part-") {
				// A trace past the part size (docs/outputs.md): each opens alone.
				hint = fmt.Sprintf("Perfetto: open %s in https://ui.perfetto.dev (the trace is in %d parts, each a trace of its own)", show(p), n)
			}
			out = append(out, hint)
		case string(format.OTF2):
			// The manifest names the archive; its anchor file is NAME.otf2.
			if _, err := os.Stat(p + ".otf2"); err == nil {
				p += ".otf2"
			}
			out = append(out, fmt.Sprintf("OTF2: open %s in Vampir, or otf2-print %s", show(p), show(p)))
		case string(format.CSV):
			out = append(out, fmt.Sprintf("CSV: rocprofv3's columns (docs/outputs.md); rocprof-go summary -i %s prints tables", show(top)))
		case string(format.JSON):
			out = append(out, fmt.Sprintf("JSON: rocprofv3's results.json layout (docs/outputs-formats.md): %s", show(p)))
		case string(format.Parquet):
			// The manifest names the files' common prefix: one file per table.
			if m := parquetFiles(p); len(m) > 0 {
				p = m[0]
			}
			out = append(out, fmt.Sprintf("Parquet: duckdb -c \"SELECT * FROM '%s' LIMIT 10\" (or pandas, Spark)", show(p)))
		}
	}
	return out
}

// parquetFiles are the Parquet files whose names start with prefix's
// base and "_", in its directory, by name: read from the directory, never
// globbed (a `[` or `\` in the output path is only a character).
func parquetFiles(prefix string) []string {
	dir, base := filepath.Split(prefix)
	if dir == "" {
		dir = "."
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, base+"_") && strings.HasSuffix(n, ".parquet") {
			out = append(out, filepath.Join(dir, n))
		}
	}
	slices.Sort(out)
	return out
}

// domainOption is one output domain the report judges, and the domains
// of the domain table (internal/domain) that fill it: empty when one was
// asked for and nothing was recorded.
type domainOption struct {
	option, domain string
	switches       []domain.Switch
	why            string // what an empty domain most often means
}

// domainOptions groups the domain table's rows by the option the report
// names, in the table's order.
func domainOptions() []*domainOption {
	var out []*domainOption
	byOption := map[string]*domainOption{}
	for _, d := range domain.Switches {
		if d.Report == "" || len(d.Outputs) == 0 {
			continue
		}
		o := byOption[d.Report]
		if o == nil {
			o = &domainOption{option: d.Report, domain: d.Outputs[0], why: d.Empty}
			byOption[d.Report] = o
			out = append(out, o)
		}
		o.switches = append(o.switches, d)
	}
	return out
}

// emptyDomains returns the requested domains that recorded nothing in any
// pass, leaving out those the run already reported as lost or unavailable.
// When a process's GPU stack found no GPU, an empty domain says nothing
// about the app (the run reports the GPU stack instead): none is returned.
func emptyDomains(plan *options.Plan, m *rocprof.Manifest) []domainOption {
	if m.DomainRecords == nil || len(m.NoGPU) > 0 {
		return nil // no outputs were written, or no GPU: nothing to judge the app by
	}
	reported := map[string]bool{}
	for _, l := range append(append([]pipeline.DomainLoss{}, m.LostDomains...), m.UnavailableDomains...) {
		for _, d := range l.Domains {
			reported[d] = true
		}
	}
	var out []domainOption
	for _, d := range domainOptions() {
		asked, said := false, false
		for _, s := range d.switches {
			for _, p := range plan.Passes {
				asked = asked || p.Collects(s)
			}
			said = said || reported[s.Option]
		}
		if asked && !said && m.DomainRecords[d.domain] == 0 {
			out = append(out, *d)
		}
	}
	return out
}
