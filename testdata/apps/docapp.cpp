// The app the documentation's examples run as ./app (test/doccommands):
// vector operations on two streams with copies both ways.
// usage: docapp [--size N | N] [--crash]
// --crash aborts after its work is submitted (exit status 134), as the
// README's batch example expects of "./app --crash".
#include <cstring>
#include <vector>

#include "common.h"

int main(int argc, char** argv) {
  int n = 65536;
  bool crash = false;
  for (int i = 1; i < argc; i++) {
    if (!std::strcmp(argv[i], "--crash")) crash = true;
    else if (!std::strcmp(argv[i], "--size") && i + 1 < argc) n = std::atoi(argv[++i]);
    else n = std::atoi(argv[i]);
  }
  if (n < 256 || n > (1 << 22)) n = 65536;
  const size_t bytes = size_t(n) * sizeof(float);
  hipStream_t s[2];
  float *a[2], *b[2];
  std::vector<float> host(n, 1.0f), back(n);
  for (int k = 0; k < 2; k++) {
    HIP_CHECK(hipStreamCreate(&s[k]));
    HIP_CHECK(hipMalloc(&a[k], bytes));
    HIP_CHECK(hipMalloc(&b[k], bytes));
  }
  for (int it = 0; it < 4; it++)
    for (int k = 0; k < 2; k++) {
      HIP_CHECK(hipMemcpyAsync(a[k], host.data(), bytes, hipMemcpyHostToDevice, s[k]));
      hipLaunchKernelGGL(vadd, dim3(n / 256), dim3(256), 0, s[k], a[k], a[k], b[k], n);
      hipLaunchKernelGGL(scale, dim3(n / 256), dim3(256), 0, s[k], b[k], 0.5f, n);
      HIP_CHECK(hipMemcpyAsync(b[k], a[k], bytes, hipMemcpyDeviceToDevice, s[k]));
      HIP_CHECK(hipMemcpyAsync(back.data(), b[k], bytes, hipMemcpyDeviceToHost, s[k]));
    }
  if (crash) std::abort();
  for (int k = 0; k < 2; k++) HIP_CHECK(hipStreamSynchronize(s[k]));
  for (int k = 0; k < 2; k++) {
    HIP_CHECK(hipFree(a[k]));
    HIP_CHECK(hipFree(b[k]));
    HIP_CHECK(hipStreamDestroy(s[k]));
  }
  std::printf("size=%d dispatches=16 copies=24\n", n);
  return back[0] == 1.0f ? 0 : 1;
}
