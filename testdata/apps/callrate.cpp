// Millions of cheap HIP calls (hipGetDevice + hipPeekAtLastError per loop).
// usage: callrate [MILLIONS=1]
#include <chrono>

#include "common.h"

int main(int argc, char** argv) {
  double millions = argc > 1 ? std::atof(argv[1]) : 1.0;
  long loops = long(millions * 1e6) / 2;
  int dev = -1;
  HIP_CHECK(hipSetDevice(0));
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < loops; i++) {
    if (hipGetDevice(&dev) != hipSuccess || hipPeekAtLastError() != hipSuccess) return 1;
  }
  auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  std::printf("calls=%ld ns_per_call=%.1f\n", loops * 2, loops ? ns / (loops * 2) : 0.0);
  return 0;
}
