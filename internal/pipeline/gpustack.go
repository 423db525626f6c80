package pipeline

import (
	"fmt"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/output"
	"github.com/rocprof-go/rocprof-go/internal/topology"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// A GPU stack that found no GPU: the HSA runtime's hsa_init failed (the
// thunk could not open the driver or read the KFD topology), or it
// succeeded without a GPU agent. Nothing the app did then reached a GPU,
// so a domain that recorded nothing says nothing about the app: the run
// says what the stack found instead, and fails.

// maxDiagnosisLines bounds the thunk lines kept per process.
const maxDiagnosisLines = 8

// noGPUProcesses reads the processes' status strings for a GPU stack that
// found no GPU. A process whose hsa_init failed once but whose shim
// attached later (a retry that worked) found one.
func noGPUProcesses(statuses []output.ProcessStatus) []NoGPU {
	var out []NoGPU
	for _, p := range statuses {
		_, attached := p.Status[tracing.StatusShimAttached]
		if failed, ok := p.Status[tracing.StatusHSAInitFailed]; ok && !attached {
			out = append(out, NoGPU{PID: p.PID, Reason: "hsa_init failed: " + failed,
				Diagnosis: diagnosisLines(p.Status[tracing.StatusHSAInitDiagnosis])})
			continue
		}
		if why, ok := p.Status[tracing.StatusNoGPUAgent]; ok {
			// The preload library probes this case too (hsa_init.c).
			out = append(out, NoGPU{PID: p.PID, Reason: why,
				Diagnosis: diagnosisLines(p.Status[tracing.StatusHSAInitDiagnosis])})
		}
	}
	return out
}

// diagnosisLines are the probe's output as lines: blank and repeated ones
// left out, at most maxDiagnosisLines.
func diagnosisLines(text string) []string {
	var lines []string
	seen := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || seen[l] {
			continue
		}
		seen[l] = true
		if len(lines) == maxDiagnosisLines {
			lines = append(lines, "...")
			break
		}
		lines = append(lines, l)
	}
	return lines
}

// NoGPUError is a run in which the GPU stack of some process found no GPU
// (listed in run.json's no_gpu).
type NoGPUError struct {
	Processes []NoGPU
	Virtual   bool // the run was on the virtual GPU (--virtual-gpu)
}

func (e *NoGPUError) Error() string {
	var b strings.Builder
	b.WriteString("the GPU stack found no GPU, so nothing ran on one (this is not the app's doing):")
	failed := false
	for _, p := range e.Processes {
		fmt.Fprintf(&b, "\n  pid %d: %s", p.PID, p.Reason)
		if len(p.Diagnosis) > 0 {
			fmt.Fprintf(&b, "\n    the thunk (libhsakmt, HSAKMT_DEBUG_LEVEL=3) says: %s", strings.Join(p.Diagnosis, "\n      "))
		}
		failed = failed || strings.HasPrefix(p.Reason, "hsa_init failed")
	}
	switch {
	case e.Virtual:
		b.WriteString("\n  (the runtime refused the virtual GPU: check the app's environment (HSA_OVERRIDE_GFX_VERSION," +
			" the " + topology.VirtualEnvPrefix + "* settings; " + topology.VirtualFaultEnv + " breaks its topology on purpose))")
	case failed:
		b.WriteString("\n  (hsa_init fails when the ROCm thunk cannot open the GPU driver (/dev/kfd) or read its topology" +
			" (/sys/class/kfd/kfd/topology): check that both are there and readable, or run on the virtual GPU with --virtual-gpu)")
	default:
		b.WriteString("\n  (the KFD topology lists no GPU the runtime accepts: check the driver (amdgpu) and HSA_OVERRIDE_GFX_VERSION," +
			" or run on the virtual GPU with --virtual-gpu)")
	}
	b.WriteString("\n  (run.json lists these under no_gpu)")
	return b.String()
}
