package output

import (
	"github.com/rocprof-go/rocprof-go/internal/output/csv"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// The model's types and names, as the orchestration (internal/pipeline,
// convert, pkg/rocprof) knows them: output is their one entry point.
type (
	// Format is an output format name as given to -f.
	Format = model.Format
	// AgentIndex selects how agents are labelled (--agent-index).
	AgentIndex = model.AgentIndex
	// Config is everything the orchestration decided about the outputs.
	Config = model.Config
	// Input is one output file set: spools and their configuration.
	Input = model.Input
	// File is one file written.
	File = model.File
	// Process sums up what one spool held.
	Process = model.Process
	// Result lists what Write produced, for the run manifest.
	Result = model.Result
	// ProcessStatus is one process's status strings, by status id.
	ProcessStatus = model.ProcessStatus
	// Group is one output set: the processes sharing a prefix.
	Group = model.Group
	// FileSystem creates output files; tests substitute one that fails.
	FileSystem = model.FileSystem
	// OutputFile is a file being written, committed or aborted.
	OutputFile = model.OutputFile
	// KernelSymbol is a kernel with its names in every form.
	KernelSymbol = model.KernelSymbol
	// PCSamplingSummary is what became of one process's PC samples.
	PCSamplingSummary = model.PCSamplingSummary
)

// FormatCSV is rocprofv3's CSV files, which Write writes in its first pass.
const FormatCSV = model.FormatCSV

// DefaultPrefixTemplate is rocprofv3's default output file prefix.
const DefaultPrefixTemplate = model.DefaultPrefixTemplate

// Agent labelling modes (-A).
const (
	AgentIndexRelative     = model.AgentIndexRelative
	AgentIndexAbsolute     = model.AgentIndexAbsolute
	AgentIndexTypeRelative = model.AgentIndexTypeRelative
)

// ParseAgentIndex reads an --agent-index value ("" is rocprofv3's default,
// relative).
func ParseAgentIndex(s string) (AgentIndex, error) { return model.ParseAgentIndex(s) }

// V1Pass is one pass of a rocprof v1 run (-o NAME.csv), for WriteV1.
type V1Pass = csv.V1Pass

// WriteV1 writes rocprof v1's results.csv (and with GEN_STATS its stats
// files) once every pass ran (csv.WriteV1).
// A spool cut short while it was read is returned as Write returns it.
func WriteV1(passes []V1Pass) (*Result, error) {
	mark := tracing.TornMark()
	res, err := csv.WriteV1(passes)
	var read []string
	for _, p := range passes {
		if paths, lerr := tracing.List(p.SpoolDir); lerr == nil {
			read = append(read, paths...)
		}
	}
	return res, withTorn(err, tracing.TornSince(mark, read))
}
