package domain

import "strings"

// Library is an injected library: the one that collects a domain, or the
// ones that read its variable.
type Library uint8

// The injected libraries.
const (
	Preload Library = 1 << iota // the preload library (C): recorder, HIP, markers, RCCL
	Shim                        // the HSA shim (C++ and its cgo Go)
)

// ID names a row in Go, for the code that treats a domain apart (a
// configuration field of its own, a help line's place among the options):
// such code names the row by its ID, never by its option or variable. A row
// added later needs none (0).
type ID uint8

// The rows' IDs.
const (
	_ ID = iota
	Kernel
	MemoryCopy
	MemoryAllocation
	ScratchMemory
	HSACore
	HSAAMD
	HSAImage
	HSAFinalizer
	Counters
	ThreadTrace
	PCSampling
	HIPRuntime
	HIPCompiler
	Marker
	RCCL
	RocDecode
	RocJPEG
)

// NoBit is the Bit of a domain without a bit in rpg_domains, and the Status
// of one the shim never reports unavailable.
const NoBit = -1

// Switch is one row of the table: a domain the app's processes can be
// asked to collect.
type Switch struct {
	// ID is its name in Go, or 0.
	ID ID
	// Option is the option that asks for it (its destination: the key in
	// job and config files; run.json's lost_domains names the domain so).
	// The command line's flag is Flag().
	Option string
	// Env is the ROCPROF_* variable that carries it to the injected code.
	Env string
	// EnvDoc, when set, says Env is not the option's value but derived by
	// the CLI (ROCPROF_COUNTER_COLLECTION is 1 whenever a pass collects
	// counters): the contract lists it with this text.
	EnvDoc string
	// ReadBy are the injected libraries that read Env.
	ReadBy Library
	// Bit is its bit in rpg_domains (the recorder's mask, set from Env), or
	// NoBit. C is its name there: RPG_DOMAIN_<C>.
	Bit int
	C   string
	// Status is the index the shim reports it unavailable under
	// (RPG_STATUS_UNAVAILABLE | Status): Bit, its own, or NoBit.
	Status int
	// CollectedBy is the library that collects it: a Shim domain is lost in
	// a process whose HSA runtime did not load the shim.
	CollectedBy Library
	// Agents, for a domain the preload library collects, says its passes
	// load the shim all the same, to describe the agents every format lists
	// (agent_info.csv, as rocprofv3 writes with any CSV output): the shim
	// then intercepts nothing. A Shim domain loads it anyway.
	Agents bool
	// Outputs are the output domains its records fill (rocprofv3's names,
	// internal/output/model's Domains' Column); none for the domains
	// written as files of their own (thread trace, PC samples).
	Outputs []string
	// Aggregates are the options that switch it on when it is unset
	// (rocprofv3's "set if unset"). --sys-trace implies --hip-trace and
	// --hsa-trace, so it is listed only where it adds to them.
	Aggregates []string
	// Report is the option the end-of-run report names when its output
	// domain recorded nothing ("" for none), Empty what that most often
	// means.
	Report string
	Empty  string
	// The switch's --help line: its one-letter flag and second long name
	// if any, its help group (Basic when empty) and one-line help. The
	// option table (internal/options/spec.go) places the line among the
	// others by the row's ID, or lists it last in its group. A row whose
	// option takes a value (--pmc COUNTER, --pc-sampling-method METHOD)
	// has no Help: its option is spec.go's line, the row names it by Option.
	Short, Alias string
	Group        string
	Help         string
	// Refused, when set, says why the option is refused here (rocprofv3
	// has it, nothing here could collect it): the switch is accepted by no
	// run, so no library reads its variable and no record fills a domain.
	Refused string
	// Attached says the preload library collects it in a process it was
	// loaded into while running (--attach PID: docs/attach.md); a run
	// that attaches refuses the domains without it.
	Attached bool
}

// The help groups of the domains' switches (rocprofv3's).
const (
	Basic    = "Basic tracing options"
	Granular = "Granular tracing options"
	ATT      = "Advanced thread trace options"
)

// Flag is the domain's option as typed: "--kernel-trace".
func (s Switch) Flag() string { return "--" + strings.ReplaceAll(s.Option, "_", "-") }

// The aggregate options.
const (
	sys     = "sys_trace"
	runtime = "runtime_trace"
	hip     = "hip_trace"
	hsa     = "hsa_trace"
	kokkos  = "kokkos_trace"
)

const both = Preload | Shim

// Switches is the table. Its order is the order domains are listed in
// (run.json's lost_domains; the report's notes, by output domain): the
// shim's first. A new domain is one row here, plus the C that collects it
// and its record's writers (ARCHITECTURE.md, "Adding a domain").
var Switches = []Switch{
	{ID: Kernel, Option: "kernel_trace", Attached: true, Env: "ROCPROF_KERNEL_TRACE", ReadBy: both, Bit: 7, C: "KERNEL", Status: 7, CollectedBy: Shim,
		Outputs: []string{"KERNEL_DISPATCH"}, Aggregates: []string{sys, runtime},
		Report: "--kernel-trace", Empty: ": the app launched no kernel",
		Group: Basic, Help: "kernel dispatches"},
	{ID: MemoryCopy, Option: "memory_copy_trace", Attached: true, Env: "ROCPROF_MEMORY_COPY_TRACE", ReadBy: both, Bit: 8, C: "MEMORY_COPY", Status: 8, CollectedBy: Shim,
		Outputs: []string{"MEMORY_COPY"}, Aggregates: []string{sys, runtime},
		Report: "--memory-copy-trace", Empty: ": the app made no asynchronous copy",
		Group: Basic, Help: "asynchronous memory copies"},
	{ID: MemoryAllocation, Option: "memory_allocation_trace", Attached: true, Env: "ROCPROF_MEMORY_ALLOCATION_TRACE", ReadBy: both, Bit: 9, C: "MEMORY_ALLOCATION", Status: 9, CollectedBy: Shim,
		Outputs: []string{"MEMORY_ALLOCATION"}, Aggregates: []string{sys, runtime},
		Report: "--memory-allocation-trace", Empty: ": the app allocated no memory through the HSA runtime",
		Group: Basic, Help: "HSA memory allocations and frees"},
	{ID: ScratchMemory, Option: "scratch_memory_trace", Attached: true, Env: "ROCPROF_SCRATCH_MEMORY_TRACE", ReadBy: both, Bit: 10, C: "SCRATCH_MEMORY", Status: 10, CollectedBy: Shim,
		Outputs: []string{"SCRATCH_MEMORY"}, Aggregates: []string{sys, runtime},
		Report: "--scratch-memory-trace", Empty: ": no kernel needed scratch memory",
		Group: Basic, Help: "scratch memory allocation, free and reclaim"},
	{ID: HSACore, Option: "hsa_core_trace", Attached: true, Env: "ROCPROF_HSA_CORE_API_TRACE", ReadBy: both, Bit: 2, C: "HSA_CORE", Status: 2, CollectedBy: Shim,
		Outputs: []string{"HSA_API"}, Aggregates: []string{hsa},
		Report: "--hsa-trace", Empty: ": the app never initialised the HSA runtime",
		Group: Granular, Help: "hsa_* core functions"},
	{ID: HSAAMD, Option: "hsa_amd_trace", Attached: true, Env: "ROCPROF_HSA_AMD_EXT_API_TRACE", ReadBy: both, Bit: 3, C: "HSA_AMD_EXT", Status: 3, CollectedBy: Shim,
		Outputs: []string{"HSA_API"}, Aggregates: []string{hsa},
		Report: "--hsa-trace", Empty: ": the app never initialised the HSA runtime",
		Group: Granular, Help: "hsa_amd_* extension functions"},
	{ID: HSAImage, Option: "hsa_image_trace", Attached: true, Env: "ROCPROF_HSA_IMAGE_EXT_API_TRACE", ReadBy: both, Bit: 4, C: "HSA_IMAGE_EXT", Status: 4, CollectedBy: Shim,
		Outputs: []string{"HSA_API"}, Aggregates: []string{hsa},
		Report: "--hsa-trace", Empty: ": the app never initialised the HSA runtime",
		Group: Granular, Help: "hsa_ext_image_* functions"},
	{ID: HSAFinalizer, Option: "hsa_finalizer_trace", Attached: true, Env: "ROCPROF_HSA_FINALIZER_EXT_API_TRACE", ReadBy: both, Bit: 5, C: "HSA_FINALIZER_EXT", Status: 5, CollectedBy: Shim,
		Outputs: []string{"HSA_API"}, Aggregates: []string{hsa},
		Report: "--hsa-trace", Empty: ": the app never initialised the HSA runtime",
		Group: Granular, Help: "hsa_ext_program_* functions"},
	{ID: Counters, Option: "pmc", Attached: true, Env: "ROCPROF_COUNTER_COLLECTION", EnvDoc: "1 when the pass collects counters (pmc: lines, --pmc, -i)",
		ReadBy: both, Bit: 11, C: "COUNTER", Status: 11, CollectedBy: Shim,
		Outputs: []string{"COUNTER_COLLECTION"},
		Report:  "--pmc", Empty: ": no dispatch was profiled (check --kernel-include-regex, --kernel-exclude-regex and --kernel-iteration-range)"},
	{ID: ThreadTrace, Option: "advanced_thread_trace", Env: "ROCPROF_ADVANCED_THREAD_TRACE", ReadBy: Shim, Bit: NoBit, Status: NoBit, CollectedBy: Shim,
		Alias: "att", Group: ATT, Help: "thread trace (SQTT) of selected dispatches"},
	// PC sampling has no bit in rpg_domains: the shim starts its sessions
	// from the method's variable, and reports it unavailable under
	// RPG_STATUS_PC_SAMPLING_BIT (internal/tracing/spool.h).
	{ID: PCSampling, Option: "pc_sampling_method", Attached: true, Env: "ROCPROF_PC_SAMPLING_METHOD", ReadBy: Shim, Bit: NoBit, Status: 24, CollectedBy: Shim},
	{ID: HIPRuntime, Option: "hip_runtime_trace", Attached: true, Env: "ROCPROF_HIP_RUNTIME_API_TRACE", ReadBy: both, Bit: 0, C: "HIP_RUNTIME", Status: NoBit, CollectedBy: Preload, Agents: true,
		Outputs: []string{"HIP_API"}, Aggregates: []string{hip, runtime},
		Report: "--hip-trace", Empty: ": the app made no HIP call (is it a HIP program, dynamically linked against libamdhip64?)",
		Group: Granular, Help: "public hip* functions"},
	{ID: HIPCompiler, Option: "hip_compiler_trace", Attached: true, Env: "ROCPROF_HIP_COMPILER_API_TRACE", ReadBy: both, Bit: 1, C: "HIP_COMPILER", Status: NoBit, CollectedBy: Preload, Agents: true,
		Outputs: []string{"HIP_API"}, Aggregates: []string{hip},
		Report: "--hip-trace", Empty: ": the app made no HIP call (is it a HIP program, dynamically linked against libamdhip64?)",
		Group: Granular, Help: "__hip* compiler functions"},
	// Markers recorded only to rename kernels (--kernel-rename) are not
	// written as a domain: the report judges --marker-trace's alone.
	{ID: Marker, Option: "marker_trace", Attached: true, Env: "ROCPROF_MARKER_API_TRACE", ReadBy: both, Bit: 6, C: "MARKER", Status: NoBit, CollectedBy: Preload, Agents: true,
		Outputs: []string{"MARKER_API"}, Aggregates: []string{sys, runtime, kokkos},
		Report: "--marker-trace", Empty: ": the app made no ROCTx call (roctxRangePush, roctxMark, ...)",
		Group: Basic, Help: "ROCTx markers and ranges"},
	// RCCL's passes load the shim too: rocprofv3 writes agent_info.csv
	// beside rccl_api_trace.csv (before the table, --rccl-trace alone wrote
	// no agent_info.csv).
	{ID: RCCL, Option: "rccl_trace", Attached: true, Env: "ROCPROF_RCCL_API_TRACE", ReadBy: Preload, Bit: 12, C: "RCCL", Status: NoBit, CollectedBy: Preload, Agents: true,
		Outputs: []string{"RCCL_API"}, Aggregates: []string{sys, runtime},
		Report: "--rccl-trace", Empty: ": the app made no RCCL call (is it linked dynamically against librccl?)",
		Group: Basic, Help: "RCCL API"},
	// rocDecode and rocJPEG are in no runtime of the ROCm matrix (Debian's
	// archive has neither), so no process here could call them: their
	// switches are refused, and the aggregates that switch them on in
	// rocprofv3 leave them off (internal/options, expandDomains).
	{ID: RocDecode, Option: "rocdecode_trace", Env: "ROCPROF_ROCDECODE_API_TRACE", Bit: NoBit, Status: NoBit,
		Group: Basic, Help: "rocDecode API", Refused: "rocDecode is in no ROCm runtime of Debian's archive (5.2 to 7.2), so nothing here could call it"},
	{ID: RocJPEG, Option: "rocjpeg_trace", Env: "ROCPROF_ROCJPEG_API_TRACE", Bit: NoBit, Status: NoBit,
		Group: Basic, Help: "rocJPEG API", Refused: "rocJPEG is in no ROCm runtime of Debian's archive (5.2 to 7.2), so nothing here could call it"},
}

// ByOption returns the domain its option (destination) asks for.
func ByOption(option string) (Switch, bool) {
	for _, s := range Switches {
		if s.Option == option {
			return s, true
		}
	}
	return Switch{}, false
}

// Add appends a row to the table and returns the function that removes
// it: for tests that take a new domain through every consumer.
func Add(s Switch) (remove func()) {
	n := len(Switches)
	Switches = append(Switches[:n:n], s)
	return func() { Switches = Switches[:n:n] }
}
