package main

// mangled holds the HIP functions libamdhip64 exports with C++ linkage. The C
// view of the headers cannot declare them, so their prototypes are written
// here, in C, from the C++ declarations (references become pointers, which is
// the same ABI). The generator fails if the library's set of C++ HIP symbols
// differs from this table.
var mangled = map[string]proto{
	"_Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc": {
		Name: "hipCreateSurfaceObject", Ret: "hipError_t",
		Params: []string{"hipSurfaceObject_t* a0", "const hipResourceDesc* a1"},
		Types:  []string{"hipSurfaceObject_t*", "const hipResourceDesc*"},
		Names:  []string{"pSurfObject", "pResDesc"}, Stream: -1,
	},
	"_Z23hipDestroySurfaceObjectP13__hip_surface": {
		Name: "hipDestroySurfaceObject", Ret: "hipError_t",
		Params: []string{"hipSurfaceObject_t a0"},
		Types:  []string{"hipSurfaceObject_t"}, Names: []string{"surfaceObject"}, Stream: -1,
	},
	"_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j": {
		Name: "hipExtModuleLaunchKernel", Ret: "hipError_t",
		Params: []string{"hipFunction_t a0", "uint32_t a1", "uint32_t a2", "uint32_t a3",
			"uint32_t a4", "uint32_t a5", "uint32_t a6", "size_t a7", "hipStream_t a8",
			"void** a9", "void** a10", "hipEvent_t a11", "hipEvent_t a12", "uint32_t a13"},
		Types: []string{"hipFunction_t", "uint32_t", "uint32_t", "uint32_t", "uint32_t",
			"uint32_t", "uint32_t", "size_t", "hipStream_t", "void**", "void**", "hipEvent_t",
			"hipEvent_t", "uint32_t"},
		Names: []string{"f", "globalWorkSizeX", "globalWorkSizeY", "globalWorkSizeZ",
			"localWorkSizeX", "localWorkSizeY", "localWorkSizeZ", "sharedMemBytes", "hStream",
			"kernelParams", "extra", "startEvent", "stopEvent", "flags"}, Stream: 8,
	},
	"_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_": {
		Name: "hipHccModuleLaunchKernel", Ret: "hipError_t",
		Params: []string{"hipFunction_t a0", "uint32_t a1", "uint32_t a2", "uint32_t a3",
			"uint32_t a4", "uint32_t a5", "uint32_t a6", "size_t a7", "hipStream_t a8",
			"void** a9", "void** a10", "hipEvent_t a11", "hipEvent_t a12"},
		Types: []string{"hipFunction_t", "uint32_t", "uint32_t", "uint32_t", "uint32_t",
			"uint32_t", "uint32_t", "size_t", "hipStream_t", "void**", "void**", "hipEvent_t",
			"hipEvent_t"},
		Names: []string{"f", "globalWorkSizeX", "globalWorkSizeY", "globalWorkSizeZ",
			"localWorkSizeX", "localWorkSizeY", "localWorkSizeZ", "sharedMemBytes", "hStream",
			"kernelParams", "extra", "startEvent", "stopEvent"}, Stream: 8,
	},
	// hip_impl::hipLaunchKernelGGLImpl(uintptr_t, const dim3&, const dim3&,
	// uint32_t, hipStream_t, void**)
	"_ZN8hip_impl22hipLaunchKernelGGLImplEmRK4dim3S2_jP12ihipStream_tPPv": {
		Name: "hipLaunchKernelGGLImpl", Ret: "void",
		Params: []string{"uintptr_t a0", "const dim3* a1", "const dim3* a2", "uint32_t a3",
			"hipStream_t a4", "void** a5"},
		Types: []string{"uintptr_t", "const dim3*", "const dim3*", "uint32_t", "hipStream_t",
			"void**"},
		Names: []string{"function_address", "numBlocks", "dimBlocks", "sharedMemBytes", "stream",
			"kernarg"}, Stream: 4,
	},
}
