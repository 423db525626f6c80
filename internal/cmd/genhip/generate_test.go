package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func defaultConfig() config {
	return config{Lib: "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5", Include: "/usr/include", CC: "cc"}
}

// The checked-in files must be what the generator makes from the installed
// HIP: otherwise run `make generate`.
func TestGeneratedFilesUpToDate(t *testing.T) {
	files, skipped, err := generate(defaultConfig())
	require.NoError(t, err)
	require.Empty(t, skipped, "every exported HIP function must be wrapped")
	paths := map[string]string{
		"hip_api_gen.c":   filepath.Join("..", "..", "hsa", "preload", "hip_api_gen.c"),
		"hip_exports.map": filepath.Join("..", "..", "hsa", "preload", "hip_exports.map"),
		goFile:            filepath.Join("..", "..", "hsa", "hiptrace", "functions_gen.go"),
	}
	require.Len(t, files, len(paths))
	for name, data := range files {
		old, err := os.ReadFile(paths[name])
		require.NoError(t, err)
		require.Equal(t, string(data), string(old), "%s is stale: run `make generate`", paths[name])
	}
}

func TestExportsCarryVersions(t *testing.T) {
	exps, err := readExports(defaultConfig().Lib)
	require.NoError(t, err)
	byName := map[string]string{}
	for _, e := range exps {
		byName[e.Symbol] = e.Version
		require.False(t, strings.HasPrefix(e.Symbol, "hiprtc"), "hiprtc is not HIP API")
	}
	require.Equal(t, "hip_4.2", byName["hipMalloc"])
	require.Equal(t, "hip_5.2", byName["hipMemcpy_spt"])
	require.Equal(t, "hip_4.2", byName["__hipRegisterFatBinary"])
	require.Contains(t, byName, "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j")
}

func TestParsePrototypes(t *testing.T) {
	src := `
typedef struct ihipStream_t* hipStream_t;
extern __attribute__((visibility("default"))) hipError_t hipA(void** ptr, size_t size) __attribute__((deprecated("x")));
hipError_t hipB(void);
hipError_t hipC(hipStream_t, unsigned int flags, void (*cb)(void*, int), int arr[4]);
static inline hipError_t hipD(int x) { return x; }
hipError_t hipE(const char* fmt, ...);
const char* hipF(hipError_t e);
`
	want := map[string]bool{"hipA": true, "hipB": true, "hipC": true, "hipD": true, "hipE": true, "hipF": true}
	_, err := parsePrototypes(src, want)
	require.ErrorAs(t, err, new(errVariadic))

	delete(want, "hipE")
	got, err := parsePrototypes(src, want)
	require.NoError(t, err)
	require.Equal(t, []string{"void** a0", "size_t a1"}, got["hipA"].Params)
	require.Equal(t, "hipError_t", got["hipA"].Ret)
	require.Empty(t, got["hipB"].Params)
	require.Equal(t, []string{"hipStream_t a0", "unsigned int a1", "void (*a2)(void*, int)", "int a3[4]"}, got["hipC"].Params)
	require.Equal(t, 0, got["hipC"].Stream)
	require.NotContains(t, got, "hipD", "definitions are not exported declarations")
	require.Equal(t, "const char*", got["hipF"].Ret)
	require.Equal(t, -1, got["hipF"].Stream)
}
