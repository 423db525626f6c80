package hiptrace

import "github.com/rocprof-go/rocprof-go/internal/tracing"

// The preload library writes these names into every spool it records HIP
// calls in; registering them as well lets outputs name calls from spools
// whose string records are missing (a process killed before its first HIP
// record finished writing them, for instance).
func init() {
	runtime := make([]string, len(functionNames))
	compiler := make([]string, len(functionNames))
	for id, name := range functionNames {
		if compilerFunctions[uint32(id)] {
			compiler[id] = name
		} else {
			runtime[id] = name
		}
	}
	tracing.RegisterFunctionNames(tracing.DomainHIPRuntime, runtime)
	tracing.RegisterFunctionNames(tracing.DomainHIPCompiler, compiler)
}
