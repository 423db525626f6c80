package rocmlibs

import (
	"regexp"
	"testing"
)

// rocFFT compiles its kernels at run time (hipRTC) and launches them, and
// the twiddle table's, through hipModuleLaunchKernel.
var rocfftKernels = launcher{regexp.MustCompile(`^(fft_rtc_|twiddle_gen)`), []string{"hipModuleLaunchKernel"}}

// On every runtime with rocFFT, rocfft-test's manual test (one forward
// complex transform of 256 points, no comparison with FFTW: kernels do not
// compute here) passes under the profiler as without, and the trace holds
// the transform's kernels, compiled at run time, under their names.
func TestRocFFT(t *testing.T) {
	for _, rt := range runtimesWith(t, "librocfft0-tests") {
		t.Run(rt.Name, func(t *testing.T) {
			test := inRoot(t, rt, "/usr/libexec/rocm/librocfft0-tests/rocfft-test")
			p := program{rt: rt, arch: "gfx90a", gpus: 1,
				argv: []string{test, "--gtest_filter=manual.*", "--length", "256", "-t", "0", "--fftw_compare", "0"}}
			bare := p.bare(t)
			prof := p.profiled(t)
			sameOutcome(t, bare, prof, regexp.MustCompile(`(?m)^\[  PASSED  \] 1 test\.`))
			names, _ := checkKernels(t, prof, rocfftKernels)
			if count(names, regexp.MustCompile(`^fft_rtc_fwd_len_?256_`)) != 1 || count(names, regexp.MustCompile(`^twiddle_gen`)) != 1 {
				t.Fatalf("want one 256-point forward transform kernel and one twiddle kernel: %v", names)
			}
		})
	}
}
