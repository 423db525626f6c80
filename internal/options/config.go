package options

import "time"

// Config is one pass's resolved configuration: every rocprofv3 option plus
// rocprof-go's own. Field names follow rocprofv3's argparse destinations
// (the keys of its YAML/JSON job files); Specs maps each option to its field.
type Config struct {
	// I/O
	Input           string
	OutputFile      string
	OutputDirectory string
	OutputFormat    []string
	OutputConfig    Tri
	LogLevel        string
	ExtraCounters   string
	// CounterDefs is $ROCPROFILER_METRICS_PATH/counter_defs.yaml when that
	// variable is set: counter definitions that replace the built-in ones,
	// as they replace rocprofiler-sdk's (-E still adds to them). Not an option.
	CounterDefs string

	// Aggregate and basic tracing
	RuntimeTrace          Tri
	SysTrace              Tri
	HipTrace              Tri
	MarkerTrace           Tri
	KernelTrace           Tri
	MemoryCopyTrace       Tri
	MemoryAllocationTrace Tri
	ScratchMemoryTrace    Tri
	HsaTrace              Tri
	RcclTrace             Tri
	KokkosTrace           Tri
	RocdecodeTrace        Tri
	RocjpegTrace          Tri

	// Granular tracing
	HipRuntimeTrace   Tri
	HipCompilerTrace  Tri
	HsaCoreTrace      Tri
	HsaAmdTrace       Tri
	HsaImageTrace     Tri
	HsaFinalizerTrace Tri

	// Counter collection
	Pmc              []string
	PmcGroups        [][]string
	PmcGroupInterval int

	// PC sampling
	PcSamplingBetaEnabled Tri
	PcSamplingUnit        string
	PcSamplingMethod      string
	PcSamplingInterval    uint64

	// Post-processing
	Stats             Tri
	Summary           Tri
	SummaryPerDomain  Tri
	SummaryGroups     []string
	SummaryOutputFile string
	SummaryUnits      string

	// Kernel naming
	MangledKernels  Tri
	TruncateKernels Tri
	KernelRename    Tri

	// Filtering
	KernelIncludeRegex   string
	KernelExcludeRegex   string
	KernelIterationRange []string
	CollectionPeriod     []string
	CollectionPeriodUnit string
	SelectedRegions      Tri

	// Perfetto
	PerfettoBackend          string
	PerfettoBufferSize       int
	PerfettoBufferFillPolicy string
	PerfettoShmemSizeHint    int

	// Display
	ListAvail    Tri
	GroupByQueue Tri

	// Advanced
	Preload               []string
	RocmRoot              string
	SdkSoversion          int
	SdkVersion            string
	AgentIndex            string
	DisableSignalHandlers Tri
	MinimumOutputData     int
	Readlink              Tri
	Realpath              Tri
	BenchmarkMode         string
	SuppressMarkerPreload Tri
	Echo                  Tri

	// Advanced thread trace
	AdvancedThreadTrace Tri
	AttLibraryPath      []string
	AttTargetCu         int
	AttSimdSelect       int
	AttBufferSize       int
	AttShaderEngineMask int
	AttGpuIndex         string
	AttPerfcounters     string
	AttPerfcounterCtrl  int
	AttActivity         int
	AttSerializeAll     Tri

	// Process attachment (attach.go): the running process to profile
	// instead of an app rocprof-go starts.
	AttachPid          string // -p/--pid/--attach PID, "" = launch the app
	AttachDurationMsec int    // 0 = until Enter, SIGINT/SIGTERM, or every attached process exited
	AttachChildren     Tri    // also the target's descendants (default true)
	AttachSyncOutput   Tri    // accepted: the CLI always writes the outputs after the detach

	// rocprof-go's own
	ParquetHive Tri    // Parquet as domain=<d>/rank=<n>/ directories
	VirtualGPU  string // "" = real GPU; an architecture name selects the virtual GPU
	Timeout     time.Duration
	ConfigFile  string
	LogFormat   string // rocprof-go's own messages on stderr: "text" or "json"
	Quiet       Tri    // no end-of-run report

	// set tracks which options were given a value (by the command line, a job,
	// the environment or the config file), keyed by destination name.
	set map[string]bool
	// switches holds the domain switches that have no field of their own
	// (domains.go), keyed by destination name.
	switches map[string]*Tri
	// Pass describes where this configuration's output goes in a multi-pass run.
	Pass Pass
}

// Pass places one run of the application in a multi-pass run.
type Pass struct {
	Index  int    // 1-based; 0 for a single run without a pass directory
	SubDir string // "pmc_N", "pass_N" or "" (no pass directory)
}

// IsSet reports whether the option with destination name dest was given.
func (c *Config) IsSet(dest string) bool { return c.set[dest] }

func (c *Config) markSet(dest string) {
	if c.set == nil {
		c.set = map[string]bool{}
	}
	c.set[dest] = true
}

// clone returns a deep enough copy for per-pass configurations.
func (c *Config) clone() *Config {
	n := *c
	n.set = make(map[string]bool, len(c.set))
	for k, v := range c.set {
		n.set[k] = v
	}
	n.switches = nil
	for k, v := range c.switches {
		*n.domainSwitch(k) = *v
	}
	n.OutputFormat = append([]string(nil), c.OutputFormat...)
	n.Pmc = append([]string(nil), c.Pmc...)
	n.SummaryGroups = append([]string(nil), c.SummaryGroups...)
	n.KernelIterationRange = append([]string(nil), c.KernelIterationRange...)
	n.CollectionPeriod = append([]string(nil), c.CollectionPeriod...)
	n.Preload = append([]string(nil), c.Preload...)
	n.AttLibraryPath = append([]string(nil), c.AttLibraryPath...)
	n.PmcGroups = nil
	for _, g := range c.PmcGroups {
		n.PmcGroups = append(n.PmcGroups, append([]string(nil), g...))
	}
	return &n
}
