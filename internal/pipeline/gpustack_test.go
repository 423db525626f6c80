package pipeline

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/output"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// What the processes' spools say about their GPU stack: hsa_init failed
// (with the thunk's lines from the probe), the runtime had no GPU agent, a
// retry that attached the shim found one, a launcher never initialised HSA.
func TestNoGPUProcesses(t *testing.T) {
	statuses := []output.ProcessStatus{
		{PID: 10, Status: map[uint64]string{
			tracing.StatusHSAInit:          "pid 10",
			tracing.StatusHSAInitFailed:    "HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008)",
			tracing.StatusHSAInitDiagnosis: "Fail to get cache info for node 0\n\nFail to get cache info for node 0\nsecond line\n",
		}},
		{PID: 11, Status: map[uint64]string{
			tracing.StatusHSAInit:      "pid 11",
			tracing.StatusShimAttached: "HSA API tables major 1: core amd",
			tracing.StatusNoGPUAgent:   "the HSA runtime found 1 agent, none of them a GPU",
		}},
		{PID: 12, Status: map[uint64]string{
			tracing.StatusHSAInit:       "pid 12",
			tracing.StatusHSAInitFailed: "HSA_STATUS_ERROR (0x1000)",
			tracing.StatusShimAttached:  "HSA API tables major 1: core amd",
		}},
		{PID: 13, Status: map[uint64]string{}},
	}
	got := noGPUProcesses(statuses)
	require.Equal(t, []NoGPU{
		{PID: 10, Reason: "hsa_init failed: HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008)",
			Diagnosis: []string{"Fail to get cache info for node 0", "second line"}},
		{PID: 11, Reason: "the HSA runtime found 1 agent, none of them a GPU"},
	}, got)

	// A failed hsa_init is no GPU, not a runtime that dropped the shim:
	// its domains are not "lost" to a missing HSA_TOOLS_LIB.
	c := &options.Config{}
	c.KernelTrace = options.True
	lost, unavailable := domainLosses(c, statuses[:1])
	require.Empty(t, lost)
	require.Empty(t, unavailable)
	// Without the failure note it still is (the shim was dropped).
	lost, _ = domainLosses(c, []output.ProcessStatus{{PID: 14, Status: map[uint64]string{tracing.StatusHSAInit: "pid 14"}}})
	require.Len(t, lost, 1)
}

// The run fails with what the GPU stack found, first among its losses, and
// says it is not the app's doing.
func TestNoGPUError(t *testing.T) {
	m := &Manifest{NoGPU: []NoGPU{{PID: 10, Reason: "hsa_init failed: HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008)",
		Diagnosis: []string{"Fail to get cache info for node 0"}}}}
	err := collectionLosses(m)
	var ng *NoGPUError
	require.True(t, errors.As(err, &ng))
	require.Equal(t, "the GPU stack found no GPU, so nothing ran on one (this is not the app's doing):\n"+
		"  pid 10: hsa_init failed: HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008)\n"+
		"    the thunk (libhsakmt, HSAKMT_DEBUG_LEVEL=3) says: Fail to get cache info for node 0\n"+
		"  (hsa_init fails when the ROCm thunk cannot open the GPU driver (/dev/kfd) or read its topology (/sys/class/kfd/kfd/topology): "+
		"check that both are there and readable, or run on the virtual GPU with --virtual-gpu)\n"+
		"  (run.json lists these under no_gpu)", err.Error())

	m = &Manifest{NoGPU: []NoGPU{{PID: 11, Reason: "the HSA runtime found 1 agent, none of them a GPU"}}}
	require.Contains(t, collectionLosses(m).Error(), "pid 11: the HSA runtime found 1 agent, none of them a GPU\n  (the KFD topology lists no GPU")
	// On the virtual GPU, the hint names its settings, not --virtual-gpu.
	m.Agents = []ManifestAgent{{Arch: "gfx90a", Virtual: true}}
	require.Contains(t, collectionLosses(m).Error(), "\n  (the runtime refused the virtual GPU: check the app's environment "+
		"(HSA_OVERRIDE_GFX_VERSION, the ROCPROF_VGPU_* settings; ROCPROF_VGPU_TOPOLOGY_FAULT breaks its topology on purpose))")
	require.NoError(t, collectionLosses(&Manifest{}))
}

func TestDiagnosisLinesAreBounded(t *testing.T) {
	text := ""
	for i := 0; i < 20; i++ {
		text += "line " + string(rune('a'+i)) + "\n"
	}
	l := diagnosisLines(text)
	require.Len(t, l, maxDiagnosisLines+1)
	require.Equal(t, "...", l[maxDiagnosisLines])
	require.Empty(t, diagnosisLines(""))
}
