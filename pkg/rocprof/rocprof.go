package rocprof

import (
	"context"
	"io"
	"strconv"

	"github.com/rocprof-go/rocprof-go/internal/attach"
	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/pipeline"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// The run pipeline itself lives in internal/pipeline, which the CLI calls
// too; this file is its public front. The types are the pipeline's (Go type
// aliases), so values pass between the two without conversion.

type (
	// Options configures one profiling run.
	Options = pipeline.Options
	// Result is how a run ended. A non-zero ExitStatus is the app's own (or
	// 124 for a timeout); it is not an error.
	Result = pipeline.Result
	// Manifest is a run's run.json: the command, options, agents, passes,
	// every file written with its record count, and what was lost.
	Manifest = pipeline.Manifest
	// ManifestAgent is one GPU or CPU agent of a Manifest.
	ManifestAgent = pipeline.ManifestAgent
	// ManifestPass is one pass (one run of the app) of a Manifest.
	ManifestPass = pipeline.ManifestPass
	// ManifestFile is one output file of a Manifest.
	ManifestFile = pipeline.ManifestFile
	// FormatBytes is one output format's files on disk (Manifest.FormatBytes).
	FormatBytes = pipeline.FormatBytes
	// ManifestRank is the launcher's view of a run that is a job's rank.
	ManifestRank = pipeline.ManifestRank
	// Job is the manifests of a job's ranks that wrote into one directory.
	Job = pipeline.Job
	// DomainLoss is a requested domain the run did not collect, and why.
	DomainLoss = pipeline.DomainLoss
	// RecordLoss is a process's records that did not reach the outputs.
	RecordLoss = pipeline.RecordLoss
	// NoGPU is a process whose GPU stack found no GPU (run.json no_gpu).
	NoGPU = pipeline.NoGPU
	// UnprofiledProcess is a process of the app that could not record
	// (run.json unprofiled_processes).
	UnprofiledProcess = launch.UnprofiledProcess
	// DrainReport is what the drain of a pass's spools from memory to the
	// output file system did while its app ran (run.json's passes[].drain).
	DrainReport = launch.DrainReport
	// TruncatedNames counts a process's names and messages the recorder
	// cut to fit (run.json truncated_names).
	TruncatedNames = pipeline.TruncatedNames
	// LostDomainsError fails a run that did not collect a requested domain.
	LostDomainsError = pipeline.LostDomainsError
	// RecordsLostError fails a run some of whose records were lost.
	RecordsLostError = pipeline.RecordsLostError
	// TornSpoolError fails a run one of whose spools was cut short
	// (truncated) while its outputs were read from it: the byte from
	// which its records are lost, and the chunks lost.
	TornSpoolError = tracing.TornSpoolError
	// Batch is a batch file: jobs run one after another.
	Batch = pipeline.Batch
	// BatchJob is one job of a Batch.
	BatchJob = pipeline.BatchJob
	// BatchResult is how one job of a batch ended.
	BatchResult = pipeline.BatchResult
	// BatchJobError names the job whose options are wrong.
	BatchJobError = pipeline.BatchJobError
	// AttachReport is what an attach did (run.json's attach object).
	AttachReport = attach.Report
	// AttachProcess is one process of an AttachReport.
	AttachProcess = attach.Process
	// AttachSkipped is a descendant an attach could not profile, and why.
	AttachSkipped = attach.Skipped
	// AlreadyProfiledError is a process another rocprof-go profiles.
	AlreadyProfiledError = attach.AlreadyProfiledError
	// NoRuntimeError is a process that loaded no HIP or HSA library
	// during the attach.
	NoRuntimeError = attach.NoRuntimeError
	// AttachDispatchesLostError fails an attach some of whose window's
	// kernel dispatches could not be timed.
	AttachDispatchesLostError = attach.DispatchesLostError
)

// ManifestName is the manifest's file name in a run's output directory.
const ManifestName = pipeline.ManifestName

// ErrBatchFailed is RunBatch's verdict when a job did not end as expected.
var ErrBatchFailed = pipeline.ErrBatchFailed

// Run profiles argv (the application and its arguments) and returns when
// every process it started has exited and the outputs are written.
func Run(ctx context.Context, opts Options, argv []string) (*Result, error) {
	return pipeline.Run(ctx, opts, argv)
}

// Attach profiles the running process pid (started with no profiler) and
// its descendants, as `rocprof-go --attach PID` does with opts.Args (which
// hold no --attach of their own): it detaches after
// --attach-duration-msec, when ctx is cancelled, on SIGINT or SIGTERM, or
// when every attached process exited, leaves the processes as they were,
// and returns once the outputs are written. Result.Manifest.Attach says
// what it did (docs/attach.md).
func Attach(ctx context.Context, opts Options, pid int) (*Result, error) {
	opts.Args = append(append([]string(nil), opts.Args...), "--attach", strconv.Itoa(pid))
	return pipeline.Run(ctx, opts, nil)
}

// LoadManifest reads the run.json in dir.
func LoadManifest(dir string) (*Manifest, error) { return pipeline.LoadManifest(dir) }

// LoadJob reads the manifests of the newest job whose ranks wrote into
// dir, in rank order; nil when none did.
func LoadJob(dir string) (*Job, error) { return pipeline.LoadJob(dir) }

// LoadBatch reads a batch file (YAML).
func LoadBatch(path string) (*Batch, error) { return pipeline.LoadBatch(path) }

// CheckBatch checks every job's options before any runs.
func CheckBatch(b *Batch, outDir string, opts Options) error {
	return pipeline.CheckBatch(b, outDir, opts)
}

// RunBatch runs the jobs of a batch into outDir/<job name>/, stopping at
// the first job that does not end as expected unless keepGoing.
func RunBatch(ctx context.Context, b *Batch, outDir string, keepGoing bool, opts Options) ([]BatchResult, bool) {
	return pipeline.RunBatch(ctx, b, outDir, keepGoing, opts)
}

// WriteBatchSummary prints a table of the jobs' results.
func WriteBatchSummary(w io.Writer, results []BatchResult, total int) {
	pipeline.WriteBatchSummary(w, results, total)
}

// ThreadTraceDecode decodes the thread traces (.att files) a run left in
// dir with AMD's trace decoder library, found in libDirs or
// ldLibraryPath, and returns the files it wrote.
func ThreadTraceDecode(dir string, libDirs []string, ldLibraryPath string, counters []string, log io.Writer) ([]string, error) {
	return pipeline.ThreadTraceDecode(dir, libDirs, ldLibraryPath, counters, log)
}
