package launch

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/domain"
	"github.com/rocprof-go/rocprof-go/internal/options"
)

// A pass loads the shim for what it collects (HSA interception, counters,
// thread trace, PC sampling) and for HIP or marker tracing alone, to
// describe the agents (RCCL too: rocprofv3 writes agent_info.csv beside
// its RCCL trace); a pass that traces nothing does not. The rule is the domain table's: a new row says so.
func TestNeedsShimFollowsTheDomainTable(t *testing.T) {
	for args, want := range map[string]bool{
		"--kernel-trace": true, "--memory-copy-trace": true, "--memory-allocation-trace": true,
		"--scratch-memory-trace": true, "--hsa-core-trace": true, "--hsa-amd-trace": true,
		"--hsa-image-trace": true, "--hsa-finalizer-trace": true, "--hsa-trace": true,
		"--pmc SQ_WAVES": true, "--advanced-thread-trace": true,
		"--pc-sampling-beta-enabled --pc-sampling-method host_trap --pc-sampling-unit time --pc-sampling-interval 1": true,
		"--hip-runtime-trace": true, "--hip-compiler-trace": true, "--marker-trace": true,
		"--rccl-trace": true, "--output-format csv": false,
	} {
		require.Equal(t, want, needsShim(plan(t, append(strings.Fields(args), "--", "app")...).Passes[0]), args)
	}

	fake := domain.Switch{Option: "fake_trace", Env: "ROCPROF_FAKE_API_TRACE", ReadBy: domain.Preload, Bit: 13, C: "FAKE",
		Status: domain.NoBit, CollectedBy: domain.Preload, Help: "fake API"}
	remove := options.WithDomain(fake)
	require.False(t, needsShim(plan(t, "--fake-trace", "--", "app").Passes[0]))
	remove()
	fake.Agents = true
	defer options.WithDomain(fake)()
	require.True(t, needsShim(plan(t, "--fake-trace", "--", "app").Passes[0]))
}
