// Aborts after a kernel launch: the run ends with SIGABRT (exit code 134).
#include "common.h"

int main() {
  int* d;
  HIP_CHECK(hipMalloc(&d, 64));
  hipLaunchKernelGGL(tiny, dim3(1), dim3(64), 0, 0, d);
  HIP_CHECK(hipDeviceSynchronize());
  std::printf("dispatches=1, aborting\n");
  std::fflush(stdout);
  std::abort();
}
