// Vector operations on several streams with known dispatch and copy counts.
// usage: multistream [STREAMS=4] [ITERATIONS=8] [N=65536]
// Each iteration on each stream: 2 H2D copies, vadd + scale (2 dispatches),
// 1 D2D copy, 1 D2H copy. Data is checked through the copies (the virtual GPU
// runs no kernel code, so kernel outputs are not checked).
#include <vector>

#include "common.h"

int main(int argc, char** argv) {
  int streams = argc > 1 ? std::atoi(argv[1]) : 4;
  int iters = argc > 2 ? std::atoi(argv[2]) : 8;
  int n = argc > 3 ? std::atoi(argv[3]) : 65536;
  size_t bytes = size_t(n) * sizeof(float);
  std::vector<hipStream_t> s(streams);
  std::vector<float*> a(streams), b(streams), c(streams), d(streams);
  std::vector<std::vector<float>> host(streams, std::vector<float>(n)), back(streams, std::vector<float>(n));
  for (int k = 0; k < streams; k++) {
    HIP_CHECK(hipStreamCreate(&s[k]));
    HIP_CHECK(hipMalloc(&a[k], bytes));
    HIP_CHECK(hipMalloc(&b[k], bytes));
    HIP_CHECK(hipMalloc(&c[k], bytes));
    HIP_CHECK(hipMalloc(&d[k], bytes));
    for (int i = 0; i < n; i++) host[k][i] = float(k * 1000 + i);
  }
  long dispatches = 0, copies = 0;
  for (int it = 0; it < iters; it++) {
    for (int k = 0; k < streams; k++) {
      HIP_CHECK(hipMemcpyAsync(a[k], host[k].data(), bytes, hipMemcpyHostToDevice, s[k]));
      HIP_CHECK(hipMemcpyAsync(b[k], host[k].data(), bytes, hipMemcpyHostToDevice, s[k]));
      hipLaunchKernelGGL(vadd, dim3((n + 255) / 256), dim3(256), 0, s[k], a[k], b[k], c[k], n);
      hipLaunchKernelGGL(scale, dim3((n + 255) / 256), dim3(256), 0, s[k], c[k], 0.5f, n);
      HIP_CHECK(hipGetLastError());
      HIP_CHECK(hipMemcpyAsync(d[k], a[k], bytes, hipMemcpyDeviceToDevice, s[k]));
      HIP_CHECK(hipMemcpyAsync(back[k].data(), d[k], bytes, hipMemcpyDeviceToHost, s[k]));
      dispatches += 2;
      copies += 4;
    }
  }
  for (int k = 0; k < streams; k++) HIP_CHECK(hipStreamSynchronize(s[k]));
  HIP_CHECK(hipDeviceSynchronize());
  for (int k = 0; k < streams; k++)
    for (int i = 0; i < n; i++)
      if (back[k][i] != host[k][i]) {
        std::fprintf(stderr, "stream %d element %d: got %f want %f\n", k, i, back[k][i], host[k][i]);
        return 1;
      }
  std::printf("streams=%d iterations=%d dispatches=%ld copies=%ld\n", streams, iters, dispatches, copies);
  return 0;
}
