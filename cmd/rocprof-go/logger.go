package main

import (
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// newLogger returns rocprof-go's diagnostics logger: human-readable on a
// terminal, JSON lines otherwise (CI logs, batch jobs).
func newLogger(w io.Writer, level string) zerolog.Logger {
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
	out := w
	if f, ok := w.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		out = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly}
	}
	return zerolog.New(out).Level(lvl).With().Timestamp().Str("component", "rocprof-go").Logger()
}
