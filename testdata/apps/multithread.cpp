// Kernel launches from several host threads, each on its own stream.
// usage: multithread [THREADS=4] [LAUNCHES=500]
#include <thread>
#include <vector>

#include "common.h"

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 4;
  int launches = argc > 2 ? std::atoi(argv[2]) : 500;
  int* d;
  HIP_CHECK(hipMalloc(&d, 4096));
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; t++)
    ts.emplace_back([=] {
      hipStream_t s;
      HIP_CHECK(hipStreamCreate(&s));
      for (int i = 0; i < launches; i++) hipLaunchKernelGGL(tiny, dim3(1 + t), dim3(64), 0, s, d);
      HIP_CHECK(hipGetLastError());
      HIP_CHECK(hipStreamSynchronize(s));
      HIP_CHECK(hipStreamDestroy(s));
    });
  for (auto& t : ts) t.join();
  HIP_CHECK(hipDeviceSynchronize());
  std::printf("threads=%d dispatches=%d\n", threads, threads * launches);
  return 0;
}
