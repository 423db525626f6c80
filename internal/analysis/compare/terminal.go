package compare

import "github.com/rocprof-go/rocprof-go/internal/output/model"

// ForTerminal is a copy of the report whose entry names, configurations,
// notes and warnings print safely on a terminal: control characters
// escaped (model.TerminalString), and so do the runs' paths. The CLI prints it when the report goes
// to standard output; files keep the names.
func (r *Report) ForTerminal() *Report {
	t := *r
	t.Rows = append([]Row(nil), r.Rows...)
	for i := range t.Rows {
		row := &t.Rows[i]
		row.Name, row.Config = model.TerminalString(row.Name), model.TerminalString(row.Config)
		row.Note = model.TerminalString(row.Note)
	}
	t.Warnings, t.Base, t.New = terminalStrings(r.Warnings), terminalStrings(r.Base), terminalStrings(r.New)
	t.Incomplete = terminalStrings(r.Incomplete)
	return &t
}

func terminalStrings(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = model.TerminalString(s)
	}
	return out
}
