package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocprof-go/rocprof-go/internal/toolenv"
)

// Log formats of rocprof-go's own messages on stderr (--log-format,
// ROCPROF_GO_LOG_FORMAT).
const (
	logFormatText = "text" // "rocprof-go: warning: ... key=value", terminal or not
	logFormatJSON = "json" // one JSON object per message, for log collectors
)

// logFormatEnv selects the log format for every command, subcommands
// included (the main command also has --log-format).
const logFormatEnv = toolenv.GoLogFormat

// diagnostics is where rocprof-go's own messages go: warnings, notes,
// errors, progress and the end-of-run report. In text mode it passes text
// through; in JSON mode it turns each message written to it
// ("rocprof-go: warning: ...", one Write per message, as fmt.Fprintln does)
// into one JSON object, so that a log collector never sees two shapes. The
// zerolog logger writes through it too (newLogger).
type diagnostics struct {
	mu      sync.Mutex
	out     io.Writer
	json    bool
	pending []byte // a JSON-mode message not yet ended by a newline
}

// stderrDiag is the CLI's diagnostics stream; execute sets its format.
var stderrDiag = &diagnostics{out: os.Stderr}

func (d *diagnostics) setFormat(format string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.json = format == logFormatJSON
}

func (d *diagnostics) isJSON() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.json
}

// progress is the writer for the launcher's progress and warnings: stderr
// itself in text mode (so the pass progress bar still sees a terminal),
// the JSON converter otherwise.
func (d *diagnostics) progress() io.Writer {
	if d.isJSON() {
		return d
	}
	return d.out
}

func (d *diagnostics) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.json {
		return d.out.Write(p)
	}
	d.pending = append(d.pending, p...)
	if !bytes.HasSuffix(d.pending, []byte("\n")) {
		return len(p), nil
	}
	msg := strings.TrimRight(string(d.pending), "\n")
	d.pending = d.pending[:0]
	level, text := splitMessage(msg)
	if _, err := d.out.Write(jsonRecord(level, text, nil)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// writeEvent writes one zerolog event (a JSON object) in the current format.
func (d *diagnostics) writeEvent(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.json {
		return d.out.Write(p)
	}
	if _, err := d.out.Write(textOfEvent(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// messageLevels maps the words rocprof-go's text messages start with
// ("rocprof-go: warning: ...") to zerolog's level names.
var messageLevels = map[string]string{
	"warning": "warn",
	"note":    "info",
	"error":   "error",
	"fatal":   "fatal",
	"debug":   "debug",
}

// splitMessage returns the level and text of a text message. Lines that
// name no level (progress, the run report) are "info".
func splitMessage(msg string) (level, text string) {
	rest, ok := strings.CutPrefix(msg, "rocprof-go: ")
	if !ok {
		return "info", msg
	}
	if word, after, ok := strings.Cut(rest, ": "); ok {
		if lvl, known := messageLevels[word]; known {
			return lvl, after
		}
	}
	return "info", rest
}

// jsonRecord renders one message as the JSON object zerolog writes.
func jsonRecord(level, message string, fields map[string]any) []byte {
	rec := map[string]any{
		"level":     level,
		"time":      time.Now().Format(time.RFC3339),
		"component": "rocprof-go",
		"message":   message,
	}
	for k, v := range fields {
		rec[k] = v
	}
	b, _ := json.Marshal(rec)
	return append(b, '\n')
}

// textLevels names zerolog's levels as rocprof-go's text messages do.
var textLevels = map[string]string{
	"warn":  "warning",
	"info":  "note",
	"error": "error",
	"fatal": "fatal",
	"panic": "fatal",
	"debug": "debug",
	"trace": "debug",
}

// textOfEvent renders a zerolog event as one line:
// "rocprof-go: warning: message key=value ...", fields sorted by name
// (error first), values quoted when they hold spaces.
func textOfEvent(p []byte) []byte {
	var ev map[string]any
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber()
	if err := dec.Decode(&ev); err != nil {
		return p // not an event: pass it on as it is
	}
	level, _ := ev[zerolog.LevelFieldName].(string)
	word := textLevels[level]
	if word == "" {
		word = "note"
	}
	msg, _ := ev[zerolog.MessageFieldName].(string)
	var keys []string
	for k := range ev {
		switch k {
		case zerolog.LevelFieldName, zerolog.MessageFieldName, zerolog.TimestampFieldName, "component":
			continue
		}
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if (keys[i] == zerolog.ErrorFieldName) != (keys[j] == zerolog.ErrorFieldName) {
			return keys[i] == zerolog.ErrorFieldName
		}
		return keys[i] < keys[j]
	})
	var b strings.Builder
	b.WriteString("rocprof-go: " + word + ": " + msg)
	for _, k := range keys {
		b.WriteString(" " + k + "=" + fieldValue(ev[k]))
	}
	b.WriteByte('\n')
	return []byte(b.String())
}

func fieldValue(v any) string {
	s, ok := v.(string)
	if !ok {
		b, _ := json.Marshal(v)
		return string(b)
	}
	if s == "" || strings.ContainsAny(s, " \t\n\"\\=") {
		return strconv.Quote(s)
	}
	return s
}

// eventSink is the zerolog side of diagnostics.
type eventSink struct{ d *diagnostics }

func (s eventSink) Write(p []byte) (int, error) { return s.d.writeEvent(p) }

// newLogger returns rocprof-go's diagnostics logger, writing through d in
// its format.
func newLogger(d *diagnostics, level string) zerolog.Logger {
	lvl := zerolog.WarnLevel
	switch level {
	case "fatal":
		lvl = zerolog.FatalLevel
	case "error":
		lvl = zerolog.ErrorLevel
	case "warning":
		lvl = zerolog.WarnLevel
	case "info", "env", "config":
		lvl = zerolog.InfoLevel
	case "trace":
		lvl = zerolog.TraceLevel
	}
	return zerolog.New(eventSink{d}).Level(lvl).With().Timestamp().Str("component", "rocprof-go").Logger()
}

// logFormatOf finds the log format before the options are resolved, so
// that even a mistake on the command line is reported in the asked-for
// format: --log-format among the words before "--", else the environment.
// Resolve sees the same option (and the config file) later.
func logFormatOf(args []string, lookup func(string) (string, bool)) string {
	format := logFormatText
	if v, ok := lookup(logFormatEnv); ok && v != "" {
		format = strings.ToLower(v)
	}
	for i, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--log-format="); ok {
			format = strings.ToLower(v)
		} else if a == "--log-format" && i+1 < len(args) {
			format = strings.ToLower(args[i+1])
		}
	}
	return format
}
