package kernelname

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFormatKernelName(t *testing.T) {
	cases := []struct {
		name, sym         string
		mangled, truncate bool
		want              string
	}{
		{"demangled by default", "_Z15addition_kernelPfPKfS1_ii.kd", false, false,
			"addition_kernel(float*, float const*, float const*, int, int)"},
		{"mangled keeps .kd", "_Z15addition_kernelPfPKfS1_ii.kd", true, false,
			"_Z15addition_kernelPfPKfS1_ii.kd"},
		{"truncated", "_Z15addition_kernelPfPKfS1_ii.kd", false, true, "addition_kernel"},
		{"truncate implies demangle", "_Z15addition_kernelPfPKfS1_ii.kd", true, true,
			"addition_kernel"},
		{"not C++ loses only .kd", "__amd_rocclr_fillBufferAligned.kd", false, false,
			"__amd_rocclr_fillBufferAligned"},
		{"template and namespace truncated", "_ZN2ns3FooIiE3barIfEEvPT_i.kd", false, true, "bar"},
		{"anonymous namespace", "_ZN12_GLOBAL__N_13fooEv", false, true, "foo"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Format(tc.sym, tc.mangled, tc.truncate))
		})
	}
}

func TestTruncateName(t *testing.T) {
	cases := map[string]string{
		"Foo<int, float>::foo(a[], int (int))":             "foo",
		"void ns::Foo<int>::bar<float>(float*, int) const": "bar",
		"kernel":                     "kernel",
		"(anonymous namespace)::k()": "k",
	}
	for in, want := range cases {
		require.Equal(t, want, Truncate(in), in)
	}
}

// The filters see what the outputs show: -T's bare name, -M's symbol
// (without ".kd"), else the demangled name.
func TestForFilter(t *testing.T) {
	sym := "_Z5saxpyIfEvPT_S1_i.kd"
	require.Equal(t, "void saxpy<float>(float*, float*, int)", ForFilter(sym, false, false))
	require.Equal(t, "saxpy", ForFilter(sym, false, true))
	require.Equal(t, "saxpy", ForFilter(sym, true, true))
	require.Equal(t, "_Z5saxpyIfEvPT_S1_i", ForFilter(sym, true, false))
	require.Equal(t, "__amd_rocclr_copyBuffer", ForFilter("__amd_rocclr_copyBuffer.kd", false, true))
}
