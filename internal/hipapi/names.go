package hipapi

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

// FunctionName is the name of a HIP function id.
func FunctionName(id uint32) (string, bool) {
	if int(id) < len(functionNames) {
		return functionNames[id], true
	}
	return "", false
}

// NumFunctions is the number of HIP function ids.
func NumFunctions() int { return len(functionNames) }

// IsCompiler reports whether a function id belongs to the compiler API
// (__hip*, traced as HIP_COMPILER_API_EXT).
func IsCompiler(id uint32) bool { return compilerFunctions[id] }

// NumCompilerFunctions is the number of compiler API functions.
func NumCompilerFunctions() int { return len(compilerFunctions) }
