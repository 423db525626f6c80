// The situations of rocprofv3's own integration tests (issue 24), for the
// conformance tests of internal/pipeline. One mode per run:
//
//   transpose   rocprofv3's simple-transpose: push "main"; two hipMalloc; an
//               H2D hipMemcpy; roctxGetThreadId; roctxProfilerPause(tid); a
//               D2D hipMemcpy (must be in no trace); roctxProfilerResume(tid);
//               mark "pre-kernel-launch"; one transpose kernel (grid 64x64,
//               work-group 4x4); mark "post-kernel-launch"; a D2H hipMemcpy;
//               two hipFree; pop.
//   mark-rename mark "first"; a D2D hipMemcpy (blit kernels) and kernel A;
//               push "range" { kernel B } pop; kernel C; mark "second";
//               kernel D. Under --kernel-rename rocprofv3 names the blits, A
//               and C "first", B "range", D "second".
//   threads     two threads, each on its own stream: N rounds of an H2D
//               hipMemcpyAsync, a kernel and a D2H hipMemcpyAsync, then a
//               stream sync; copies of both threads interleave.
//   inflight    two dispatches of conformance_slow on two streams, then
//               "in flight" on stdout and a wait for the signal (the test
//               makes the kernel last seconds with ROCPROF_VGPU_KERNEL_SCALE).
#include <hip/hip_runtime.h>
#include <rocprofiler-sdk-roctx/roctx.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "common.h"

__global__ void transpose(float* out, const float* in, int width) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < width) out[x * width + y] = in[y * width + x];
}

__global__ void conformance_slow(int* p) {
  if (threadIdx.x == 0 && p) p[0] += 1;
}

static int run_transpose() {
  const int width = 64, n = width * width;
  static float host[n], back[n];
  for (int i = 0; i < n; i++) host[i] = float(i);
  roctxRangePush("main");
  float *a, *b;
  HIP_CHECK(hipMalloc(&a, sizeof host));
  HIP_CHECK(hipMalloc(&b, sizeof host));
  HIP_CHECK(hipMemcpy(a, host, sizeof host, hipMemcpyHostToDevice));
  roctx_thread_id_t tid = 0;
  roctxGetThreadId(&tid);
  roctxProfilerPause(tid);
  HIP_CHECK(hipMemcpy(b, a, sizeof host, hipMemcpyDeviceToDevice));
  roctxProfilerResume(tid);
  roctxMark("pre-kernel-launch");
  transpose<<<dim3(width / 4, width / 4), dim3(4, 4)>>>(b, a, width);
  roctxMark("post-kernel-launch");
  HIP_CHECK(hipMemcpy(back, b, sizeof back, hipMemcpyDeviceToHost));
  HIP_CHECK(hipFree(a));
  HIP_CHECK(hipFree(b));
  roctxRangePop();
  return 0;  // (the virtual GPU does not run kernels' code: back is not checked)
}

static int run_mark_rename() {
  const int n = 1024;
  float *a, *b;
  HIP_CHECK(hipMalloc(&a, n * sizeof(float)));
  HIP_CHECK(hipMalloc(&b, n * sizeof(float)));
  roctxMark("first");
  HIP_CHECK(hipMemcpy(b, a, n * sizeof(float), hipMemcpyDeviceToDevice));
  scale<<<n / 256, 256>>>(a, 2.0f, n);  // A
  roctxRangePush("range");
  scale<<<n / 256, 256>>>(a, 2.0f, n);  // B
  roctxRangePop();
  scale<<<n / 256, 256>>>(a, 2.0f, n);  // C
  roctxMark("second");
  scale<<<n / 256, 256>>>(a, 2.0f, n);  // D
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipFree(a));
  HIP_CHECK(hipFree(b));
  return 0;
}

static int run_threads(int rounds) {
  const int n = 4096;
  auto worker = [&]() {
    hipStream_t s;
    HIP_CHECK(hipStreamCreate(&s));
    float* host;
    HIP_CHECK(hipHostMalloc(&host, n * sizeof(float)));
    float* dev;
    HIP_CHECK(hipMalloc(&dev, n * sizeof(float)));
    for (int r = 0; r < rounds; r++) {
      HIP_CHECK(hipMemcpyAsync(dev, host, n * sizeof(float), hipMemcpyHostToDevice, s));
      scale<<<n / 256, 256, 0, s>>>(dev, 1.5f, n);
      HIP_CHECK(hipMemcpyAsync(host, dev, n * sizeof(float), hipMemcpyDeviceToHost, s));
      HIP_CHECK(hipStreamSynchronize(s));
    }
    HIP_CHECK(hipFree(dev));
    HIP_CHECK(hipHostFree(host));
    HIP_CHECK(hipStreamDestroy(s));
  };
  std::thread t1(worker), t2(worker);
  t1.join();
  t2.join();
  return 0;
}

static int run_inflight() {
  int* p;
  HIP_CHECK(hipMalloc(&p, sizeof(int)));
  hipStream_t s1, s2;
  HIP_CHECK(hipStreamCreate(&s1));
  HIP_CHECK(hipStreamCreate(&s2));
  conformance_slow<<<1, 64, 0, s1>>>(p);
  conformance_slow<<<1, 64, 0, s2>>>(p);
  std::printf("in flight\n");
  std::fflush(stdout);
  for (;;) pause();  // SIGINT ends the process (default disposition)
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "transpose";
  if (!std::strcmp(mode, "transpose")) return run_transpose();
  if (!std::strcmp(mode, "mark-rename")) return run_mark_rename();
  if (!std::strcmp(mode, "threads")) return run_threads(argc > 2 ? std::atoi(argv[2]) : 8);
  if (!std::strcmp(mode, "inflight")) return run_inflight();
  std::fprintf(stderr, "usage: %s transpose|mark-rename|threads [ROUNDS]|inflight\n", argv[0]);
  return 2;
}
