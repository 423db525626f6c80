// Initialises HIP with four streams (one kernel each), then sleeps and
// reports the process's CPU use while idle: the virtual GPU's idle cost.
// usage: idle [SECONDS=3]
#include <sys/resource.h>
#include <unistd.h>

#include "common.h"

static double cpu_seconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char** argv) {
  int secs = argc > 1 ? std::atoi(argv[1]) : 3;
  int* d;
  HIP_CHECK(hipMalloc(&d, 64));
  hipStream_t s[4];
  for (auto& st : s) {
    HIP_CHECK(hipStreamCreate(&st));
    hipLaunchKernelGGL(tiny, dim3(1), dim3(64), 0, st, d);
  }
  HIP_CHECK(hipDeviceSynchronize());
  double c0 = cpu_seconds();
  sleep(secs);
  double used = cpu_seconds() - c0;
  std::printf("idle_seconds=%d cpu_seconds=%.3f idle_cpu_percent=%.2f\n", secs, used, 100 * used / secs);
  return 0;
}
