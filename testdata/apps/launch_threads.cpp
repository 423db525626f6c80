// Many host threads submitting at once, each on its own stream, through every
// kind of launch and an async copy, so that each dispatch and copy can be
// checked against the call that made it: thread t launches grids of (1+t)
// blocks of 64, and copies 4096*(1+t) bytes.
//
// usage: launch_threads [THREADS=64] [ITERATIONS=50] [MODULE.co]
// Iteration i of a thread makes one launch: hipLaunchKernelGGL (i%3 == 0),
// hipExtLaunchKernelGGL (i%3 == 1) or, given MODULE.co (module_kernels.co),
// hipModuleLaunchKernel of module_fill (i%3 == 2, else hipLaunchKernelGGL);
// every 4th iteration also makes one pinned host-to-device hipMemcpyAsync.
// Prints the counts it made.
#include <hip/hip_ext.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "common.h"

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 64;
  int iterations = argc > 2 ? std::atoi(argv[2]) : 50;
  hipFunction_t fn = nullptr;
  if (argc > 3) {
    hipModule_t mod;
    HIP_CHECK(hipModuleLoad(&mod, argv[3]));
    HIP_CHECK(hipModuleGetFunction(&fn, mod, "module_fill"));
  }
  std::atomic<int> launches{0}, module_launches{0}, ext_launches{0}, copies{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; t++)
    ts.emplace_back([&, t] {
      hipStream_t s;
      HIP_CHECK(hipStreamCreate(&s));
      size_t bytes = 4096 * size_t(1 + t);
      int* d;
      HIP_CHECK(hipMalloc(&d, bytes < 64 * 4 * size_t(1 + t) ? 64 * 4 * size_t(1 + t) : bytes));
      void* h;
      HIP_CHECK(hipHostMalloc(&h, bytes));
      std::memset(h, 0, bytes);
      struct {
        int* p;
        int v;
        int n;
      } args{d, t, 64 * (1 + t)};
      size_t size = sizeof(args);
      void* config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &args, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                        HIP_LAUNCH_PARAM_END};
      for (int i = 0; i < iterations; i++) {
        if (i % 3 == 2 && fn) {
          HIP_CHECK(hipModuleLaunchKernel(fn, 1 + t, 1, 1, 64, 1, 1, 0, s, nullptr, config));
          module_launches++;
        } else if (i % 3 == 1) {
          hipExtLaunchKernelGGL(tiny, dim3(1 + t), dim3(64), 0, s, nullptr, nullptr, 0, d);
          ext_launches++;
        } else {
          hipLaunchKernelGGL(tiny, dim3(1 + t), dim3(64), 0, s, d);
          launches++;
        }
        if (i % 4 == 3) {
          HIP_CHECK(hipMemcpyAsync(d, h, bytes, hipMemcpyHostToDevice, s));
          copies++;
        }
      }
      HIP_CHECK(hipGetLastError());
      HIP_CHECK(hipStreamSynchronize(s));
      HIP_CHECK(hipStreamDestroy(s));
      HIP_CHECK(hipHostFree(h));
      HIP_CHECK(hipFree(d));
    });
  for (auto& t : ts) t.join();
  HIP_CHECK(hipDeviceSynchronize());
  std::printf("threads=%d launches=%d ext_launches=%d module_launches=%d copies=%d dispatches=%d\n",
              threads, launches.load(), ext_launches.load(), module_launches.load(), copies.load(),
              launches.load() + ext_launches.load() + module_launches.load());
  return 0;
}
