package pipeline

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
	"github.com/rocprof-go/rocprof-go/internal/kernelname"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/output"
	"github.com/rocprof-go/rocprof-go/internal/output/format"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/placeholder"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// passOutputs is what writing one pass's outputs needs.
type passOutputs struct {
	Config *options.Config
	// Dir is the pass's output directory; it may still hold per-process
	// placeholders (%pid% ...), resolved for each process.
	Dir      string
	SpoolDir string
	Launch   time.Time
	// Stdout is where summaries printed "to the terminal" go.
	Stdout io.Writer
}

// outputReport is what was made of one pass's spools (or, from
// writeRunOutputs, of every pass's together): the files, the records by
// domain, and what did not reach them.
type outputReport struct {
	Files []model.File
	// Records counts the pass's records by rocprofv3 domain name
	// (KERNEL_DISPATCH, HIP_API, ...; absent: none recorded).
	Records map[string]int64
	// Lost are requested domains a process could not collect: the run
	// fails. Unavailable are domains an aggregate option (--sys-trace,
	// --runtime-trace) implied that the process's runtime cannot give: a
	// notice.
	Lost, Unavailable []DomainLoss
	// LostRecords are the processes whose spools did not hold every record
	// they were given; SkippedSpools the spool files that could not be read
	// at all (path: reason). Either fails the run.
	LostRecords   []RecordLoss
	SkippedSpools []string
	// NoGPU are the processes whose GPU stack found no GPU (hsa_init
	// failed, or the HSA runtime had no GPU agent): the run fails, and
	// nothing it did not record is blamed on the app.
	NoGPU []NoGPU
	// Truncated are the processes that stored names or messages cut to
	// fit a record (over ~64 KiB): a note, the records are kept.
	Truncated []TruncatedNames
	// Warnings are said at the end of the run (writeRunOutputs' only).
	Warnings []string
}

// writePassOutputs turns one pass's spools into the requested output files.
func writePassOutputs(req passOutputs) (*outputReport, error) {
	rep := &outputReport{}
	c := req.Config
	// Thread traces first: the raw files are the run's data whatever else
	// fails to be written.
	files, err := placeThreadTraces(req.SpoolDir, req.Dir, req.Launch)
	if err != nil {
		rep.Files = files
		return rep, fmt.Errorf("thread trace: %w", err)
	}
	cfg := outputConfig(c, req.Dir, req.Launch)
	partBytes, spillDir, err := writerSettings(envLookup) // checked before the app ran (checkPlan)
	if err != nil {
		rep.Files = files
		return rep, err
	}
	cfg.PerfettoPartBytes = partBytes
	cfg.SpillDir = spillRoot(spillDir, fixedPart(req.Dir))
	cfg.Stdout = req.Stdout // -o stdout / -o stderr
	cfg.Claim = claimOutputs()
	cfg.ThreadTraceFiles = threadTraceNamesByPID(files)
	// A rocprof v1 run (-o NAME.csv), whose files are written after the
	// last pass, needs what each process's runtime side reported (lost
	// domains) even when this pass writes nothing.
	cfg.CountEvents = c.V1Results()
	res, err := output.Write(cfg, req.SpoolDir)
	if res != nil {
		rep.NoGPU = noGPUProcesses(res.Statuses)
		rep.Lost, rep.Unavailable = domainLosses(c, res.Statuses)
		rep.LostRecords, rep.SkippedSpools = recordLosses(res)
		// A pass's warnings are not reported: these are notes of their own.
		for _, n := range pcSamplingNotes(res.PCSampling) {
			fmt.Fprintln(os.Stderr, "rocprof-go: note: "+n)
		}
		for _, p := range res.Processes {
			if p.Truncated > 0 {
				rep.Truncated = append(rep.Truncated, TruncatedNames{PID: int(p.PID), Count: p.Truncated})
			}
		}
		rep.Records = map[string]int64{}
		for _, g := range res.Groups {
			for d, n := range g.Records {
				rep.Records[d] += int64(n)
			}
		}
		files = append(files, res.Files...)
	}
	rep.Files = files
	return rep, err
}

// writeRunOutputs writes rocprof v1's files (-o NAME.csv) once every pass
// ran: one results.csv merging the passes' counters by dispatch, and the
// stats files, at the -o path under the run's output directory (not a pass
// directory).
func writeRunOutputs(passes []passOutputs) (*outputReport, error) {
	rep := &outputReport{}
	if w := unmatchedFilterWarning(passes); w != "" {
		rep.Warnings = append(rep.Warnings, w)
	}
	var v1 []output.V1Pass
	for _, req := range passes {
		c := req.Config
		if !c.V1Results() {
			continue
		}
		dir := req.Dir
		if c.Pass.SubDir != "" {
			dir = filepath.Dir(dir) // PassDir appended the pass's directory
		}
		v1 = append(v1, output.V1Pass{Config: outputConfig(c, dir, req.Launch), SpoolDir: req.SpoolDir})
	}
	if len(v1) == 0 {
		return rep, nil
	}
	res, err := output.WriteV1(v1)
	if res != nil {
		rep.Files = append(rep.Files, res.Files...)
	}
	return rep, err
}

// unmatchedFilterWarning says when --kernel-include-regex /
// --kernel-exclude-regex selected none of the kernels the app loaded in any
// pass: the run then profiled nothing with them, which would otherwise only
// show as missing counters. Names are matched as the shim matches them
// (kernelname.ForFilter: -T's bare names, -M's symbols).
func unmatchedFilterWarning(passes []passOutputs) string {
	c := passes[0].Config
	if c.KernelIncludeRegex == "" && c.KernelExcludeRegex == "" {
		return ""
	}
	// The options were checked before the app started.
	include, _ := regexp.Compile(c.KernelIncludeRegex)
	exclude, _ := regexp.Compile(c.KernelExcludeRegex)
	seen := map[string]bool{}
	var names []string
	for _, req := range passes {
		syms, err := output.KernelSymbols(req.SpoolDir)
		if err != nil {
			return ""
		}
		for _, sym := range syms {
			name := kernelname.ForFilter(sym, c.MangledKernels.On(), c.TruncateKernels.On())
			if (c.KernelIncludeRegex == "" || include.MatchString(name)) &&
				(c.KernelExcludeRegex == "" || !exclude.MatchString(name)) {
				return ""
			}
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		return "" // no kernel recorded: nothing to match (e.g. a HIP-only trace)
	}
	var filter []string
	if c.KernelIncludeRegex != "" {
		filter = append(filter, "--kernel-include-regex "+strconv.Quote(c.KernelIncludeRegex))
	}
	if c.KernelExcludeRegex != "" {
		filter = append(filter, "--kernel-exclude-regex "+strconv.Quote(c.KernelExcludeRegex))
	}
	// The app's own kernels first: HIP's runtime loads its blit kernels
	// (__amd_rocclr_*) into every process, and they would hide them.
	sort.Slice(names, func(i, j int) bool {
		bi, bj := strings.HasPrefix(names[i], "__amd_rocclr_"), strings.HasPrefix(names[j], "__amd_rocclr_")
		if bi != bj {
			return bj
		}
		return names[i] < names[j]
	})
	shown := names
	if len(shown) > 8 {
		shown = append(shown[:8:8], fmt.Sprintf("and %d more", len(names)-8))
	}
	how := "their demangled names"
	switch {
	case c.TruncateKernels.On():
		how = "their names as -T truncates them"
	case c.MangledKernels.On():
		how = "their mangled symbols (-M)"
	}
	return fmt.Sprintf("%s selected none of the %d kernels the app loaded, so no dispatch was profiled with it (counters, thread trace); it is matched against %s: %s. Fix the regular expression",
		strings.Join(filter, " "), len(names), how, strings.Join(shown, "; "))
}

// outputConfig maps a pass's options onto the writers' one configuration
// (the orchestration decides; internal/output knows no options). The
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
	agentNumbering := agentIndex(c.AgentIndex)
	var pcsKernel func(*output.KernelSymbol) bool
	if c.PCSampling() && (c.KernelIncludeRegex != "" || c.KernelExcludeRegex != "") {
		// As the shim matches kernels for counters (kernelname.ForFilter).
		var include, exclude *regexp.Regexp // checked before the app started
		if c.KernelIncludeRegex != "" {
			include, _ = regexp.Compile(c.KernelIncludeRegex)
		}
		if c.KernelExcludeRegex != "" {
			exclude, _ = regexp.Compile(c.KernelExcludeRegex)
		}
		mangled, truncated := c.MangledKernels.On(), c.TruncateKernels.On()
		pcsKernel = func(sym *output.KernelSymbol) bool {
			name := kernelname.ForFilter(sym.Raw, mangled, truncated)
			return (include == nil || include.MatchString(name)) && (exclude == nil || !exclude.MatchString(name))
		}
	}
	return output.Config{
		PCSampleKernel: pcsKernel,
		PrefixTemplate: prefix,
		ResolvePrefix: func(p tracing.ProcessInfo) string {
			proc := processPlaceholders(p, launchTime)
			return filepath.Join(placeholder.Expand(dirTemplate, proc), placeholder.Expand(prefix, proc))
		},
		Formats:            formats,
		Stats:              c.Stats.On(),
		OmitKernelTrace:    !c.KernelTrace.On(),
		MangledKernels:     c.MangledKernels.On(),
		TruncateKernels:    c.TruncateKernels.On(),
		KernelRename:       c.KernelRename.On(),
		HideMarkers:        c.KernelRename.On() && !c.MarkerTrace.On(),
		AgentIndex:         agentNumbering,
		GroupByQueue:       c.GroupByQueue.On(),
		MinimumOutputBytes: uint64(c.MinimumOutputData) * 1024,
		FullEnvironment:    c.OutputConfig.On(),
		Summary:            c.Summary.On(),
		SummaryPerDomain:   c.SummaryPerDomain.On(),
		SummaryGroups:      append([]string(nil), c.SummaryGroups...),
		SummaryUnits:       c.SummaryUnits,
		SummaryOutputFile:  c.SummaryOutputFile,
		CollectionPeriods:  len(c.CollectionPeriod) > 0,
		ParquetHive:        c.ParquetHive.On(),
		ParquetHiveRoot:    fixedPart(dirTemplate),
		RankOf:             processRank,
		Metadata:           outputMetadata(c),
		// rocprof 5.2.3's rpl_run.sh sets GEN_STATS for --stats and every
		// tracing option.
		V1Stats: c.Stats.On() || c.HipTrace.On() || c.HipRuntimeTrace.On() || c.HipCompilerTrace.On() ||
			c.HsaTrace.On() || c.HsaCoreTrace.On() || c.HsaAmdTrace.On() || c.SysTrace.On() ||
			c.MarkerTrace.On(),
		V1Counters: append([]string(nil), c.Pmc...),
		// --perfetto-buffer-size caps the trace only when it is given
		// (docs/options.md).
		PerfettoBufferBytes: uint64(max(c.PerfettoBufferSize, 0)) * 1024,
		PerfettoRingBuffer:  c.PerfettoBufferFillPolicy == "ring_buffer",
		DescribeCounter:     counterDescriber(c),
	}
}

// outputMetadata is the run's configuration as rocprofv3's output_config
// names it, which JSON and ROCpd copy into their metadata.
func outputMetadata(c *options.Config) map[string]any {
	return map[string]any{
		"output_path": c.OutputDirectory, "output_file": c.OutputFile,
		"output_format": strings.Join(c.OutputFormat, ","),
		"kernel_rename": c.KernelRename.On(), "group_by_queue": c.GroupByQueue.On(),
		"summary_output": c.Summary.On() || c.SummaryPerDomain.On() || len(c.SummaryGroups) > 0,
		// rocprofv3's output_config names these as below; readers (its
		// summary test) check them in metadata.config.
		"summary": c.Summary.On(), "summary_per_domain": c.SummaryPerDomain.On(),
		"summary_groups": append([]string{}, c.SummaryGroups...),
		"summary_unit":   summaryUnit(c.SummaryUnits),
		"summary_file":   summaryFile(c.SummaryOutputFile),
		"csv_output":     hasFormat(c.OutputFormat, format.CSV),
		"json_output":    hasFormat(c.OutputFormat, format.JSON),
		"pftrace_output": hasFormat(c.OutputFormat, format.Perfetto),
		"otf2_output":    hasFormat(c.OutputFormat, format.OTF2),
		"rocpd_output":   hasFormat(c.OutputFormat, format.ROCpd),
	}
}

// claimOutputs is how a run started by a launcher (mpirun, srun: one
// rocprof-go per rank) claims its output prefixes, so that two ranks of
// one job never write the same files (docs/mpi.md); nil outside a launcher.
func claimOutputs() func(string) error {
	l := placeholder.LauncherOf(os.LookupEnv)
	if l.Name == "" {
		return nil
	}
	host, err := os.Hostname()
	if err != nil {
		host = "UNKNOWN_HOSTNAME"
	}
	owner := atomicfile.Owner{Host: host, PID: os.Getpid(), Rank: l.Rank, RankVar: l.RankVar, Job: l.Name + ":" + l.Job}
	return func(prefix string) error { return atomicfile.Claim(prefix, owner) }
}

// processRank is the MPI/SLURM rank of a process (%rank%), which names
// its Parquet hive partition.
func processRank(p tracing.ProcessInfo) int {
	rank, _ := strconv.Atoi(placeholder.Expand("%rank%", processPlaceholders(p, time.Time{})))
	return rank
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

// agentIndex is -A's mode (the options checked its value before the run).
func agentIndex(s string) output.AgentIndex {
	a, _ := output.ParseAgentIndex(s)
	return a
}

// hasFormat reports whether -f names a format (in any case, as -f accepts).
func hasFormat(formats []string, name format.Name) bool {
	for _, f := range formats {
		if name.Is(f) {
			return true
		}
	}
	return false
}

// summaryUnit is rocprofv3's summary_unit: nsec unless -u says otherwise.
func summaryUnit(u string) string {
	if u == "" {
		return "nsec"
	}
	return u
}

// summaryFile is rocprofv3's summary_file: the --summary-output-file name,
// "stderr" (where its tables go) without one.
func summaryFile(f string) string {
	if f == "" {
		return "stderr"
	}
	return f
}

// threadTraceNamesByPID sorts the placed thread-trace files by the process
// that wrote them (their names start with its pid), for JSON's
// strings.att_filenames and code_object_snapshot_filenames.
func threadTraceNamesByPID(files []model.File) map[int32][]string {
	var byPID map[int32][]string
	for _, f := range files {
		name := filepath.Base(f.Path)
		m := attFileName.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil {
			continue
		}
		if byPID == nil {
			byPID = map[int32][]string{}
		}
		byPID[int32(pid)] = append(byPID[int32(pid)], name)
	}
	return byPID
}

// pcSamplingNotes tells what the host-trap samples could not show: samples
// that named no dispatch, and instructions left without text.
func pcSamplingNotes(sums []output.PCSamplingSummary) []string {
	var notes []string
	for _, s := range sums {
		if s.Unmatched > 0 {
			notes = append(notes, fmt.Sprintf("pid %d: %d PC samples named no dispatch of the process and were left out of pc_sampling_host_trap.csv", s.PID, s.Unmatched))
		}
		if s.NoObjdump && s.NoText > 0 {
			notes = append(notes, fmt.Sprintf("pid %d: llvm-objdump is not installed: the Instruction column of %d PC samples is empty (install llvm to disassemble them)", s.PID, s.NoText))
		} else if s.NoText > 0 {
			notes = append(notes, fmt.Sprintf("pid %d: %d PC samples have no instruction text (their code object was in the app's memory, or the PC is on no instruction llvm-objdump listed)", s.PID, s.NoText))
		}
	}
	return notes
}
