package json

import "github.com/rocprof-go/rocprof-go/internal/tracing"

// SDK buffer-tracing kind numbers (rocprofiler-sdk fwd.h), which JSON
// records carry as integers.
const (
	sdkHSACoreAPI        = 1
	sdkHSAAMDExtAPI      = 2
	sdkHSAImageExtAPI    = 3
	sdkHSAFinalizeExtAPI = 4
	sdkMarkerCoreAPI     = 7
	sdkMarkerControlAPI  = 8
	sdkMarkerNameAPI     = 9
	sdkMemoryCopy        = 10
	sdkKernelDispatch    = 11
	sdkScratchMemory     = 12
	sdkRCCLAPI           = 14
	sdkMemoryAllocation  = 16
	sdkHIPRuntimeAPIExt  = 21
	sdkHIPCompilerAPIExt = 22
	sdkMarkerCoreRange   = 32
	sdkKindLast          = 33
)

// sdkKind returns the SDK buffer kind of an API domain.
func sdkKind(d tracing.APIDomain) int {
	switch d {
	case tracing.DomainHIPRuntime:
		return sdkHIPRuntimeAPIExt
	case tracing.DomainHIPCompiler:
		return sdkHIPCompilerAPIExt
	case tracing.DomainHSACore:
		return sdkHSACoreAPI
	case tracing.DomainHSAAMDExt:
		return sdkHSAAMDExtAPI
	case tracing.DomainHSAImageExt:
		return sdkHSAImageExtAPI
	case tracing.DomainHSAFinalizeExt:
		return sdkHSAFinalizeExtAPI
	case tracing.DomainMarkerCore:
		return sdkMarkerCoreAPI
	case tracing.DomainMarkerControl:
		return sdkMarkerControlAPI
	case tracing.DomainMarkerName:
		return sdkMarkerNameAPI
	case tracing.DomainMarkerCoreRange:
		return sdkMarkerCoreRange
	case tracing.DomainRCCL:
		return sdkRCCLAPI
	}
	return 0
}
