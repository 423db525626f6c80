// The HIP call-rate loop of the tracing benchmarks: millions of the cheapest
// HIP calls (hipGetDevice and hipPeekAtLastError, alternately), timed inside
// the app so that process start and HIP initialisation do not count.
// usage: hip_calls_rate [CALLS=2000000]
// prints: calls=<n> ns_per_call=<median of 10k-call slices> mean_ns_per_call=<x>
//         thread_cpu_ns_per_call=<x> thread_faults=<n>
// The median slice is what a call costs when the process is not preempted:
// on a shared machine the mean mostly measures the other processes. The
// calling thread's own CPU time per call (user + system, getrusage of the
// thread over the timed loop) does not count the time other processes or
// threads take from it, but does count what the thread itself does beside
// the calls: the page faults it takes (thread_faults, minor and major) are
// spool pages a traced thread had to fault in itself.
#include <hip/hip_runtime.h>
#include <sys/resource.h>

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
  struct rusage ru0, ru1;
  getrusage(RUSAGE_THREAD, &ru0);
  auto start = std::chrono::steady_clock::now();
  for (long s = 0; s < slices; s++) {
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < slice / 2; i++) {
      if (hipGetDevice(&dev) != hipSuccess || hipPeekAtLastError() != hipSuccess) return 1;
    }
    ns[s] = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / slice;
  }
  double total = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  getrusage(RUSAGE_THREAD, &ru1);
  auto tv_ns = [](const struct timeval& a, const struct timeval& b) {
    return double(b.tv_sec - a.tv_sec) * 1e9 + double(b.tv_usec - a.tv_usec) * 1e3;
  };
  double cpu = tv_ns(ru0.ru_utime, ru1.ru_utime) + tv_ns(ru0.ru_stime, ru1.ru_stime);
  long faults = (ru1.ru_minflt - ru0.ru_minflt) + (ru1.ru_majflt - ru0.ru_majflt);
  std::vector<double> sorted = ns;
  std::nth_element(sorted.begin(), sorted.begin() + slices / 2, sorted.end());
  std::printf("calls=%ld ns_per_call=%.2f mean_ns_per_call=%.2f thread_cpu_ns_per_call=%.2f thread_faults=%ld\n",
              slices * slice, sorted[slices / 2], total / double(slices * slice), cpu / double(slices * slice), faults);
  return 0;
}
