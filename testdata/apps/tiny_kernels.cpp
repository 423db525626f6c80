// Launches many tiny kernels back to back on one stream.
// usage: tiny_kernels [COUNT=100000]
// Also times the launches with hipEvents (the profiling-timestamp path).
#include "common.h"

int main(int argc, char** argv) {
  long count = argc > 1 ? std::atol(argv[1]) : 100000;
  int* d;
  HIP_CHECK(hipMalloc(&d, 64));
  hipEvent_t start, stop;
  HIP_CHECK(hipEventCreate(&start));
  HIP_CHECK(hipEventCreate(&stop));
  HIP_CHECK(hipEventRecord(start, 0));
  for (long i = 0; i < count; i++) hipLaunchKernelGGL(tiny, dim3(1), dim3(64), 0, 0, d);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipEventRecord(stop, 0));
  HIP_CHECK(hipEventSynchronize(stop));
  HIP_CHECK(hipDeviceSynchronize());
  float ms = 0;
  HIP_CHECK(hipEventElapsedTime(&ms, start, stop));
  std::printf("dispatches=%ld event_ms=%.3f\n", count, ms);
  return 0;
}
