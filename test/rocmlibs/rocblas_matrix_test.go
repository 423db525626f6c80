package rocmlibs

import (
	"regexp"
	"testing"
)

// rocBLAS's kernels: Tensile's GEMM kernels (Cijk_..., each from one of the
// code objects Tensile loads at run time) through hipExtModuleLaunchKernel,
// rocBLAS's own kernels (GEMV, ...) through hipLaunchKernel.
var (
	tensileKernels = launcher{regexp.MustCompile(`^Cijk_`), []string{"hipExtModuleLaunchKernel", "hipModuleLaunchKernel"}}
	rocblasKernels = launcher{regexp.MustCompile(`rocblas_`), []string{"hipLaunchKernel"}}
)

// rocBLAS ships Tensile kernels for gfx906 only in the roots
// (configs/rocm-matrix.tsv's @path-include), so it runs on an emulated MI50.
const rocblasArch = "gfx906"

// On every runtime with rocBLAS, rocblas-bench (no verification: kernels do
// not compute here) runs a GEMM and a GEMV under the profiler as it does
// without, and the trace holds every kernel it launched, named and
// correlated to its launch call.
func TestRocBLASBench(t *testing.T) {
	for _, rt := range runtimesWith(t, "librocblas*-bench") {
		bench := inRoot(t, rt, "/usr/libexec/rocm/librocblas*-bench/rocblas-bench")
		for _, tc := range []struct {
			name string
			args []string
			done *regexp.Regexp // rocblas-bench's result line
			want launcher       // the BLAS kernel it must launch
		}{
			// -i 2 -j 1: one cold and two timed calls.
			{"gemm", []string{"-f", "gemm", "-r", "s", "-m", "256", "-n", "256", "-k", "256", "-i", "2", "-j", "1", "-v", "0"},
				regexp.MustCompile(`(?m)^N,N,256,256,256,`), tensileKernels},
			// Without --lda, rocblas-bench skips GEMV (lda < m) silently.
			{"gemv", []string{"-f", "gemv", "-r", "s", "-m", "1024", "-n", "1024", "--lda", "1024", "-i", "2", "-j", "1", "-v", "0"},
				regexp.MustCompile(`(?m)^N,1024,1024,`), rocblasKernels},
		} {
			t.Run(rt.Name+"/"+tc.name, func(t *testing.T) {
				p := program{rt: rt, argv: append([]string{bench}, tc.args...), arch: rocblasArch, gpus: 1}
				bare := p.bare(t)
				prof := p.profiled(t)
				sameOutcome(t, bare, prof, tc.done)
				names, _ := checkKernels(t, prof, tensileKernels, rocblasKernels)
				// Three calls of the routine, each at least one BLAS kernel.
				if n := count(names, tc.want.re); n < 3 {
					t.Fatalf("%d %s kernels in the trace, want at least 3: %v", n, tc.want.re, names)
				}
			})
		}
	}
}
