package convert

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/output"
	"github.com/rocprof-go/rocprof-go/internal/placeholder"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// Options are the output choices of a conversion.
type Options struct {
	Formats []output.Format
	// Dir and Prefix place the files at Dir/Prefix_<name>.<ext>; the
	// prefix's placeholders (%pid%, %hostname%, %rank%, ...) are resolved
	// per process of the inputs, which gives one set of files per value.
	Dir, Prefix string
	Stats       bool   // CSV: also the *_stats.csv files
	Mangled     bool   // -M
	Truncate    bool   // -T
	AgentIndex  string // absolute, relative (default) or type-relative
	// GroupByQueue: Perfetto tracks per queue instead of per stream.
	GroupByQueue bool
	// Spools are rocprof-go spool files to convert besides the databases:
	// the spools a run kept when it could not write its outputs (a full
	// disk, a killed CLI), read in place.
	Spools []string
	// ParquetHive writes Parquet hive-partitioned, one file per process:
	// Dir/domain=<table>/rank=<n>/Prefix-<pid>.parquet, n the MPI/SLURM
	// rank of the process (its position among the inputs' processes when
	// it has none), so DuckDB, Spark or Trino query many ranks in place.
	ParquetHive bool

	keepIDs map[string]bool // the spools made from databases (Run fills it)
	pcTexts pcTexts         // their PC samples' instruction texts (Run fills it)
}

// Result lists what a conversion wrote.
type Result struct {
	Spools int           // processes read back
	CSV    []output.File // CSV files with their row counts
	Paths  []string      // the other formats' files or directories
	// Lost is a *LostRecordsError when a kept spool says records were not
	// kept when it was recorded (the files hold every record it has), or nil.
	Lost error
	// Torn is the *tracing.TornSpoolError of every input spool cut short
	// while it was read (joined), or nil: the files hold what was read
	// before the cut; the records past it, counted in chunks, are lost.
	Torn error
}

// tornOr keeps an error of output.Write that is only spools cut short
// while read in res.Torn (the outputs were written from what was read)
// and returns any other error.
func (res *Result) tornOr(r *output.Result, err error) error {
	if r == nil || !tracing.OnlyTorn(err) {
		return err
	}
	res.Torn = errors.Join(res.Torn, err)
	return nil
}

// LostRecordsError lists the kept spools whose records were not all kept
// when the app recorded them: dropped by the recorder (its spool could not
// grow) or written and not kept by the spool's file system (chunks that
// read back empty).
type LostRecordsError struct {
	Spools []SpoolLoss
}

// SpoolLoss is what one kept spool lost as it was recorded.
type SpoolLoss struct {
	Path       string
	PID        int32
	Dropped    uint64
	LostChunks uint64
	StoreError string
}

func (e *LostRecordsError) Error() string {
	var b strings.Builder
	b.WriteString("records were not kept when the app ran (the converted files hold every record the spools have):")
	for _, s := range e.Spools {
		parts := tracing.StoreLosses(s.Dropped, s.LostChunks, s.StoreError)
		fmt.Fprintf(&b, "\n  pid %d (%s): %s", s.PID, s.Path, strings.Join(parts, ", "))
	}
	b.WriteString("\n  (the spool's file system was full, or did not keep what was written: record again with the spools on a file system with room, " + launch.SpoolRootEnv + "=DIR)")
	return b.String()
}

// Run converts the databases. The intermediate spools live in a temporary
// directory inside Dir (same file system as the output) and are removed.
func Run(dbs []*rocpdread.DB, opt Options) (*Result, error) {
	if err := output.ValidateFormats(opt.Formats); err != nil {
		return nil, err
	}
	if _, err := output.ParseAgentIndex(opt.AgentIndex); err != nil {
		return nil, err
	}
	if opt.Prefix == "" {
		opt.Prefix = "out"
	}
	// The spools rebuilt from the databases go to a private directory in
	// the output directory, reached through its descriptor.
	scratch, err := atomicfile.NewStage(opt.Dir)
	if err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	defer scratch.Abort()
	tmp := scratch.Dir()
	opt.pcTexts = pcTexts{}
	procs, err := spoolProcesses(tmp, dbs, opt.pcTexts)
	if err != nil {
		return nil, err
	}
	// A database's correlation ids are rocprofv3's numbering already: the
	// writers keep them (they renumber a raw spool's).
	opt.keepIDs = map[string]bool{}
	for _, p := range procs {
		opt.keepIDs[p.path] = true
	}
	kept, lost, err := keptSpools(opt.Spools)
	if err != nil {
		return nil, err
	}
	procs = append(procs, kept...)
	spools := make([]string, len(procs))
	for i, p := range procs {
		spools[i] = p.path
	}
	res := &Result{Spools: len(spools)}
	if len(lost) > 0 {
		res.Lost = &LostRecordsError{Spools: lost}
	}
	var csvSpools []string // nil: the temporary directory's, in their order
	if len(opt.Spools) > 0 {
		csvSpools = spools
	}
	var others []output.Format
	for _, f := range opt.Formats {
		if f == output.FormatParquet && opt.ParquetHive {
			paths, err := hiveParquet(procs, opt)
			if err != nil {
				return nil, err
			}
			res.Paths = append(res.Paths, paths...)
			continue
		}
		if f == output.FormatCSV {
			cfg := writerConfig(opt)
			cfg.Dir, cfg.PrefixTemplate, cfg.SpoolPaths = opt.Dir, opt.Prefix, csvSpools
			cfg.ResolvePrefix = prefixOf(opt.Prefix)
			cfg.Formats = []output.Format{output.FormatCSV}
			r, err := output.Write(cfg, tmp)
			if err = res.tornOr(r, err); err != nil {
				return nil, err
			}
			res.CSV = append(res.CSV, r.Files...)
			continue
		}
		others = append(others, f)
	}
	if len(others) == 0 {
		return res, nil
	}
	// Every input in one set of files, or one set per process or rank when
	// the prefix has placeholders (-o 'rank%rank%'), as a run splits them.
	cfg := writerConfig(opt)
	cfg.Dir, cfg.SpoolPaths, cfg.Formats, cfg.WriteEmpty = opt.Dir, spools, others, true
	cfg.ResolvePrefix = prefixOf(opt.Prefix)
	r, err := output.Write(cfg, tmp)
	if err = res.tornOr(r, err); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, g := range r.Groups {
		for _, f := range others {
			w, _ := output.LookupWriter(f)
			if p := w.Path(g.Prefix); !seen[p] {
				seen[p] = true
				res.Paths = append(res.Paths, p)
			}
		}
	}
	return res, nil
}

// prefixOf resolves the -o template for one process of the inputs as a
// run resolves it for the processes it profiled: %pid%, %hostname%, %rank%
// (the rank of the launcher that started the process, read from its
// stored environment), %env{NAME}% ... (docs/mpi.md).
func prefixOf(template string) func(tracing.ProcessInfo) string {
	return func(p tracing.ProcessInfo) string {
		info := p
		host := p.Hostname
		if host == "" {
			host = "UNKNOWN_HOSTNAME"
		}
		return placeholder.Expand(template, placeholder.Process{
			Pid: int(p.PID), Ppid: int(p.PPID), Pgid: int(p.PGID), Sid: int(p.SID), PSize: int(max(p.PSize, 1)),
			Hostname: host, Cwd: p.Cwd, Argv: p.Argv,
			LookupEnv: func(name string) (string, bool) { return info.Getenv(name) },
		})
	}
}

// writerConfig is the writers' configuration of a conversion.
func writerConfig(opt Options) output.Config {
	ai, _ := output.ParseAgentIndex(opt.AgentIndex) // Run checked it
	cfg := output.Config{StatsOnlyWithCSV: true, MangledKernels: opt.Mangled, TruncateKernels: opt.Truncate,
		GroupByQueue: opt.GroupByQueue, AgentIndex: ai, Stats: opt.Stats, KeepCorrelationIDs: opt.keepIDs}
	if opt.pcTexts != nil {
		cfg.PCInstructions = opt.pcTexts.instructions
	}
	return cfg
}

// hiveParquet writes each process's Parquet files under its rank partition
// and returns the partition directories written.
func hiveParquet(procs []spool, opt Options) ([]string, error) {
	w, err := output.LookupWriter(output.FormatParquet)
	if err != nil {
		return nil, err
	}
	var dirs []string
	seen := map[string]bool{}
	for i, p := range procs {
		rank := p.rank
		if rank < 0 {
			rank = i
		}
		o := writerConfig(opt)
		o.ParquetHive, o.ParquetRank, o.ParquetHost = true, rank, p.host
		if o.ParquetHost == "" {
			o.ParquetHost = "UNKNOWN_HOSTNAME"
		}
		// The pid in the file name keeps processes that share a rank
		// (several runs, or no rank known) from overwriting each other.
		prefix := filepath.Join(opt.Dir, fmt.Sprintf("%s-%d", opt.Prefix, p.pid))
		if err := w.Write(prefix, &output.Input{Spools: []string{p.path}, Config: o}); err != nil {
			return nil, err
		}
		d := filepath.Join(opt.Dir, fmt.Sprintf("domain=*/rank=%d/host=%s", rank, o.ParquetHost))
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	return dirs, nil
}

// keptSpools describes spool files given as they are (not from a database),
// and what each lost when it was recorded: its header's dropped records and
// the chunks that read back empty (tracing.Reader.LostChunks).
func keptSpools(paths []string) ([]spool, []SpoolLoss, error) {
	var out []spool
	var lost []SpoolLoss
	for _, p := range paths {
		r, err := tracing.Open(p)
		if err != nil {
			return nil, nil, fmt.Errorf("spool %s cannot be read: %w", p, err)
		}
		info := r.Process()
		chunks := r.LostChunks()
		_ = r.Close()
		out = append(out, spool{path: p, pid: int64(info.PID), rank: -1, host: info.Hostname})
		if info.Dropped > 0 || chunks > 0 {
			lost = append(lost, SpoolLoss{Path: p, PID: info.PID, Dropped: info.Dropped, LostChunks: chunks, StoreError: info.StoreError()})
		}
	}
	return out, lost, nil
}
