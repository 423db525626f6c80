package model

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/output/format"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// Format is an output format name as given to -f.
type Format string

// FormatCSV is rocprofv3's CSV files, which Write writes in its first pass.
const FormatCSV = Format(format.CSV)

// AgentIndex selects how agents are labelled (--agent-index).
type AgentIndex int

// Agent labelling modes.
const (
	AgentIndexRelative     AgentIndex = iota // "Agent <logical node id>" (rocprofv3's default)
	AgentIndexAbsolute                       // "Agent <node id>"
	AgentIndexTypeRelative                   // "CPU <n>" / "GPU <n>"
)

// ParseAgentIndex reads an --agent-index value ("" is rocprofv3's default,
// relative).
func ParseAgentIndex(s string) (AgentIndex, error) {
	switch s {
	case "", "relative":
		return AgentIndexRelative, nil
	case "absolute":
		return AgentIndexAbsolute, nil
	case "type-relative":
		return AgentIndexTypeRelative, nil
	}
	return 0, fmt.Errorf("unknown --agent-index %q: use absolute, relative or type-relative", s)
}

// agentNumber is the number an agent is labelled with in mode.
func agentNumber(a *tracing.AgentInfo, mode AgentIndex) uint64 {
	switch mode {
	case AgentIndexAbsolute:
		return a.NodeID()
	case AgentIndexTypeRelative:
		return a.TypeIndex()
	}
	return a.LogicalNodeID()
}

// DefaultPrefixTemplate is rocprofv3's default output file prefix.
const DefaultPrefixTemplate = "%hostname%/%pid%"

// Config is everything the orchestration (the run pipeline, convert)
// decided about the outputs, for every writer alike: where the files go,
// which formats, and how names, agents and records are shown. One struct
// serves CSV and the other formats so that both sides of a run name
// kernels and agents the same way; internal/output knows no options.
type Config struct {
	// Dir is the resolved output directory (-d, default the cwd).
	Dir string
	// SpoolPaths, when set, are the spools to read instead of the spool
	// directory's (convert of spools kept elsewhere).
	SpoolPaths []string
	// PrefixTemplate is the -o value (default DefaultPrefixTemplate).
	PrefixTemplate string
	// ResolvePrefix expands PrefixTemplate for one process. Processes whose
	// prefixes are equal share one set of files. Nil expands only %pid%,
	// %ppid% and %hostname%.
	ResolvePrefix func(tracing.ProcessInfo) string
	// Claim, when set, is asked for each resolved prefix (Dir joined)
	// before anything is written under it; its error stops the writing.
	// A run claims its prefixes so that two processes (the ranks of one
	// job) never write the same files (atomicfile.Claim).
	Claim func(prefix string) error
	// Formats are the -f choices.
	Formats []Format
	// FS creates the CSV files; nil means the operating system's.
	FS FileSystem
	// Stdout receives the files, one after another, when PrefixTemplate is
	// a stream name (IsStreamName: -o stdout / -o stderr); nil: os.Stdout.
	Stdout io.Writer

	// Stats writes the *_stats.csv and domain_stats.csv files (--stats),
	// with or without -f csv; JSON then carries its summary block.
	Stats bool
	// StatsOnlyWithCSV writes the stats files only when Formats has CSV
	// (convert's --stats, a CSV option there).
	StatsOnlyWithCSV bool
	// MangledKernels keeps kernel names mangled (-M); TruncateKernels cuts
	// demangled names to the bare function name (-T, implies demangling).
	MangledKernels, TruncateKernels bool
	// KernelRename names each dispatch after the innermost roctxRangePush
	// range open on its thread (--kernel-rename; dispatchName).
	KernelRename bool
	// HideMarkers: the markers were recorded only for KernelRename
	// (--kernel-rename without --marker-trace): read for the names, written
	// nowhere.
	HideMarkers bool
	// AgentIndex selects agent numbers and labels (-A).
	AgentIndex AgentIndex
	// GroupByQueue: Perfetto puts one track per queue instead of per stream.
	GroupByQueue bool
	// PerfettoBufferBytes caps the Perfetto trace's packets
	// (--perfetto-buffer-size); 0: no cap. The records beyond it are left
	// out: the last ones, or with PerfettoRingBuffer the first ones
	// (--perfetto-buffer-fill-policy ring_buffer).
	PerfettoBufferBytes uint64
	PerfettoRingBuffer  bool
	// PerfettoPartBytes is the size past which the Perfetto trace goes on
	// in a new part, a trace of its own (internal/output/perfetto,
	// parts.go); 0: perfetto.DefaultPartBytes.
	PerfettoPartBytes uint64
	// MinimumOutputBytes suppresses domains (and the per-run files) whose raw
	// recorded size is below it (--minimum-output-data × 1024).
	MinimumOutputBytes uint64
	// OmitKernelTrace leaves out kernel_trace.csv and kernel_stats.csv: the
	// shim records the dispatches it counts even without --kernel-trace,
	// because counter rows take their dispatch columns from them.
	OmitKernelTrace bool
	// CountEvents makes Write read the spools (fill Result.Groups and
	// Result.Statuses) even when it writes nothing itself: a rocprof v1 run
	// (-o NAME.csv), whose files WriteV1 writes after the last pass, needs
	// what each process's runtime side reported.
	CountEvents bool
	// KeepCorrelationIDs lists spools (by path) whose correlation ids are
	// rocprofv3's already (convert's spools made from a ROCpd database):
	// they are not renumbered (order.go).
	KeepCorrelationIDs map[string]bool
	// SpillDir is where the record order puts what it must know about
	// every record once a spool is too long to hold it in memory (order.go,
	// internal/spill): a directory on a trusted path, best on a local disk
	// (a run gives its output directory, pipeline's spillRoot); "" is
	// $TMPDIR, else /tmp. Its files are unlinked as soon as created.
	SpillDir string

	// DescribeCounter describes a counter of an architecture ("gfx90a") as
	// the run's counter definitions do, for JSON's counters list and ROCpd's
	// rocpd_info_pmc; nil, or false for a name it does not know: only the
	// name is written.
	DescribeCounter func(arch, name string) (CounterMeta, bool)

	// PCSampleKernel, when set, says which kernels keep their PC samples
	// (--kernel-include-regex / --kernel-exclude-regex); nil keeps all.
	PCSampleKernel func(sym *KernelSymbol) bool
	// PCInstructions disassembles a spool's sampled PCs (NewPCInstructions);
	// nil: no instruction text. Package output sets it.
	PCInstructions func(s *PCSamples) PCInstructions

	// Metadata is the run's configuration as rocprofv3 names it, copied
	// into JSON's and ROCpd's metadata.
	Metadata map[string]any
	// FullEnvironment stores the app's whole environment in ROCpd's process
	// table (--output-config); otherwise only launcher variables (ranks).
	FullEnvironment bool
	// ThreadTraceFiles are the thread-trace files placed beside each
	// process's outputs (--att), by pid: their base names, which JSON lists
	// in strings.att_filenames and code_object_snapshot_filenames.
	ThreadTraceFiles map[int32][]string

	// Summary tables (-S, -D, --summary-groups, -u) and where they go
	// (--summary-output-file: summary.Target).
	Summary           bool
	SummaryPerDomain  bool
	SummaryGroups     []string
	SummaryUnits      string // sec, msec, usec, nsec (default)
	SummaryOutputFile string

	// CollectionPeriods writes each group's collection_periods.log
	// (--collection-period runs that asked for it).
	CollectionPeriods bool
	// WriteEmpty writes the non-CSV formats and summaries of a group that
	// recorded nothing (a conversion writes the files asked for); a run
	// writes none, as rocprofv3.
	WriteEmpty bool

	// Parquet: hive-partitioned layout domain=<d>/rank=<n>/host=<h>/<base>.parquet
	// (no host=<h> level when ParquetHost is empty).
	ParquetHive bool
	ParquetRank int
	ParquetHost string
	// RankOf gives a group's rank partition from its first process (the
	// run's %rank%); nil keeps ParquetRank.
	RankOf func(tracing.ProcessInfo) int
	// ParquetHiveRoot is the directory the hive partitions start at (the
	// run's output directory, -d): a prefix below it (<host>/<pid>) becomes
	// the file's name, so that every process of every host lands in
	// <root>/domain=<d>/rank=<n>/, where one glob finds them. Empty: the
	// prefix's own directory.
	ParquetHiveRoot string

	// V1Stats is rocprof v1's GEN_STATS (rocprof 5.2.3's rpl_run.sh): set by
	// --stats and by every tracing option (--hip-trace, --hsa-trace,
	// --sys-trace, --roctx-trace). v1 then built results.csv through its
	// SQLite database (quoted header, DurationNs) and wrote the stats files;
	// without it only results.csv, plain.
	V1Stats bool
	// V1Counters are the pass's pmc: line, in its order: rocprof v1's
	// results.csv has a column per counter in the order its passes' lines
	// named them.
	V1Counters []string
}

// SummaryOn reports whether any summary table is asked for.
func (c *Config) SummaryOn() bool {
	return c.Summary || c.SummaryPerDomain || len(c.SummaryGroups) > 0
}

// Has reports whether the -f choices include f.
func (c *Config) Has(f Format) bool {
	for _, g := range c.Formats {
		if g == f {
			return true
		}
	}
	return false
}

// File is one file written.
type File struct {
	Path    string
	Format  Format // the -f format ("summary", "log": files no format names)
	Name    string // output name, e.g. "kernel_trace", "kernel_stats", "agent_info"
	Domain  string // rocprofv3 domain name (KERNEL_DISPATCH, HIP_API...); "" for agent_info, domain_stats
	Records uint64 // data rows
	Bytes   int64
}

// Process sums up what one spool held.
type Process struct {
	PID     int32
	Spool   string
	Prefix  string
	Records uint64 // published records read
	Torn    uint64 // records rejected because they were never published
	Invalid uint64 // chunks abandoned at a malformed record
	Dropped uint64 // records the recorder could not store (counted in the app)
	// LostChunks are spool chunks the app wrote that read back empty (the
	// storage did not keep them); StoreError is why the recorder could not
	// grow its spool ("" if it never failed).
	LostChunks uint64
	StoreError string
	// Truncated are records stored with a string cut to fit (a name or
	// message over the largest record, ~64 KiB; counted in the app).
	Truncated uint64
	// PCSamplesLost are host-trap PC samples ROCR reported lost.
	PCSamplesLost uint64
}

// PCSamplingSummary is what became of one process's host-trap PC samples.
type PCSamplingSummary struct {
	PID       int
	Samples   uint64 // written
	Lost      uint64 // ROCR reported lost (its buffers were full)
	Unmatched uint64 // naming no dispatch of the process (left out)
	Filtered  uint64 // of kernels the kernel filter left out
	NoText    uint64 // written without instruction text
	NoObjdump bool   // llvm-objdump is not installed
}

// Result lists what Write produced, for the run manifest.
type Result struct {
	Files     []File
	Processes []Process
	// Skipped lists spool files that could not be read, with the reason.
	Skipped []string
	// Statuses are what each process's runtime side reported about itself
	// (tracing.TableStatus strings), for every spool read.
	Statuses []ProcessStatus
	// PCSampling sums up each process's host-trap PC samples (CSV).
	PCSampling []PCSamplingSummary
	// Groups are the output sets, in spool start order: the spools whose
	// resolved prefixes are equal, with what their first pass counted (set
	// whenever Write read the spools).
	Groups []Group
}

// ProcessStatus is one process's status strings, by status id
// (tracing.StatusShimAttached, ...).
type ProcessStatus struct {
	PID    int
	Status map[uint64]string
}

// Group is one output set: the processes sharing a prefix.
type Group struct {
	Prefix    string                // <Dir>/<resolved prefix>
	Spools    []string              // spool paths, in spool start order
	Processes []tracing.ProcessInfo // their headers, same order
	Events    uint64                // trace records (API calls, markers, dispatches, copies, ...)
	Bytes     uint64                // their raw size in the spools (--minimum-output-data)
	// Records counts Events by rocprofv3 domain (KERNEL_DISPATCH, HIP_API,
	// ...; absent: none), so a run can say which requested domain recorded
	// nothing whatever formats it wrote.
	Records map[string]uint64
	// PerfettoCapped counts, by process id, the records the Perfetto
	// trace left out at its buffer size (Config.PerfettoBufferBytes): lost
	// from that file, in every other output.
	PerfettoCapped map[int32]uint64
}

// String describes a file for logs.
func (f File) String() string {
	return fmt.Sprintf("%s (%s, %d rows, %d bytes)", f.Path, f.Name, f.Records, f.Bytes)
}

// IsStreamName reports whether -o names one of rocprofv3's output streams
// rather than a file: "stdout"/"STDOUT" and "stderr"/"STDERR". rocprofv3
// writes the data of both to standard output (its "stderr" stream is
// std::cout), and so does rocprof-go.
func IsStreamName(name string) bool {
	switch name {
	case "stdout", "STDOUT", "stderr", "STDERR":
		return true
	}
	return false
}

// Out is where Write sends the files when -o is a stream name.
func (c *Config) Out() io.Writer {
	if c.Stdout != nil {
		return c.Stdout
	}
	return &procStdout // a closed pipe does not stop the run (stdout.go)
}

// DataOut is where the data files go when -o is a stream name: as Out,
// but a closed pipe fails the write with ErrStdoutClosed (the data was
// lost, where a lost summary table only was not shown).
func (c *Config) DataOut() io.Writer {
	if c.Stdout != nil {
		return c.Stdout
	}
	return dataStdout{}
}

// V1Enabled reports whether -o asks for rocprof v1's files.
func (c *Config) V1Enabled() bool {
	return strings.HasSuffix(strings.ToLower(c.PrefixTemplate), ".csv")
}

// PrefixOf expands the prefix template for one process.
func (c *Config) PrefixOf(p tracing.ProcessInfo) string {
	if c.ResolvePrefix != nil {
		return c.ResolvePrefix(p)
	}
	host := p.Hostname
	if host == "" {
		host = "UNKNOWN_HOSTNAME"
	}
	return strings.NewReplacer("%pid%", strconv.Itoa(int(p.PID)),
		"%ppid%", strconv.Itoa(int(p.PPID)), "%hostname%", host).Replace(c.PrefixTemplate)
}
