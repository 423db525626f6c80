// The HIP call-rate loop of the tracing benchmarks: millions of the cheapest
// HIP calls (hipGetDevice and hipPeekAtLastError, alternately), timed inside
// the app so that process start and HIP initialisation do not count.
// usage: hip_calls_rate [CALLS=2000000]
// prints: calls=<n> ns_per_call=<x>
#include <hip/hip_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  long calls = argc > 1 ? std::atol(argv[1]) : 2000000;
  int dev = -1;
  if (hipSetDevice(0) != hipSuccess) return 2;
  // Warm up: the first calls resolve symbols and create the spool.
  for (int i = 0; i < 1000; i++) (void)hipGetDevice(&dev);
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < calls / 2; i++) {
    if (hipGetDevice(&dev) != hipSuccess || hipPeekAtLastError() != hipSuccess) return 1;
  }
  auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  std::printf("calls=%ld ns_per_call=%.2f\n", calls / 2 * 2, ns / double(calls / 2 * 2));
  return 0;
}
