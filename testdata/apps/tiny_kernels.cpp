// Launches many tiny kernels back to back on one stream.
// usage: tiny_kernels [COUNT=100000]
#include "common.h"

int main(int argc, char** argv) {
  long count = argc > 1 ? std::atol(argv[1]) : 100000;
  int* d;
  HIP_CHECK(hipMalloc(&d, 64));
  for (long i = 0; i < count; i++) hipLaunchKernelGGL(tiny, dim3(1), dim3(64), 0, 0, d);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  std::printf("dispatches=%ld\n", count);
  return 0;
}
