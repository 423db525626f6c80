// Package rocmlibs runs AMD's own libraries under the profiler on the
// virtual GPU, on the runtimes of the ROCm matrix that ship them: rocBLAS's
// rocblas-bench (a GEMM and a GEMV), rocFFT's rocfft-test, and RCCL's
// all_reduce_perf on two and four virtual GPUs (docs/rocm-libraries.md).
// Each program runs once without the profiler and once under
// `rocprof-go --virtual-gpu --sys-trace --stats`; the tests check that it
// exits the same way, that the kernel trace holds every kernel the virtual
// GPU's own dispatch log (ROCPROF_VGPU_LOG) shows, in order on each GPU,
// under its name and correlated to the HIP call that launched it, and, for
// RCCL, that the spool holds exactly the RCCL calls the program made
// (counted independently by an LD_AUDIT library) and ties each RCCL kernel
// to the RCCL call that launched it.
package rocmlibs
