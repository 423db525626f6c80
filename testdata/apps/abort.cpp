// Aborts mid-run, with kernels still in flight: SIGABRT (exit code 134).
#include "common.h"

int main() {
  int* d;
  HIP_CHECK(hipMalloc(&d, 64));
  hipLaunchKernelGGL(tiny, dim3(1), dim3(64), 0, 0, d);
  HIP_CHECK(hipDeviceSynchronize());
  for (int i = 0; i < 100; i++) hipLaunchKernelGGL(tiny, dim3(1), dim3(64), 0, 0, d);
  std::printf("dispatches=1 completed, 100 in flight, aborting\n");
  std::fflush(stdout);
  std::abort();
}
