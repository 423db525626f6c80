// Dereferences a null pointer after a kernel launch: SIGSEGV (exit code 139).
#include "common.h"

int main() {
  int* d;
  HIP_CHECK(hipMalloc(&d, 64));
  hipLaunchKernelGGL(tiny, dim3(1), dim3(64), 0, 0, d);
  HIP_CHECK(hipDeviceSynchronize());
  std::printf("dispatches=1, crashing\n");
  std::fflush(stdout);
  volatile int* p = nullptr;
  *p = 1;
  return 0;
}
