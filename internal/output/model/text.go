package model

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// Text the app chose (ROCTx messages, kernel and symbol names, counter
// names, code object URIs, the process's command line, environment,
// hostname and directories) reaches the outputs as valid UTF-8: every
// format's readers require it (DuckDB rejects a Parquet file with one
// invalid string, Python's sqlite3 a ROCpd row, strict JSON parsers a
// document). The repair is done once, here, where the model hands text to
// the writers (the catalogue's scan and SpoolView's decoders), so every
// format holds the same repaired text: each run of bytes that is not UTF-8
// becomes one U+FFFD (strings.ToValidUTF8). Valid text is passed through
// without a copy, so valid input gives byte-identical outputs.

// Replacement is what a run of invalid bytes becomes.
const Replacement = "\uFFFD"

// ValidString is s, or a copy with every invalid byte run replaced.
func ValidString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, Replacement)
}

// ValidBytes is b, or a copy with every invalid byte run replaced.
func ValidBytes(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	return bytes.ToValidUTF8(b, []byte(Replacement))
}

func validStrings(l []string) []string {
	for i, s := range l {
		if !utf8.ValidString(s) {
			l = append([]string(nil), l...)
			for j := i; j < len(l); j++ {
				l[j] = ValidString(l[j])
			}
			return l
		}
	}
	return l
}

// validInfo repairs the text of a process header.
func validInfo(info tracing.ProcessInfo) tracing.ProcessInfo {
	info.Hostname = ValidString(info.Hostname)
	info.Cwd = ValidString(info.Cwd)
	info.Exe = ValidString(info.Exe)
	info.Argv = validStrings(info.Argv)
	info.Environ = validStrings(info.Environ)
	return info
}

// validAgent repairs an agent's names (the runtime's, but read from a
// spool any process could write).
func validAgent(a tracing.AgentInfo) tracing.AgentInfo {
	a.Name = ValidString(a.Name)
	a.VendorName = ValidString(a.VendorName)
	a.ProductName = ValidString(a.ProductName)
	a.ModelName = ValidString(a.ModelName)
	return a
}

// Marker is the current record, a marker, with its message repaired.
func (v *SpoolView) Marker() tracing.Marker {
	m := v.Reader.Marker()
	m.Message = ValidBytes(m.Message)
	return m
}

// CounterSample is the current record, a counter sample, with its name
// repaired.
func (v *SpoolView) CounterSample() tracing.CounterSample {
	c := v.Reader.CounterSample()
	c.Name = ValidBytes(c.Name)
	return c
}

// KernelSymbol is the current record, a kernel symbol, with its name
// repaired.
func (v *SpoolView) KernelSymbol() tracing.KernelSymbol {
	s := v.Reader.KernelSymbol()
	s.Name = ValidBytes(s.Name)
	return s
}

// CodeObject is the current record, a code object, with its URI repaired.
func (v *SpoolView) CodeObject() tracing.CodeObject {
	c := v.Reader.CodeObject()
	c.URI = ValidBytes(c.URI)
	return c
}

// String is the current record, a string, with its value repaired (a
// stream note's value is binary and kept).
func (v *SpoolView) String() tracing.String {
	s := v.Reader.String()
	if s.Table != tracing.TableStream {
		s.Value = ValidBytes(s.Value)
	}
	return s
}

// AgentInfo is the current record, an agent, with its names repaired.
func (v *SpoolView) AgentInfo() tracing.AgentInfo { return validAgent(v.Reader.AgentInfo()) }

// Process is the spool's process header with its text repaired.
func (v *SpoolView) Process() tracing.ProcessInfo { return validInfo(v.Reader.Process()) }

// TerminalString is s as it may be printed to a terminal: valid UTF-8,
// with every control character written as an escape — C0 and DEL as \xNN
// (ESC as \x1b, a newline as \x0a), C1 and the bidirectional overrides as
// \uNNNN — so that a name cannot move the cursor, recolour or clear the
// screen, set the window title or reorder what follows it. Files keep the
// text itself (ValidString); this is for tables printed to standard output.
func TerminalString(s string) string {
	i := 0
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			break
		}
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for _, r := range s[i:] { // an invalid byte is utf8.RuneError, U+FFFD
		switch {
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
		case r >= 0x80 && r < 0xa0, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
