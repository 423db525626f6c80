package hipapi

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

func TestFunctionNamesRegistered(t *testing.T) {
	var malloc, register uint32
	for id, n := range functionNames {
		switch n {
		case "hipMalloc":
			malloc = uint32(id)
		case "__hipRegisterFatBinary":
			register = uint32(id)
		}
	}
	n, ok := tracing.FunctionName(tracing.DomainHIPRuntime, malloc)
	require.True(t, ok)
	require.Equal(t, "hipMalloc", n)
	n, ok = tracing.FunctionName(tracing.DomainHIPCompiler, register)
	require.True(t, ok)
	require.Equal(t, "__hipRegisterFatBinary", n)
	_, ok = tracing.FunctionName(tracing.DomainHIPCompiler, malloc)
	require.False(t, ok, "a runtime function is not in the compiler table")
}
