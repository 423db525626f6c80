package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func matrixConfig() config {
	return config{Repo: filepath.Join("..", "..", ".."), Build: filepath.Join("..", "..", "..", "build")}
}

// The checked-in files must be what the generator makes from the matrix's
// HIP releases: otherwise run `go generate ./internal/hipapi`.
func TestGeneratedFilesUpToDate(t *testing.T) {
	files, fns, err := generate(matrixConfig())
	require.NoError(t, err)
	paths := map[string]string{
		"hip_api_gen.c":   filepath.Join("..", "..", "hsa", "preload", "hip_api_gen.c"),
		"hip_exports.map": filepath.Join("..", "..", "hsa", "preload", "hip_exports.map"),
		goFile:            filepath.Join("..", "..", "hipapi", "functions_gen.go"),
	}
	require.Len(t, files, len(paths))
	for name, data := range files {
		old, err := os.ReadFile(paths[name])
		require.NoError(t, err)
		require.Equal(t, string(data), string(old), "%s is stale: run `go generate ./internal/hipapi`", paths[name])
	}

	// Every exported function of every release is wrapped, in its node.
	bySymbol := map[string]function{}
	for _, f := range fns {
		bySymbol[f.Symbol] = f
	}
	srcs, err := readSources(matrixConfig().Repo, matrixConfig().Build)
	require.NoError(t, err)
	require.Len(t, srcs, 4)
	for _, s := range srcs {
		for _, e := range s.Exports {
			f, ok := bySymbol[e.Symbol]
			require.True(t, ok, "%s@%s of ROCm %s is not wrapped", e.Symbol, e.Version, s.Name)
			require.Equal(t, e.Version, f.Version)
		}
	}
	// What the HIP 6 headers #define the old names to, and the newer entry points.
	for sym, version := range map[string]string{
		"hipGetDevicePropertiesR0600": "hip_6.0", "hipChooseDeviceR0600": "hip_6.0",
		"hipGetDeviceProperties": "hip_4.2", "hipExtModuleLaunchKernel": "hip_4.2",
		"hipLaunchHostFunc": "hip_5.3", "hipGetProcAddress": "hip_6.1", "hipLaunchKernel_spt": "hip_5.2",
		"hipGraphLaunch": "hip_4.3", "hipStreamGetDevice": "hip_4.2",
	} {
		require.Contains(t, bySymbol, sym)
		require.Equal(t, version, bySymbol[sym].Version, sym)
	}
	// dim3 by value: a 12-byte blob, 4-aligned, like the struct.
	require.Equal(t, "rpg_hip_blob12_4", bySymbol["hipLaunchKernel"].Proto.CTypes[1])
}

func TestExportsCarryVersions(t *testing.T) {
	exps, err := readExports("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5")
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

// Structs are passed as blobs only when that is how they travel anyway.
func TestPassedAs(t *testing.T) {
	tds := typedefs{}
	for _, st := range statements(tokenize(`typedef struct { float x, y; } f2; typedef struct dim3 { unsigned x, y, z; } dim3;
struct wf { f2 v; }; typedef struct wf wf_t; typedef enum e { A } e_t;`)) {
		if st[0] == "typedef" {
			tds.add(st[1:])
		} else {
			tds.defineBody("struct "+st[1], st[2:])
		}
	}
	l := map[string]layout{"f2": {8, 4}, "dim3": {12, 4}, "wf_t": {8, 4}, "e_t": {4, 4}, "unsigned long": {8, 8}, "big": {24, 8}}
	got, err := passedAs(kindStruct, "dim3", l, tds)
	require.NoError(t, err)
	require.Equal(t, "rpg_hip_blob12_4", got)
	_, err = passedAs(kindStruct, "f2", l, tds)
	require.ErrorContains(t, err, "SSE")
	_, err = passedAs(kindStruct, "wf_t", l, tds)
	require.ErrorContains(t, err, "SSE", "a float member through a typedef'd struct")
	got, err = passedAs(tds.kind("e_t"), "e_t", l, tds)
	require.NoError(t, err)
	require.Equal(t, "int32_t", got)
	got, err = passedAs(kindUint, "unsigned long", l, tds)
	require.NoError(t, err)
	require.Equal(t, "uint64_t", got)
	got, err = passedAs(kindPtr, "void (*)(void*)", l, tds)
	require.NoError(t, err)
	require.Equal(t, "void *", got)
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
