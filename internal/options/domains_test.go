package options

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/domain"
)

// fakeDomain is a new domain, one row of the domain table and nothing else.
var fakeDomain = domain.Switch{Option: "fake_trace", Env: "ROCPROF_FAKE_API_TRACE", ReadBy: domain.Preload, Bit: 13, C: "FAKE",
	Status: domain.NoBit, CollectedBy: domain.Preload, Outputs: []string{"FAKE_API"}, Aggregates: []string{"runtime_trace"},
	Report: "--fake-trace", Empty: ": the app made no fake call", Help: "fake API"}

// A row of the domain table is an option (flag, job key, variable read as
// a default), expanded from the aggregates the row names, exported to the
// injected code and listed in the environment contract.
func TestANewDomainIsAnOption(t *testing.T) {
	defer WithDomain(fakeDomain)()
	s, ok := SpecByDest("fake_trace")
	require.True(t, ok)
	require.Equal(t, "fake-trace", s.Long)
	require.Equal(t, "ROCPROF_FAKE_API_TRACE", s.Env)
	require.Equal(t, ReadByPreload, s.ReadBy)

	c := resolve(t, "--fake-trace", "--", "app").Passes[0]
	require.True(t, c.Collects(fakeDomain))
	require.True(t, c.AskedByName(fakeDomain))
	require.Equal(t, "1", c.ToolEnv("/o")["ROCPROF_FAKE_API_TRACE"])
	require.Contains(t, c.TracingDomains(), "fake_trace")

	// --runtime-trace switches it on unless it is given; a pass's copy
	// keeps its own value.
	c = resolve(t, "--runtime-trace", "--", "app").Passes[0]
	require.True(t, c.Collects(fakeDomain))
	require.False(t, c.AskedByName(fakeDomain))
	require.True(t, c.clone().Collects(fakeDomain))
	c = resolve(t, "--runtime-trace", "--fake-trace=false", "--", "app").Passes[0]
	require.False(t, c.Collects(fakeDomain))
	require.NotContains(t, c.ToolEnv("/o"), "ROCPROF_FAKE_API_TRACE")
	c = resolve(t, "--hip-trace", "--", "app").Passes[0]
	require.False(t, c.Collects(fakeDomain))

	var contract bool
	for _, v := range ToolVars() {
		if v.Name == "ROCPROF_FAKE_API_TRACE" {
			contract = v.ReadBy == ReadByPreload && v.Option == "--fake-trace"
		}
	}
	require.True(t, contract)
}

// The domain table's variables and aggregates replace spec.go's and
// expand.go's hand-written ones: every domain's option carries its row's
// variable, and the aggregates switch on what rocprofv3's do.
func TestDomainOptionsFromTheTable(t *testing.T) {
	for _, d := range domain.Switches {
		s, ok := SpecByDest(d.Option)
		require.True(t, ok, d.Option)
		if d.EnvDoc == "" {
			require.Equal(t, d.Env, s.Env, d.Option)
			require.Equal(t, readers(d.ReadBy), s.ReadBy, d.Option)
		}
	}
	on := func(args ...string) []string {
		return resolve(t, append(args, "--", "app")...).Passes[0].TracingDomains()
	}
	require.Equal(t, []string{"kernel_trace", "memory_copy_trace", "memory_allocation_trace", "scratch_memory_trace",
		"hsa_core_trace", "hsa_amd_trace", "hsa_image_trace", "hsa_finalizer_trace", "hip_runtime_trace", "hip_compiler_trace",
		"marker_trace", "rccl_trace"}, on("--sys-trace"))
	require.Equal(t, []string{"kernel_trace", "memory_copy_trace", "memory_allocation_trace", "scratch_memory_trace",
		"hip_runtime_trace", "marker_trace", "rccl_trace"}, on("--runtime-trace"))
	require.Equal(t, []string{"hip_runtime_trace", "hip_compiler_trace"}, on("--hip-trace"))
	require.Equal(t, []string{"hsa_core_trace", "hsa_amd_trace", "hsa_image_trace", "hsa_finalizer_trace"}, on("--hsa-trace"))
	require.Equal(t, []string{"kernel_trace", "memory_copy_trace", "memory_allocation_trace", "scratch_memory_trace",
		"hsa_core_trace", "hsa_amd_trace", "hsa_image_trace", "hsa_finalizer_trace", "marker_trace", "rccl_trace"},
		on("--sys-trace", "--hip-trace=false"))
}

// The domain switches' help lines are the ones spec.go wrote before the
// table held them: same place among the options, group, flags and text
// (cmd/rocprof-go's TestOptionsReferenceIsCurrent pins the whole --help).
func TestDomainSwitchesKeepTheirHelpLines(t *testing.T) {
	var got []string
	for _, s := range Specs {
		if s.Group == gBasic || s.Group == gGran || s.Long == "advanced-thread-trace" {
			line := s.Group + ": --" + s.Long
			if s.Alias != "" {
				line += ", --" + s.Alias
			}
			got = append(got, line+" ["+s.Metavar+"] "+s.Help)
		}
	}
	require.Equal(t, []string{
		"Basic tracing options: --hip-trace [BOOL] HIP runtime and compiler API (= --hip-runtime-trace --hip-compiler-trace)",
		"Basic tracing options: --marker-trace [BOOL] ROCTx markers and ranges",
		"Basic tracing options: --kernel-trace [BOOL] kernel dispatches",
		"Basic tracing options: --memory-copy-trace [BOOL] asynchronous memory copies",
		"Basic tracing options: --memory-allocation-trace [BOOL] HSA memory allocations and frees",
		"Basic tracing options: --scratch-memory-trace [BOOL] scratch memory allocation, free and reclaim",
		"Basic tracing options: --hsa-trace [BOOL] HSA API: core, AMD extension, image and finalizer",
		"Basic tracing options: --rccl-trace [BOOL] RCCL API",
		"Basic tracing options: --kokkos-trace [BOOL] Kokkos Tools regions (implies --marker-trace --kernel-rename)",
		"Basic tracing options: --rocdecode-trace [BOOL] rocDecode API",
		"Basic tracing options: --rocjpeg-trace [BOOL] rocJPEG API",
		"Granular tracing options: --hip-runtime-trace [BOOL] public hip* functions",
		"Granular tracing options: --hip-compiler-trace [BOOL] __hip* compiler functions",
		"Granular tracing options: --hsa-core-trace [BOOL] hsa_* core functions",
		"Granular tracing options: --hsa-amd-trace [BOOL] hsa_amd_* extension functions",
		"Granular tracing options: --hsa-image-trace [BOOL] hsa_ext_image_* functions",
		"Granular tracing options: --hsa-finalizer-trace [BOOL] hsa_ext_program_* functions",
		"Advanced thread trace options: --advanced-thread-trace, --att [BOOL] thread trace (SQTT) of selected dispatches",
	}, got)
	i := slices.IndexFunc(Specs, func(s Spec) bool { return s.Group == gATT })
	require.Equal(t, "advanced-thread-trace", Specs[i].Long, "first of its group")

	// A new row's switch is the last of its group.
	defer WithDomain(fakeDomain)()
	last := ""
	for _, s := range Specs {
		if s.Group == gBasic {
			last = s.Long
		}
	}
	require.Equal(t, "fake-trace", last)
}
