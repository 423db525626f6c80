package options

import "github.com/rocprof-go/rocprof-go/internal/domain"

// Kind is how an option takes its value.
type Kind uint8

// Option kinds, mirroring rocprofv3's argparse declarations.
const (
	KindBool     Kind = iota + 1 // [BOOL]: nargs="?", const=True
	KindString                   // one value
	KindInt                      // one integer (decimal or 0x hex)
	KindStrings                  // nargs="*" or "+": several values, space or repeat separated
	KindOptional                 // optional value (rocprof-go's --virtual-gpu[=ARCH])
	KindDuration                 // a Go duration (rocprof-go's --timeout)
)

// Spec describes one command-line option. The table Specs drives flag
// registration, help groups, job-file keys, config-file keys, the environment
// variables read as defaults and the ones exported to the injected libraries.
type Spec struct {
	Long    string   // long name without dashes
	Alias   string   // second long name (--att for --advanced-thread-trace)
	Short   string   // one-letter alias, or ""
	Dest    string   // argparse destination: key in job files and config files
	Kind    Kind     // value shape
	Group   string   // help group, as rocprofv3 groups its options
	Metavar string   // value name in help
	Help    string   // one-line help
	Choices []string // allowed values (lower case), if restricted
	Default string   // default shown in help; applied by Resolve when unset
	// Env is the rocprofv3 environment variable that carries this option to the
	// tool library. rocprof-go reads it as a default (flags > ROCPROF_* > config
	// file) and exports it to the injected libraries.
	Env string
	// ReadBy says which injected libraries read Env (the environment
	// contract, toolvars.go); 0 when it is exported for rocprofv3's
	// compatibility only.
	ReadBy Reader
	// Hidden options are accepted but not listed in --help (rocprofv3's hidden ones).
	Hidden bool
	// NotSupported, when set, says why using the option fails with "not
	// supported yet"; it is cleared as soon as the capability exists.
	NotSupported string
	field        func(*Config) any
	// domain marks the place of a domain's switch (domainOpt) until
	// withDomains writes the line from its row.
	domain domain.ID
}

// Help groups in the order rocprofv3 prints them.
var Groups = []string{
	"I/O options",
	"Aggregate tracing options",
	"Basic tracing options",
	"Granular tracing options",
	"Counter collection options",
	"PC sampling options",
	"Post-processing tracing options",
	"Summary options",
	"Kernel naming options",
	"Filtering options",
	"Perfetto-specific options",
	"Display options",
	"Advanced options",
	"Advanced thread trace options",
	"Process attachment options",
	"rocprof-go options",
}

func boolOpt(long, short, dest, group, env, help string, f func(*Config) *Tri) Spec {
	return Spec{Long: long, Short: short, Dest: dest, Kind: KindBool, Group: group, Metavar: "BOOL",
		Env: env, Help: help, field: func(c *Config) any { return f(c) }}
}

func strOpt(long, short, dest, group, env, metavar, help string, f func(*Config) *string) Spec {
	return Spec{Long: long, Short: short, Dest: dest, Kind: KindString, Group: group, Metavar: metavar,
		Env: env, Help: help, field: func(c *Config) any { return f(c) }}
}

func intOpt(long, short, dest, group, env, metavar, help string, f func(*Config) *int) Spec {
	return Spec{Long: long, Short: short, Dest: dest, Kind: KindInt, Group: group, Metavar: metavar,
		Env: env, Help: help, field: func(c *Config) any { return f(c) }}
}

// uintOpt is an integer option whose range is uint64's (the PC-sampling
// interval: host trap offers 1 to 2^64-1).
func uintOpt(long, short, dest, group, env, metavar, help string, f func(*Config) *uint64) Spec {
	return Spec{Long: long, Short: short, Dest: dest, Kind: KindInt, Group: group, Metavar: metavar,
		Env: env, Help: help, field: func(c *Config) any { return f(c) }}
}

func listOpt(long, short, dest, group, env, metavar, help string, f func(*Config) *[]string) Spec {
	return Spec{Long: long, Short: short, Dest: dest, Kind: KindStrings, Group: group, Metavar: metavar,
		Env: env, Help: help, field: func(c *Config) any { return f(c) }}
}

func (s Spec) choices(c ...string) Spec     { s.Choices = c; return s }
func (s Spec) def(d string) Spec            { s.Default = d; return s }
func (s Spec) hidden() Spec                 { s.Hidden = true; return s }
func (s Spec) alias(a string) Spec          { s.Alias = a; return s }
func (s Spec) notSupported(why string) Spec { s.NotSupported = why; return s }

const (
	gIO     = "I/O options"
	gAgg    = "Aggregate tracing options"
	gBasic  = "Basic tracing options"
	gGran   = "Granular tracing options"
	gPMC    = "Counter collection options"
	gPC     = "PC sampling options"
	gPost   = "Post-processing tracing options"
	gSum    = "Summary options"
	gName   = "Kernel naming options"
	gFilt   = "Filtering options"
	gPerf   = "Perfetto-specific options"
	gDisp   = "Display options"
	gAdv    = "Advanced options"
	gATT    = "Advanced thread trace options"
	gAttach = "Process attachment options"
	gOwn    = "rocprof-go options"
)

// Specs is every option rocprof-go accepts, in rocprofv3's help order.
// A tracing domain's switch is its row's in the domain table
// (internal/domain, the one place a domain is spelled): domainOpt only
// places it here, withDomains (domains.go) writes it. The domain options
// that take a value (--pmc, --pc-sampling-method) are lines here, and take
// their variables and readers from the table.
var Specs = withDomains(specLines)

// specLines are the option table's lines as spec.go writes them, before
// withDomains completes them from the domain table.
var specLines = []Spec{
	// I/O
	strOpt("input", "i", "input", gIO, "", "INPUT",
		"run configuration: .txt (pmc: lines), .yaml/.yml or .json (jobs); every pmc: line or job is one run of the app",
		func(c *Config) *string { return &c.Input }),
	strOpt("output-file", "o", "output_file", gIO, "ROCPROF_OUTPUT_FILE_NAME", "OUTPUT_FILE",
		"output file name prefix; may contain / and placeholders (default %hostname%/%pid%)",
		func(c *Config) *string { return &c.OutputFile }),
	strOpt("output-directory", "d", "output_directory", gIO, "ROCPROF_OUTPUT_PATH", "OUTPUT_DIRECTORY",
		"output directory; placeholders allowed (default: the current directory)",
		func(c *Config) *string { return &c.OutputDirectory }).readBy(ReadByShim),
	listOpt("output-format", "f", "output_format", gIO, "ROCPROF_OUTPUT_FORMAT", "FORMAT",
		outputFormatHelp,
		func(c *Config) *[]string { return &c.OutputFormat }).choices(outputFormats...).readBy(ReadByPreload),
	boolOpt("output-config", "", "output_config", gIO, "ROCPROF_OUTPUT_CONFIG_FILE",
		"also write <prefix>_config.json (configuration, build information, environment)",
		func(c *Config) *Tri { return &c.OutputConfig }),
	strOpt("log-level", "", "log_level", gIO, "", "LEVEL",
		"diagnostics: fatal error warning info trace; env prints the environment added, config the parsed options",
		func(c *Config) *string { return &c.LogLevel }).choices("fatal", "error", "warning", "info", "trace", "env", "config"),
	strOpt("extra-counters", "E", "extra_counters", gIO, "", "YAML",
		"YAML file of extra counter definitions added to the built-in ones",
		func(c *Config) *string { return &c.ExtraCounters }),

	// Aggregates
	boolOpt("runtime-trace", "r", "runtime_trace", gAgg, "",
		"HIP runtime API, markers, kernels, memory copies, allocations, scratch, RCCL, rocDecode, rocJPEG",
		func(c *Config) *Tri { return &c.RuntimeTrace }),
	boolOpt("sys-trace", "s", "sys_trace", gAgg, "",
		"everything --runtime-trace traces plus the HIP compiler API and the HSA API",
		func(c *Config) *Tri { return &c.SysTrace }),

	// Basic
	boolOpt("hip-trace", "", "hip_trace", gBasic, "", "HIP runtime and compiler API (= --hip-runtime-trace --hip-compiler-trace)",
		func(c *Config) *Tri { return &c.HipTrace }),
	domainOpt(domain.Marker),
	domainOpt(domain.Kernel),
	domainOpt(domain.MemoryCopy),
	domainOpt(domain.MemoryAllocation),
	domainOpt(domain.ScratchMemory),
	boolOpt("hsa-trace", "", "hsa_trace", gBasic, "", "HSA API: core, AMD extension, image and finalizer",
		func(c *Config) *Tri { return &c.HsaTrace }),
	domainOpt(domain.RCCL),
	boolOpt("kokkos-trace", "", "kokkos_trace", gBasic, "", "Kokkos Tools regions (implies --marker-trace --kernel-rename)",
		func(c *Config) *Tri { return &c.KokkosTrace }).notSupported("the Kokkos Tools library is not built yet"),
	domainOpt(domain.RocDecode),
	domainOpt(domain.RocJPEG),

	// Granular
	domainOpt(domain.HIPRuntime),
	domainOpt(domain.HIPCompiler),
	domainOpt(domain.HSACore),
	domainOpt(domain.HSAAMD),
	domainOpt(domain.HSAImage),
	domainOpt(domain.HSAFinalizer),

	// Counters
	listOpt("pmc", "", "pmc", gPMC, "", "COUNTER",
		"counters to collect in one pass (space or comma separated; NAME:device=N limits one to a GPU)",
		func(c *Config) *[]string { return &c.Pmc }),

	// PC sampling
	boolOpt("pc-sampling-beta-enabled", "", "pc_sampling_beta_enabled", gPC, "ROCPROFILER_PC_SAMPLING_BETA_ENABLED", "enable PC sampling (beta)",
		func(c *Config) *Tri { return &c.PcSamplingBetaEnabled }),
	strOpt("pc-sampling-unit", "", "pc_sampling_unit", gPC, "ROCPROF_PC_SAMPLING_UNIT", "UNIT", "instructions, cycles or time",
		func(c *Config) *string { return &c.PcSamplingUnit }).choices("instructions", "cycles", "time").readBy(ReadByShim),
	strOpt("pc-sampling-method", "", "pc_sampling_method", gPC, "", "METHOD", "stochastic or host_trap",
		func(c *Config) *string { return &c.PcSamplingMethod }).choices("stochastic", "host_trap"),
	uintOpt("pc-sampling-interval", "", "pc_sampling_interval", gPC, "ROCPROF_PC_SAMPLING_INTERVAL", "N", "sampling interval (> 0)",
		func(c *Config) *uint64 { return &c.PcSamplingInterval }).readBy(ReadByShim),

	// Post-processing
	boolOpt("stats", "", "stats", gPost, "ROCPROF_STATS", "write per-domain *_stats.csv and domain_stats.csv",
		func(c *Config) *Tri { return &c.Stats }),
	boolOpt("summary", "S", "summary", gPost, "ROCPROF_STATS_SUMMARY", "print one combined summary table at exit",
		func(c *Config) *Tri { return &c.Summary }),
	boolOpt("summary-per-domain", "D", "summary_per_domain", gPost, "ROCPROF_STATS_SUMMARY_PER_DOMAIN", "print one summary table per domain",
		func(c *Config) *Tri { return &c.SummaryPerDomain }),
	listOpt("summary-groups", "", "summary_groups", gPost, "ROCPROF_STATS_SUMMARY_GROUPS", "REGEX",
		"one summary table per regular expression over domain names (e.g. 'KERNEL_DISPATCH|MEMORY_COPY')",
		func(c *Config) *[]string { return &c.SummaryGroups }),

	// Summary
	strOpt("summary-output-file", "", "summary_output_file", gSum, "ROCPROF_STATS_SUMMARY_OUTPUT", "FILE",
		"stdout, stderr, or a name written as <prefix>_<name>.txt", func(c *Config) *string { return &c.SummaryOutputFile }),
	strOpt("summary-units", "u", "summary_units", gSum, "ROCPROF_STATS_SUMMARY_UNITS", "UNIT", "sec, msec, usec or nsec",
		func(c *Config) *string { return &c.SummaryUnits }).choices("sec", "msec", "usec", "nsec").def("nsec"),

	// Kernel naming
	boolOpt("mangled-kernels", "M", "mangled_kernels", gName, "", "keep kernel names mangled",
		func(c *Config) *Tri { return &c.MangledKernels }),
	boolOpt("truncate-kernels", "T", "truncate_kernels", gName, "ROCPROF_TRUNCATE_KERNELS", "truncate demangled kernel names to the function name",
		func(c *Config) *Tri { return &c.TruncateKernels }).readBy(ReadByShim),
	boolOpt("kernel-rename", "", "kernel_rename", gName, "ROCPROF_KERNEL_RENAME", "name kernels after the innermost enclosing roctxRangePush message",
		func(c *Config) *Tri { return &c.KernelRename }).readBy(byBoth),

	// Filtering
	strOpt("kernel-include-regex", "", "kernel_include_regex", gFilt, "ROCPROF_KERNEL_FILTER_INCLUDE_REGEX", "REGEX",
		"profile (counters, thread trace) only kernels whose name matches", func(c *Config) *string { return &c.KernelIncludeRegex }).readBy(ReadByShim),
	strOpt("kernel-exclude-regex", "", "kernel_exclude_regex", gFilt, "ROCPROF_KERNEL_FILTER_EXCLUDE_REGEX", "REGEX",
		"skip kernels whose name matches (applied after include)", func(c *Config) *string { return &c.KernelExcludeRegex }).readBy(ReadByShim),
	listOpt("kernel-iteration-range", "", "kernel_iteration_range", gFilt, "ROCPROF_KERNEL_FILTER_RANGE", "RANGE",
		"1-based dispatch iterations of each kernel to profile, e.g. \"[1, 3, [5-8]]\"",
		func(c *Config) *[]string { return &c.KernelIterationRange }).readBy(ReadByShim),
	listOpt("collection-period", "P", "collection_period", gFilt, "ROCPROF_COLLECTION_PERIOD", "DELAY:DURATION:REPEAT",
		"profile only in timed windows (REPEAT 0 = forever)", func(c *Config) *[]string { return &c.CollectionPeriod }).readBy(ReadByPreload),
	strOpt("collection-period-unit", "", "collection_period_unit", gFilt, "", "UNIT", "hour, min, sec, msec, usec or nsec",
		func(c *Config) *string { return &c.CollectionPeriodUnit }).choices("hour", "min", "sec", "msec", "usec", "nsec").def("sec"),
	boolOpt("selected-regions", "", "selected_regions", gFilt, "ROCPROF_SELECTED_REGIONS",
		"profile only between roctxProfilerResume(0) and roctxProfilerPause(0)", func(c *Config) *Tri { return &c.SelectedRegions }).readBy(ReadByPreload),

	// Perfetto
	strOpt("perfetto-backend", "", "perfetto_backend", gPerf, "ROCPROF_PERFETTO_BACKEND", "BACKEND", "inprocess (rocprof-go writes the trace; system is accepted and changes nothing)",
		func(c *Config) *string { return &c.PerfettoBackend }).choices("inprocess", "system").def("inprocess"),
	intOpt("perfetto-buffer-size", "", "perfetto_buffer_size", gPerf, "ROCPROF_PERFETTO_BUFFER_SIZE_KB", "KB",
		"cap the Perfetto trace at KB; the records beyond it are left out (fill policy) and reported lost (default: no cap)",
		func(c *Config) *int { return &c.PerfettoBufferSize }),
	strOpt("perfetto-buffer-fill-policy", "", "perfetto_buffer_fill_policy", gPerf, "ROCPROF_PERFETTO_BUFFER_FILL_POLICY", "POLICY",
		"a full trace keeps its first records (discard) or its last (ring_buffer)", func(c *Config) *string { return &c.PerfettoBufferFillPolicy }).choices("discard", "ring_buffer").def("discard"),
	intOpt("perfetto-shmem-size-hint", "", "perfetto_shmem_size_hint", gPerf, "ROCPROF_PERFETTO_SHMEM_SIZE_HINT_KB", "KB",
		"accepted; changes nothing: no Perfetto shared memory buffer here (docs/options.md)",
		func(c *Config) *int { return &c.PerfettoShmemSizeHint }),

	// Display
	boolOpt("list-avail", "L", "list_avail", gDisp, "", "list the counters of the GPUs present (or of --virtual-gpu's)",
		func(c *Config) *Tri { return &c.ListAvail }),
	boolOpt("group-by-queue", "", "group_by_queue", gDisp, "ROCPROF_GROUP_BY_QUEUE", "Perfetto: kernels and copies on per-queue tracks instead of per-stream",
		func(c *Config) *Tri { return &c.GroupByQueue }),

	// Advanced
	listOpt("preload", "", "preload", gAdv, "ROCPROF_PRELOAD", "LIB", "libraries put in LD_PRELOAD before rocprof-go's",
		func(c *Config) *[]string { return &c.Preload }),
	strOpt("rocm-root", "", "rocm_root", gAdv, "", "PATH", "ROCm installation whose libraries the app uses (its lib/ first in LD_LIBRARY_PATH)",
		func(c *Config) *string { return &c.RocmRoot }),
	intOpt("sdk-soversion", "", "sdk_soversion", gAdv, "", "N", "accepted for compatibility; rocprof-go embeds its libraries",
		func(c *Config) *int { return &c.SdkSoversion }),
	strOpt("sdk-version", "", "sdk_version", gAdv, "", "X.Y.Z", "accepted for compatibility; rocprof-go embeds its libraries",
		func(c *Config) *string { return &c.SdkVersion }),
	strOpt("agent-index", "A", "agent_index", gAdv, "ROCPROF_AGENT_INDEX", "MODE", "agent labels: absolute, relative or type-relative",
		func(c *Config) *string { return &c.AgentIndex }).choices("absolute", "relative", "type-relative").def("relative"),
	boolOpt("disable-signal-handlers", "", "disable_signal_handlers", gAdv, "", "do not install rocprof-go's signal handlers in the app",
		func(c *Config) *Tri { return &c.DisableSignalHandlers }),
	intOpt("minimum-output-data", "", "minimum_output_data", gAdv, "", "KB", "write files only when at least this much data was collected",
		func(c *Config) *int { return &c.MinimumOutputData }),
	boolOpt("readlink", "", "readlink", gAdv, "", "", func(c *Config) *Tri { return &c.Readlink }).hidden(),
	boolOpt("realpath", "", "realpath", gAdv, "", "", func(c *Config) *Tri { return &c.Realpath }).hidden(),
	strOpt("benchmark-mode", "", "benchmark_mode", gAdv, "ROCPROF_BENCHMARK_MODE", "MODE", "",
		func(c *Config) *string { return &c.BenchmarkMode }).hidden().
		choices("disabled-sdk-contexts", "sdk-buffer-overhead", "sdk-callback-overhead", "tool-runtime-overhead", "execution-profile"),
	boolOpt("suppress-marker-preload", "", "suppress_marker_preload", gAdv, "", "", func(c *Config) *Tri { return &c.SuppressMarkerPreload }).hidden(),
	boolOpt("echo", "", "echo", gAdv, "", "print the command and environment the app would get, and do not run it",
		func(c *Config) *Tri { return &c.Echo }),

	// ATT
	domainOpt(domain.ThreadTrace),
	listOpt("att-library-path", "", "att_library_path", gATT, "ROCPROF_ATT_LIBRARY_PATH", "PATH", "directories holding librocprof-trace-decoder.so; traces are decoded after the run",
		func(c *Config) *[]string { return &c.AttLibraryPath }),
	intOpt("att-target-cu", "", "att_target_cu", gATT, "ROCPROF_ATT_PARAM_TARGET_CU", "CU", "compute unit to trace",
		func(c *Config) *int { return &c.AttTargetCu }).def("1").readBy(ReadByShim),
	intOpt("att-simd-select", "", "att_simd_select", gATT, "ROCPROF_ATT_PARAM_SIMD_SELECT", "MASK", "SIMD selection mask",
		func(c *Config) *int { return &c.AttSimdSelect }).def("0xF").readBy(ReadByShim),
	intOpt("att-buffer-size", "", "att_buffer_size", gATT, "ROCPROF_ATT_PARAM_BUFFER_SIZE", "BYTES", "trace buffer size, shared by the traced shader engines",
		func(c *Config) *int { return &c.AttBufferSize }).def("0x10000000").readBy(ReadByShim),
	intOpt("att-shader-engine-mask", "", "att_shader_engine_mask", gATT, "ROCPROF_ATT_PARAM_SHADER_ENGINE_MASK", "MASK", "shader engines to trace",
		func(c *Config) *int { return &c.AttShaderEngineMask }).def("0x1").readBy(ReadByShim),
	strOpt("att-gpu-index", "", "att_gpu_index", gATT, "ROCPROF_ATT_PARAM_GPU_INDEX", "LIST", "comma-separated GPU indices to trace (default all)",
		func(c *Config) *string { return &c.AttGpuIndex }).readBy(ReadByShim),
	strOpt("att-perfcounters", "", "att_perfcounters", gATT, "ROCPROF_ATT_PARAM_PERFCOUNTERS", "COUNTERS", "SQ counters streamed into the trace on gfx9, up to 8 (NAME[:simdmask]); needs --att-perfcounter-ctrl",
		func(c *Config) *string { return &c.AttPerfcounters }).readBy(ReadByShim),
	intOpt("att-perfcounter-ctrl", "", "att_perfcounter_ctrl", gATT, "ROCPROF_ATT_PARAM_PERFCOUNTER_CTRL", "N", "counter sampling period, 1..32",
		func(c *Config) *int { return &c.AttPerfcounterCtrl }).readBy(ReadByShim),
	intOpt("att-activity", "", "att_activity", gATT, "", "N", "stream the eight SQ activity counters at this period, 1..16",
		func(c *Config) *int { return &c.AttActivity }),
	boolOpt("att-serialize-all", "", "att_serialize_all", gATT, "ROCPROF_ATT_PARAM_SERIALIZE_ALL", "serialize every dispatch on traced GPUs, not only traced ones",
		func(c *Config) *Tri { return &c.AttSerializeAll }).readBy(ReadByShim),

	// Process attachment (attach.go, docs/attach.md)
	strOpt("attach", "p", "pid", gAttach, "ROCPROF_ATTACH_PID", "PID",
		"profile the running process PID (started with no profiler), then detach and leave it running; no app command (docs/attach.md: what it collects)",
		func(c *Config) *string { return &c.AttachPid }).alias("pid"),
	intOpt("attach-duration-msec", "", "attach_duration_msec", gAttach, "ROCPROF_ATTACH_DURATION", "MSEC",
		"detach after MSEC milliseconds (default: when Enter is pressed on a terminal, on SIGINT/SIGTERM, or when every attached process exited)",
		func(c *Config) *int { return &c.AttachDurationMsec }),
	boolOpt("attach-children", "", "attach_children", gAttach, "",
		"also attach to every descendant of PID, and to those started while attached, each its own output",
		func(c *Config) *Tri { return &c.AttachChildren }).def("true"),
	boolOpt("attach-sync-output", "", "attach_sync_output", gAttach, "",
		"accepted; the outputs are always written by rocprof-go from the spools after the detach, before it exits (no Go code runs in the target)",
		func(c *Config) *Tri { return &c.AttachSyncOutput }),

	// rocprof-go's own
	boolOpt("parquet-hive", "", "parquet_hive", gOwn, "",
		"write Parquet hive-partitioned (domain=<d>/rank=<n>/...) so DuckDB, Spark or Trino query many ranks in place",
		func(c *Config) *Tri { return &c.ParquetHive }),
	{Long: "virtual-gpu", Dest: "virtual_gpu", Kind: KindOptional, Group: gOwn, Metavar: "ARCH",
		Help:    "run the app on rocprof-go's virtual GPU (no AMD GPU needed; gfx90a by default; gfx942 and gfx1100 need ROCm 6.1 or later): timings and counter values are emulated",
		Choices: VirtualGPUArchs,
		field:   func(c *Config) any { return &c.VirtualGPU }},
	{Long: "timeout", Dest: "timeout", Kind: KindDuration, Group: gOwn, Metavar: "DURATION",
		Help:  "end the app (SIGTERM, then SIGKILL) after DURATION per run; exit status 124",
		field: func(c *Config) any { return &c.Timeout }},
	strOpt("config", "", "config", gOwn, "", "FILE", "rocprof-go configuration file (default $XDG_CONFIG_HOME/rocprof-go/config.yaml)",
		func(c *Config) *string { return &c.ConfigFile }),
	strOpt("log-format", "", "log_format", gOwn, "ROCPROF_GO_LOG_FORMAT", "FORMAT",
		"rocprof-go's own warnings, notes and errors on stderr: text lines (\"rocprof-go: warning: ...\") or json, one object per message (also ROCPROF_GO_LOG_FORMAT)",
		func(c *Config) *string { return &c.LogFormat }).choices("text", "json").def("text"),
	boolOpt("quiet", "q", "quiet", gOwn, "",
		"no report at the end of the run (files written, empty domains, how to open them); warnings and errors still print",
		func(c *Config) *Tri { return &c.Quiet }),
}

// VirtualGPUArchs are the architectures the virtual GPU emulates (its own
// table is vgpu/src/topology.c); the first is the default.
var VirtualGPUArchs = []string{"gfx90a", "gfx908", "gfx906", "gfx900", "gfx1030", "gfx942", "gfx1100"}

// SpecByDest returns the option whose destination is dest.
func SpecByDest(dest string) (*Spec, bool) {
	for i := range Specs {
		if Specs[i].Dest == dest {
			return &Specs[i], true
		}
	}
	return nil, false
}

// SpecByLong returns the option with the given long name or alias.
func SpecByLong(name string) (*Spec, bool) {
	for i := range Specs {
		if Specs[i].Long == name || (Specs[i].Alias != "" && Specs[i].Alias == name) {
			return &Specs[i], true
		}
	}
	return nil, false
}

// SpecByShort returns the option with the given one-letter alias.
func SpecByShort(name string) (*Spec, bool) {
	for i := range Specs {
		if Specs[i].Short != "" && Specs[i].Short == name {
			return &Specs[i], true
		}
	}
	return nil, false
}

// Field returns a pointer to the Config field the option fills.
func (s *Spec) Field(c *Config) any { return s.field(c) }

// Flag renders the option as the user types it: "--kernel-trace".
func (s *Spec) Flag() string { return "--" + s.Long }
