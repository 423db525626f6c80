package tracing

import "strconv"

// Kind is a record kind (rpg_kind in spool.h).
type Kind uint16

// Record kinds; the values are part of the spool format.
const (
	KindString           Kind = 1
	KindHIPAPI           Kind = 2
	KindHSAAPI           Kind = 3
	KindMarker           Kind = 4
	KindKernelDispatch   Kind = 5
	KindMemoryCopy       Kind = 6
	KindMemoryAllocation Kind = 7
	KindScratchMemory    Kind = 8
	KindKernelSymbol     Kind = 9
	KindCodeObject       Kind = 10
	KindAgentInfo        Kind = 11
	KindCounterSample    Kind = 12
	// kindThread names a chunk's writer from that point on; the reader
	// consumes it and never returns it.
	kindThread Kind = 13
	// kindClock converts the tick stamps of later version-3 API records in
	// its chunk; the reader consumes it too.
	kindClock Kind = 14
	// KindRCCLAPI is an RCCL call: an API record (APICall) whose argument
	// blob starts with the RCCL tail (RCCLCall).
	KindRCCLAPI Kind = 15
	// KindPCSample is a batch of PC samples of one method (PCSampleBatch).
	KindPCSample Kind = 16
	// KindPCSampleDispatch is where a dispatch went on its hardware queue
	// while PC sampling was on (PCSampleDispatch).
	KindPCSampleDispatch Kind = 17
	kindLast             Kind = 18
)

var kindNames = [...]string{"", "STRING", "HIP_API", "HSA_API", "MARKER", "KERNEL_DISPATCH",
	"MEMORY_COPY", "MEMORY_ALLOCATION", "SCRATCH_MEMORY", "KERNEL_SYMBOL", "CODE_OBJECT",
	"AGENT_INFO", "COUNTER_SAMPLE", "THREAD", "CLOCK", "RCCL_API", "PC_SAMPLE", "PC_SAMPLE_DISPATCH"}

func (k Kind) String() string {
	if k > 0 && k < kindLast {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// APIDomain is an API domain (rpg_api_domain); it also names the string
// table that carries that domain's function names.
type APIDomain uint32

// API domains.
const (
	DomainHIPRuntime      APIDomain = 1
	DomainHIPCompiler     APIDomain = 2
	DomainHSACore         APIDomain = 3
	DomainHSAAMDExt       APIDomain = 4
	DomainHSAImageExt     APIDomain = 5
	DomainHSAFinalizeExt  APIDomain = 6
	DomainMarkerCore      APIDomain = 7
	DomainMarkerControl   APIDomain = 8
	DomainMarkerName      APIDomain = 9
	DomainMarkerCoreRange APIDomain = 10
	// DomainRCCL is rocprofv3's RCCL_API; its function ids are
	// rocprofiler_rccl_api_id_t's (RCCLFunctions).
	DomainRCCL APIDomain = 11
	domainLast APIDomain = 12
)

// domainNames are rocprofv3's buffer-tracing kind names, as the CSV Domain
// column prints them.
var domainNames = [...]string{"", "HIP_RUNTIME_API_EXT", "HIP_COMPILER_API_EXT", "HSA_CORE_API",
	"HSA_AMD_EXT_API", "HSA_IMAGE_EXT_API", "HSA_FINALIZE_EXT_API", "MARKER_CORE_API",
	"MARKER_CONTROL_API", "MARKER_NAME_API", "MARKER_CORE_RANGE_API", "RCCL_API"}

// String returns rocprofv3's name for the domain, e.g. HIP_RUNTIME_API_EXT.
func (d APIDomain) String() string {
	if d > 0 && d < domainLast {
		return domainNames[d]
	}
	return "UNKNOWN_DOMAIN_" + strconv.Itoa(int(d))
}

// String tables other than the per-domain function-name tables.
const (
	TableCounter   uint32 = 16
	TableDimension uint32 = 17
	TableGeneric   uint32 = 18
	TableStatus    uint32 = 19 // Status ids: what the process's runtime side reported
	TableStream    uint32 = 20 // HIP stream number -> StreamNote (16 bytes, not text)
	// TablePeriod: with ROCPROF_COLLECTION_PERIOD_TESTING, each step of a
	// --collection-period timer, numbered in order: "label:begin:end" (ns;
	// label delay, start, duration or stop) or "--" before each period, the
	// lines of rocprofv3's collection_periods.log.
	TablePeriod uint32 = 21
	// TableHostFunction: __hipRegisterFunction's host stub address (the
	// string's id) and the device function it launches (its value), which
	// rocprofv3 lists as JSON host_functions.
	TableHostFunction uint32 = 22
)

// StreamNote is a TableStream string's value (rpg_stream_note): the
// hipStream_t a stream number stands for, and the correlation id of the
// call that first needed the number. Handles are reused after
// hipStreamDestroy; the correlation id tells the uses apart.
type StreamNote struct {
	Number        uint64
	Handle        uint64
	CorrelationID uint64
}

// StreamNoteOf decodes a TableStream string; ok is false for a malformed one.
func StreamNoteOf(s String) (StreamNote, bool) {
	if s.Table != TableStream || len(s.Value) != 16 {
		return StreamNote{}, false
	}
	return StreamNote{Number: s.ID, Handle: le.Uint64(s.Value), CorrelationID: le.Uint64(s.Value[8:])}, true
}

// Status ids of TableStatus strings (rpg_status): they tell a domain that
// could not be collected from one that had nothing to record.
const (
	StatusHSAInit      uint64 = 1 // hsa_init was called
	StatusShimAttached uint64 = 2 // the shim accepted the HSA runtime; text: the runtime
	StatusShimDeclined uint64 = 3 // the shim declined; text: why
	// StatusHSAInitFailed: hsa_init returned an error; text: the status
	// ("HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008)").
	StatusHSAInitFailed uint64 = 4
	// StatusHSAInitDiagnosis: what the thunk printed on stderr when
	// hsa_init ran again, in a forked probe, with HSAKMT_DEBUG_LEVEL=3
	// (its topology errors); text: its lines.
	StatusHSAInitDiagnosis uint64 = 5
	// StatusNoGPUAgent: the shim found no GPU agent in an initialised HSA
	// runtime; text: what it found.
	StatusNoGPUAgent uint64 = 6
	// StatusUnavailable | the bit index of a domain (DomainBit): a requested
	// domain this runtime cannot give; text: why.
	StatusUnavailable uint64 = 1 << 32
)

// MarkerFunction is a ROCTx operation (rpg_marker_function).
type MarkerFunction uint32

// Marker functions.
const (
	MarkerMark           MarkerFunction = 1
	MarkerThreadRange    MarkerFunction = 2
	MarkerProcessRange   MarkerFunction = 3
	MarkerRangePush      MarkerFunction = 4
	MarkerRangePop       MarkerFunction = 5
	MarkerRangeStart     MarkerFunction = 6
	MarkerRangeStop      MarkerFunction = 7
	MarkerGetThreadID    MarkerFunction = 8
	MarkerProfilerPause  MarkerFunction = 9
	MarkerProfilerResume MarkerFunction = 10
	MarkerNameOSThread   MarkerFunction = 11
	MarkerNameHSAAgent   MarkerFunction = 12
	MarkerNameHIPDevice  MarkerFunction = 13
	MarkerNameHIPStream  MarkerFunction = 14
	markerLast           MarkerFunction = 15
)

var markerNames = [...]string{"", "roctxMarkA", "roctxThreadRangeA", "roctxProcessRangeA",
	"roctxRangePushA", "roctxRangePop", "roctxRangeStartA", "roctxRangeStop", "roctxGetThreadId",
	"roctxProfilerPause", "roctxProfilerResume", "roctxNameOsThread", "roctxNameHsaAgent",
	"roctxNameHipDevice", "roctxNameHipStream"}

func (f MarkerFunction) String() string {
	if f > 0 && f < markerLast {
		return markerNames[f]
	}
	return "roctx_unknown_" + strconv.Itoa(int(f))
}

// CarriesMessage reports whether rocprofv3 prints the user's message instead
// of the API name for this operation.
func (f MarkerFunction) CarriesMessage() bool {
	return f == MarkerMark || f == MarkerThreadRange || f == MarkerProcessRange
}

// CopyDirection is a memory copy direction (SDK numbering).
type CopyDirection uint32

// Copy directions.
const (
	CopyHostToHost     CopyDirection = 1
	CopyHostToDevice   CopyDirection = 2
	CopyDeviceToHost   CopyDirection = 3
	CopyDeviceToDevice CopyDirection = 4
)

var copyNames = [...]string{"MEMORY_COPY_NONE", "MEMORY_COPY_HOST_TO_HOST",
	"MEMORY_COPY_HOST_TO_DEVICE", "MEMORY_COPY_DEVICE_TO_HOST", "MEMORY_COPY_DEVICE_TO_DEVICE"}

func (d CopyDirection) String() string {
	if int(d) < len(copyNames) {
		return copyNames[d]
	}
	return "MEMORY_COPY_UNKNOWN"
}

// AllocOperation is a memory allocation operation.
type AllocOperation uint32

// Allocation operations.
const (
	AllocAllocate     AllocOperation = 1
	AllocVMemAllocate AllocOperation = 2
	AllocFree         AllocOperation = 3
	AllocVMemFree     AllocOperation = 4
)

var allocNames = [...]string{"MEMORY_ALLOCATION_NONE", "MEMORY_ALLOCATION_ALLOCATE",
	"MEMORY_ALLOCATION_VMEM_ALLOCATE", "MEMORY_ALLOCATION_FREE", "MEMORY_ALLOCATION_VMEM_FREE"}

func (o AllocOperation) String() string {
	if int(o) < len(allocNames) {
		return allocNames[o]
	}
	return "MEMORY_ALLOCATION_UNKNOWN"
}

// IsAllocate reports whether the operation allocates (and so names an agent).
func (o AllocOperation) IsAllocate() bool { return o == AllocAllocate || o == AllocVMemAllocate }

// ScratchOperation is a scratch memory operation.
type ScratchOperation uint32

// Scratch operations.
const (
	ScratchAlloc        ScratchOperation = 1
	ScratchFree         ScratchOperation = 2
	ScratchAsyncReclaim ScratchOperation = 3
)

var scratchNames = [...]string{"SCRATCH_MEMORY_NONE", "SCRATCH_MEMORY_ALLOC",
	"SCRATCH_MEMORY_FREE", "SCRATCH_MEMORY_ASYNC_RECLAIM"}

func (o ScratchOperation) String() string {
	if int(o) < len(scratchNames) {
		return scratchNames[o]
	}
	return "SCRATCH_MEMORY_UNKNOWN"
}

// AgentType is an agent's device type (SDK numbering).
type AgentType uint64

// Agent types.
const (
	AgentCPU AgentType = 1
	AgentGPU AgentType = 2
)

func (t AgentType) String() string {
	switch t {
	case AgentCPU:
		return "CPU"
	case AgentGPU:
		return "GPU"
	}
	return "UNK"
}

// CodeObjectOp tells a code object load from an unload.
type CodeObjectOp uint32

// Code object operations.
const (
	CodeObjectLoad   CodeObjectOp = 1
	CodeObjectUnload CodeObjectOp = 2
)
