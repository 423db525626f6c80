// Dereferences a null pointer with kernels still in flight: SIGSEGV (exit code 139).
#include "common.h"

int main() {
  int* d;
  HIP_CHECK(hipMalloc(&d, 64));
  hipLaunchKernelGGL(tiny, dim3(1), dim3(64), 0, 0, d);
  HIP_CHECK(hipDeviceSynchronize());
  for (int i = 0; i < 100; i++) hipLaunchKernelGGL(tiny, dim3(1), dim3(64), 0, 0, d);
  std::printf("dispatches=1 completed, 100 in flight, crashing\n");
  std::fflush(stdout);
  volatile int* p = nullptr;
  *p = 1;
  return 0;
}
