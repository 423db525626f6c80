// The HIP call-rate loop of the tracing benchmarks: millions of the cheapest
// HIP calls (hipGetDevice and hipPeekAtLastError, alternately), timed inside
// the app so that process start and HIP initialisation do not count.
// usage: hip_calls_rate [CALLS=2000000]
// prints: calls=<n> ns_per_call=<median of 10k-call slices> mean_ns_per_call=<x>
// The median slice is what a call costs when the process is not preempted:
// on a shared machine the mean mostly measures the other processes.
#include <hip/hip_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  long calls = argc > 1 ? std::atol(argv[1]) : 2000000;
  const long slice = 10000;  // calls per timed slice (an even number)
  long slices = std::max(1L, calls / slice);
  int dev = -1;
  if (hipSetDevice(0) != hipSuccess) return 2;
  // Warm up: the first calls resolve symbols and create the spool.
  for (int i = 0; i < 1000; i++) (void)hipGetDevice(&dev);
  std::vector<double> ns(slices);
  auto start = std::chrono::steady_clock::now();
  for (long s = 0; s < slices; s++) {
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < slice / 2; i++) {
      if (hipGetDevice(&dev) != hipSuccess || hipPeekAtLastError() != hipSuccess) return 1;
    }
    ns[s] = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / slice;
  }
  double total = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> sorted = ns;
  std::nth_element(sorted.begin(), sorted.begin() + slices / 2, sorted.end());
  std::printf("calls=%ld ns_per_call=%.2f mean_ns_per_call=%.2f\n", slices * slice, sorted[slices / 2],
              total / double(slices * slice));
  return 0;
}
