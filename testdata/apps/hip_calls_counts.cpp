// A HIP app with known API call counts and ROCTx annotations, for the HIP
// and marker tracing tests (internal/hsa/hiptrace). Change a count here and
// the test's expectations must change with it.
//
// HIP runtime calls: hipMalloc 3, hipMemcpy 3, hipLaunchKernel 6 (4 on the
// null stream, then 1 on each of two streams created and destroyed in turn),
// hipStreamCreate 2, hipStreamSynchronize 2, hipStreamDestroy 2,
// hipDeviceSynchronize 1, hipFree 3. Each <<<>>> launch also makes one __hipPushCallConfiguration and
// one __hipPopCallConfiguration (compiler API).
//
// ROCTx: roctxNameOsThread("main"); push "outer" { push "inner" { launches }
// pop; mark "after-kernels" } pop; roctxRangeStartA("process-range") started
// here and stopped on a second thread, which also marks "from-thread" and
// calls roctxGetThreadId; roctxProfilerPause(0) then roctxProfilerResume(0).
#include <hip/hip_runtime.h>
#include <rocprofiler-sdk-roctx/roctx.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

#define CHECK(x)                                                   \
  do {                                                             \
    if ((x) != hipSuccess) {                                       \
      std::fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #x); \
      std::exit(2);                                                \
    }                                                              \
  } while (0)

__global__ void hip_calls_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main() {
  const int n = 1024;
  static float ha[n], hb[n], hc[n];
  for (int i = 0; i < n; i++) {
    ha[i] = float(i);
    hb[i] = 1.0f;
  }
  roctxNameOsThread("main");
  int outer = roctxRangePushA("outer");
  float *da, *db, *dc;
  CHECK(hipMalloc(&da, sizeof ha));
  CHECK(hipMalloc(&db, sizeof hb));
  CHECK(hipMalloc(&dc, sizeof hc));
  CHECK(hipMemcpy(da, ha, sizeof ha, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(db, hb, sizeof hb, hipMemcpyHostToDevice));
  int inner = roctxRangePushA("inner");
  for (int k = 0; k < 4; k++) hip_calls_add<<<n / 256, 256>>>(da, db, dc, n);
  // Two streams one after the other (HIP may well reuse the first one's
  // memory for the second): stream ids 1 and 2.
  for (int k = 0; k < 2; k++) {
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    hip_calls_add<<<n / 256, 256, 0, s>>>(da, db, dc, n);
    CHECK(hipStreamSynchronize(s));
    CHECK(hipStreamDestroy(s));
  }
  int popped_inner = roctxRangePop();
  roctxMarkA("after-kernels");
  CHECK(hipMemcpy(hc, dc, sizeof hc, hipMemcpyDeviceToHost));
  CHECK(hipDeviceSynchronize());
  int popped_outer = roctxRangePop();

  roctx_range_id_t id = roctxRangeStartA("process-range");
  roctx_thread_id_t other = 0;
  std::thread t([&] {
    roctxMarkA("from-thread");
    roctxGetThreadId(&other);
    roctxRangeStop(id);
  });
  t.join();

  CHECK(hipFree(da));
  CHECK(hipFree(db));
  CHECK(hipFree(dc));
  roctxProfilerPause(0);
  roctxProfilerResume(0);
  std::printf("levels=%d,%d,%d,%d range_id=%llu other_tid=%llu\n", outer, inner, popped_inner,
              popped_outer, (unsigned long long)id, (unsigned long long)other);
  return 0;
}
