package options

import "sort"

// Reader says which injected library reads a variable of the environment
// contract (the variables the CLI hands the app's processes).
type Reader uint8

// Readers of the contract's variables.
const (
	ReadByPreload Reader = 1 << iota // the preload library (C): recorder, HIP, markers, RCCL
	ReadByShim                       // the HSA shim (C++ and its cgo Go)
)

// SetBy says who gives a contract variable its value.
type SetBy uint8

// Setters of the contract's variables.
const (
	SetByCLI  SetBy = iota // rocprof-go, from the run's configuration: an inherited value is replaced
	SetByUser              // a person or a test, by hand (debugging, testing switches): passed through
)

// ToolVar is one variable of the environment contract between the CLI and
// the code it injects into the app. internal/cmd/genenv turns the contract
// into Go constants (internal/toolenv) and a C header
// (internal/hsa/preload/rpg_env_gen.h), so that no side spells a name.
type ToolVar struct {
	Name   string // ROCPROF_*
	ReadBy Reader // 0: written for rocprofv3's compatibility, read by no injected library
	SetBy  SetBy
	Option string // the option (--long) that carries it, "" for the contract's own variables
	Doc    string
}

// readBy marks the option's variable as read by injected libraries.
func (s Spec) readBy(r Reader) Spec { s.ReadBy = r; return s }

const byBoth = ReadByPreload | ReadByShim

// The contract's own variables (genenv gives the CLI's other packages
// and the injected code their generated names).
const (
	envCounters                = "ROCPROF_COUNTERS"
	envCounterGroups           = "ROCPROF_COUNTER_GROUPS"
	envCounterGroupsInterval   = "ROCPROF_COUNTER_GROUPS_INTERVAL"
	envDemangleKernels         = "ROCPROF_DEMANGLE_KERNELS"
	envGoCounterDefsFile       = "ROCPROF_GO_COUNTER_DEFS_FILE"
	envGoExtraCountersFile     = "ROCPROF_GO_EXTRA_COUNTERS_FILE"
	envMinimumOutputBytes      = "ROCPROF_MINIMUM_OUTPUT_BYTES"
	envSignalHandlers          = "ROCPROF_SIGNAL_HANDLERS"
	envLogLevel                = "ROCPROF_LOG_LEVEL"
	envRocprofilerLogLevel     = "ROCPROFILER_LOG_LEVEL"
	envRoctxLogLevel           = "ROCTX_LOG_LEVEL"
	envGoSpoolDir              = "ROCPROF_GO_SPOOL_DIR"
	envGoTsc                   = "ROCPROF_GO_TSC"
	envGoNotesFD               = "ROCPROF_GO_NOTES_FD"
	envGoHipArgs               = "ROCPROF_GO_HIP_ARGS"
	envCollectionPeriodTesting = "ROCPROF_COLLECTION_PERIOD_TESTING"
	envGoShimDebug             = "ROCPROF_GO_SHIM_DEBUG"
	envGoNoCrashHandler        = "ROCPROF_GO_NO_CRASH_HANDLER"
	envGoPmcTiming             = "ROCPROF_GO_PMC_TIMING"
	envGoKfdTopology           = "ROCPROF_GO_KFD_TOPOLOGY"
	envGoKeepPages             = "ROCPROF_GO_KEEP_PAGES"
	envGoTestPublishDelayUs    = "ROCPROF_GO_TEST_PUBLISH_DELAY_US"
	envGoTestCompletionHold    = "ROCPROF_GO_TEST_COMPLETION_HOLD"
	envGoTestDestroyKickUs     = "ROCPROF_GO_TEST_DESTROY_KICK_US"
	envGoAttachSocket          = "ROCPROF_GO_ATTACH_SOCKET"
	envGoTestAttachDrainMs     = "ROCPROF_GO_TEST_ATTACH_DRAIN_MS"
)

// contractVars are the variables that carry no option of their own: what
// the CLI derives from several options (counters, the TSC), and switches
// for debugging and tests, set by hand.
var contractVars = []ToolVar{
	{Name: envCounters, ReadBy: ReadByShim, Doc: "the pass's counters, as one pmc: line"},
	{Name: envCounterGroups, ReadBy: ReadByShim, Doc: "counter groups collected in turn, one pmc: line each (--pmc-groups)"},
	{Name: envCounterGroupsInterval, ReadBy: ReadByShim, Doc: "dispatches per counter group before the next (--pmc-group-interval)"},
	{Name: envDemangleKernels, ReadBy: ReadByShim, Doc: "0 keeps kernel names mangled (-M)"},
	{Name: envGoCounterDefsFile, ReadBy: ReadByShim, Doc: "the run's copy of $ROCPROFILER_METRICS_PATH/counter_defs.yaml, whose counter definitions replace the built-in ones"},
	{Name: envGoExtraCountersFile, ReadBy: ReadByShim, Doc: "the run's copy of -E's extra counter definitions (a file, not rocprofv3's ROCPROF_EXTRA_COUNTERS_CONTENTS: one variable holds at most 128 KiB)"},
	{Name: envMinimumOutputBytes, Doc: "--minimum-output-data in bytes (rocprofv3's variable)"},
	{Name: envSignalHandlers, ReadBy: ReadByShim, Doc: "0 with --disable-signal-handlers (rocprofv3's variable): the shim installs no signal handler in the app"},
	{Name: envLogLevel, Doc: "--log-level, for rocprofv3's libraries"},
	{Name: envRocprofilerLogLevel, Doc: "--log-level, for rocprofiler-sdk's libraries"},
	{Name: envRoctxLogLevel, Doc: "--log-level, for ROCTx"},
	{Name: envGoSpoolDir, ReadBy: byBoth, Doc: "the private directory each process writes its spool into; nothing is recorded without it"},
	{Name: envGoTsc, ReadBy: ReadByPreload, Doc: "`1` when the TSC is invariant (`0` when not), read once by rocprof-go from `/proc/cpuinfo` so that each process need not ask `cpuid`"},
	{Name: envGoAttachSocket, ReadBy: ReadByPreload, Doc: "attach mode only (never in an environment): the unix socket in the run directory where the preload library's control thread reports ready, error or detached and reads detach; a line of the configuration file the CLI hands `rpg_attach_start` (docs/attach.md)"},
	{Name: envGoNotesFD, ReadBy: ReadByPreload, Doc: "FD:DEV:INO, the run's report channel: an inherited descriptor (not close-on-exec) of the pass's notes file, where a process that cannot create its spool, or execs a program without the profiler, says so (docs/reliability.md)"},

	{Name: envGoHipArgs, ReadBy: ReadByPreload, SetBy: SetByUser, Doc: "1 or 0 forces recording HIP call arguments on or off (default: on for rocpd, json and pftrace)"},
	{Name: envCollectionPeriodTesting, ReadBy: ReadByPreload, SetBy: SetByUser, Doc: "true logs each collection period's start and end (rocprofv3's testing switch)"},
	{Name: envGoShimDebug, ReadBy: ReadByShim, SetBy: SetByUser, Doc: "the shim prints what it does on stderr"},
	{Name: envGoNoCrashHandler, ReadBy: ReadByShim, SetBy: SetByUser, Doc: "the shim installs no fatal-signal handler"},
	{Name: envGoPmcTiming, ReadBy: ReadByShim, SetBy: SetByUser, Doc: "1 prints the shim's CPU time per counted dispatch at exit"},
	{Name: envGoKfdTopology, ReadBy: ReadByShim, SetBy: SetByUser, Doc: "a KFD topology directory read instead of /sys/class/kfd (tests)"},
	{Name: envGoKeepPages, ReadBy: ReadByShim, SetBy: SetByUser, Doc: "1 keeps the shim's start-up pages resident (memory measurements)"},
	{Name: envGoTestPublishDelayUs, ReadBy: ReadByShim, SetBy: SetByUser, Doc: "tests: delay before a completed dispatch is published"},
	{Name: envGoTestCompletionHold, ReadBy: ReadByShim, SetBy: SetByUser, Doc: "tests: hold completions back"},
	{Name: envGoTestDestroyKickUs, ReadBy: ReadByShim, SetBy: SetByUser, Doc: "tests: delay in queue destruction"},
	{Name: envGoTestAttachDrainMs, ReadBy: ReadByPreload, SetBy: SetByUser, Doc: "tests: how long a detach waits for the threads inside the preload library's wrappers (default 10000 ms) before it leaves the library loaded and inert"},
}

// ToolVars is the whole environment contract, sorted by name: the variable
// of every option that has one, and the contract's own variables.
func ToolVars() []ToolVar {
	vars := append(append([]ToolVar(nil), contractVars...), domainVars()...)
	for _, s := range Specs {
		if s.Env == "" {
			continue
		}
		vars = append(vars, ToolVar{Name: s.Env, ReadBy: s.ReadBy, Option: "--" + s.Long, Doc: s.Help})
	}
	sort.Slice(vars, func(i, j int) bool { return vars[i].Name < vars[j].Name })
	return vars
}

// optionEnv is the variable of the option whose destination is dest; the
// table is the one place that spells it.
func optionEnv(dest string) string {
	s, ok := SpecByDest(dest)
	if !ok || s.Env == "" {
		panic("options: no variable for option " + dest)
	}
	return s.Env
}
