package rocprof

import (
	"context"
	"path/filepath"
	"time"

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/output"
	"github.com/rocprof-go/rocprof-go/internal/placeholder"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

func init() { writerFactory = func() launch.OutputWriter { return spoolWriter{} } }

// spoolWriter turns one pass's spools into the requested output files.
type spoolWriter struct{}

func (spoolWriter) WriteOutputs(_ context.Context, req launch.OutputRequest) ([]launch.OutputFile, error) {
	c := req.Config
	cfg := outputConfig(c, req.Dir, req.Launch)
	res, err := output.Write(cfg, req.SpoolDir)
	var files []launch.OutputFile
	if res != nil {
		for _, f := range res.Files {
			files = append(files, launch.OutputFile{Path: f.Path, Format: "csv", Domain: f.Domain, Records: int64(f.Records)})
		}
	}
	return files, err
}

// outputConfig maps a pass's options onto the writers' configuration. The
// output directory and the file prefix may both hold placeholders; they are
// expanded per profiled process (%pid% is each process's own).
func outputConfig(c *options.Config, dirTemplate string, launchTime time.Time) output.Config {
	prefix := c.OutputFile
	if prefix == "" {
		prefix = output.DefaultPrefixTemplate
	}
	formats := make([]output.Format, len(c.OutputFormat))
	for i, f := range c.OutputFormat {
		formats[i] = output.Format(f)
	}
	agentIndex := output.AgentIndexRelative
	switch c.AgentIndex {
	case "absolute":
		agentIndex = output.AgentIndexAbsolute
	case "type-relative":
		agentIndex = output.AgentIndexTypeRelative
	}
	return output.Config{
		PrefixTemplate: prefix,
		ResolvePrefix: func(p tracing.ProcessInfo) string {
			proc := processPlaceholders(p, launchTime)
			return filepath.Join(placeholder.Expand(dirTemplate, proc), placeholder.Expand(prefix, proc))
		},
		Formats:            formats,
		Stats:              c.Stats.On(),
		Mangled:            c.MangledKernels.On(),
		Truncate:           c.TruncateKernels.On(),
		AgentIndex:         agentIndex,
		MinimumOutputBytes: uint64(c.MinimumOutputData) * 1024,
	}
}

// processPlaceholders describes a profiled process (from its spool header)
// for placeholder expansion.
func processPlaceholders(p tracing.ProcessInfo, launchTime time.Time) placeholder.Process {
	host := p.Hostname
	if host == "" {
		host = "UNKNOWN_HOSTNAME"
	}
	info := p
	return placeholder.Process{
		Pid: int(p.PID), Ppid: int(p.PPID), Pgid: int(p.PGID), Sid: int(p.SID), PSize: int(max(p.PSize, 1)),
		Hostname: host, Cwd: p.Cwd, Argv: p.Argv, Launch: launchTime,
		LookupEnv: func(name string) (string, bool) { return info.Getenv(name) },
	}
}
