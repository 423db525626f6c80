// HIP features beyond plain launches: hipModuleLoad + hipModuleLaunchKernel
// (code object path in argv[1]), hipMallocManaged, cooperative launch and
// hipEvent timing. Prints one line per feature.
#include "common.h"

__global__ void coop(int* p) {
  if (threadIdx.x == 0) p[blockIdx.x] = 1;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: features MODULE.co\n");
    return 2;
  }
  hipModule_t mod;
  HIP_CHECK(hipModuleLoad(&mod, argv[1]));
  hipFunction_t fn;
  HIP_CHECK(hipModuleGetFunction(&fn, mod, "module_fill"));
  int* d;
  HIP_CHECK(hipMalloc(&d, 1024 * sizeof(int)));
  struct {
    int* p;
    int v;
    int n;
  } args{d, 7, 1024};
  size_t size = sizeof(args);
  void* config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &args, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                    HIP_LAUNCH_PARAM_END};
  HIP_CHECK(hipModuleLaunchKernel(fn, 4, 1, 1, 256, 1, 1, 0, 0, nullptr, config));
  HIP_CHECK(hipDeviceSynchronize());
  std::printf("module launch ok\n");

  int* m;
  HIP_CHECK(hipMallocManaged(&m, 4096));
  m[0] = 42;
  HIP_CHECK(hipMemset(m + 1, 0, 16));
  HIP_CHECK(hipDeviceSynchronize());
  std::printf("managed ok value=%d\n", m[0]);

  void* cargs[] = {&d};
  HIP_CHECK(hipLaunchCooperativeKernel((const void*)coop, dim3(8), dim3(64), cargs, 0, 0));
  HIP_CHECK(hipDeviceSynchronize());
  std::printf("cooperative launch ok\n");

  hipEvent_t a, b;
  HIP_CHECK(hipEventCreate(&a));
  HIP_CHECK(hipEventCreate(&b));
  HIP_CHECK(hipEventRecord(a, 0));
  hipLaunchKernelGGL(coop, dim3(1), dim3(64), 0, 0, d);
  HIP_CHECK(hipEventRecord(b, 0));
  HIP_CHECK(hipEventSynchronize(b));
  float ms = -1;
  HIP_CHECK(hipEventElapsedTime(&ms, a, b));
  std::printf("event timing ok ms=%.4f\n", ms);
  HIP_CHECK(hipModuleUnload(mod));
  return ms > 0 ? 0 : 1;
}
