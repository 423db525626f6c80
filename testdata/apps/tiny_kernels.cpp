// Launches many tiny kernels back to back on one stream.
// usage: tiny_kernels [COUNT=100000] [sync]
// Also times the launches with hipEvents (the profiling-timestamp path).
// With "sync", each launch is followed by hipDeviceSynchronize (the pattern
// of an app that reads a result back after every step), and the loop's wall
// time per launch is printed too.
#include <chrono>
#include <cstring>

#include "common.h"

int main(int argc, char** argv) {
  long count = argc > 1 ? std::atol(argv[1]) : 100000;
  int* d;
  HIP_CHECK(hipMalloc(&d, 64));
  hipEvent_t start, stop;
  HIP_CHECK(hipEventCreate(&start));
  HIP_CHECK(hipEventCreate(&stop));
  HIP_CHECK(hipEventRecord(start, 0));
  bool sync = argc > 2 && std::strcmp(argv[2], "sync") == 0;
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < count; i++) {
    hipLaunchKernelGGL(tiny, dim3(1), dim3(64), 0, 0, d);
    if (sync) HIP_CHECK(hipDeviceSynchronize());
  }
  auto t1 = std::chrono::steady_clock::now();
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipEventRecord(stop, 0));
  HIP_CHECK(hipEventSynchronize(stop));
  HIP_CHECK(hipDeviceSynchronize());
  float ms = 0;
  HIP_CHECK(hipEventElapsedTime(&ms, start, stop));
  std::printf("dispatches=%ld event_ms=%.3f us_per_launch=%.2f\n", count, ms,
              std::chrono::duration<double, std::micro>(t1 - t0).count() / double(count));
  return 0;
}
