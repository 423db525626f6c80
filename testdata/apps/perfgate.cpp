// A small workload for compare's performance gate: one kernel in two launch
// shapes, a second kernel, and copies of two sizes in both directions, on
// two streams, with known counts. Its runs are what CI jobs compare.
// usage: perfgate [ROUNDS=4]
// Each round: on stream 0, saxpy over N_BIG elements, then on stream 1
// saxpy over N_SMALL and a scale; an H2D and a D2H copy of N_BIG floats and
// of N_SMALL floats. Data is checked through the copies.
#include <vector>

#include "common.h"

__global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 4;
  const int big = 1 << 20, small = 1 << 14;
  hipStream_t s[2];
  float *x, *y;
  HIP_CHECK(hipMalloc(&x, big * sizeof(float)));
  HIP_CHECK(hipMalloc(&y, big * sizeof(float)));
  for (auto& st : s) HIP_CHECK(hipStreamCreate(&st));
  std::vector<float> host(big), back(big);
  for (int i = 0; i < big; i++) host[i] = float(i % 1000);
  long dispatches = 0, copies = 0;
  for (int r = 0; r < rounds; r++) {
    HIP_CHECK(hipMemcpyAsync(x, host.data(), big * sizeof(float), hipMemcpyHostToDevice, s[0]));
    hipLaunchKernelGGL(saxpy, dim3(big / 256), dim3(256), 0, s[0], 2.0f, x, y, big);
    HIP_CHECK(hipMemcpyAsync(back.data(), x, big * sizeof(float), hipMemcpyDeviceToHost, s[0]));
    HIP_CHECK(hipMemcpyAsync(y, host.data(), small * sizeof(float), hipMemcpyHostToDevice, s[1]));
    hipLaunchKernelGGL(saxpy, dim3(small / 64), dim3(64), 0, s[1], 2.0f, x, y, small);
    hipLaunchKernelGGL(scale, dim3(small / 256), dim3(256), 0, s[1], y, 0.5f, small);
    HIP_CHECK(hipMemcpyAsync(back.data() + big / 2, y, small * sizeof(float), hipMemcpyDeviceToHost, s[1]));
    HIP_CHECK(hipGetLastError());
    dispatches += 3;
    copies += 4;
    for (auto& st : s) HIP_CHECK(hipStreamSynchronize(st));
    for (int i = 0; i < big / 2; i++)
      if (back[i] != host[i]) {
        std::fprintf(stderr, "round %d element %d: got %f want %f\n", r, i, back[i], host[i]);
        return 1;
      }
  }
  for (auto& st : s) HIP_CHECK(hipStreamDestroy(st));
  HIP_CHECK(hipFree(x));
  HIP_CHECK(hipFree(y));
  std::printf("rounds=%d dispatches=%ld copies=%ld\n", rounds, dispatches, copies);
  return 0;
}
