// What --sys-trace must see on every ROCm runtime: several streams, each
// iteration launching kernels every way the app can (hipLaunchKernel,
// hipModuleLaunchKernel, hipExtModuleLaunchKernel), copies in every
// direction, a memset, a host function; a captured graph launched several
// times; device properties and device choice (HIP 6 headers #define these
// to their R0600 entry points); HIP functions called through pointers from
// hipGetProcAddress (HIP 6.1+); ROCTx ranges and marks.
//
// usage: hip_calls_systrace STREAMS ITERATIONS GRAPH_LAUNCHES MODULE.co
//
// It prints the HIP calls it made, by the symbol its headers bound them to
// ("call NAME COUNT"), what the GPU should have seen ("kernel NAME COUNT",
// "copies N"), and, in call order, what each copy and kernel launch call
// asked for ("op NAME WHAT [BYTES]", WHAT being H2D, D2H, D2D, launch or
// captured): the test compares them with the trace. Built twice:
// as is, and with -DHIP_API_PER_THREAD_DEFAULT_STREAM (the _spt entry
// points).
#include <hip/hip_ext.h>
#include <rocprofiler-sdk-roctx/roctx.h>

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "common.h"

static std::map<std::string, int> calls;

// STR expands its argument first: the name printed is the symbol the
// headers' macros (R0600, _spt) turned the call into.
#define STR_(x) #x
#define STR(x) STR_(x)
#define CALL(fn, ...) (calls[STR(fn)]++, fn(__VA_ARGS__))
#define CHECKED(fn, ...) HIP_CHECK(CALL(fn, __VA_ARGS__))

static std::vector<std::string> ops;
static void op(const char* name, const char* what, size_t bytes = 0) {
  ops.push_back(std::string(name) + " " + what + (bytes ? " " + std::to_string(bytes) : ""));
}

static std::atomic<int> host_funcs{0};
static void host_func(void* arg) { static_cast<std::atomic<int>*>(arg)->fetch_add(1); }

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s STREAMS ITERATIONS GRAPH_LAUNCHES MODULE.co\n", argv[0]);
    return 2;
  }
  const int streams = std::atoi(argv[1]), iters = std::atoi(argv[2]), graph_launches = std::atoi(argv[3]);
  const int n = 1 << 14;
  const size_t bytes = n * sizeof(float);
  std::map<std::string, int> kernels;
  int copies = 0;

  roctxMarkA("systrace start");
  hipDeviceProp_t prop;
  CHECKED(hipGetDeviceProperties, &prop, 0);
  int chosen = -1;
  CHECKED(hipChooseDevice, &chosen, &prop);

  hipModule_t mod;
  hipFunction_t fill;
  CHECKED(hipModuleLoad, &mod, argv[4]);
  CHECKED(hipModuleGetFunction, &fill, mod, "module_fill");

  std::vector<hipStream_t> s(streams);
  std::vector<float*> a(streams), b(streams), c(streams);
  std::vector<int*> m(streams);
  std::vector<std::vector<float>> host(streams, std::vector<float>(n)), back(streams, std::vector<float>(n));
  for (int k = 0; k < streams; k++) {
    CHECKED(hipStreamCreate, &s[k]);
    CHECKED(hipMalloc, &a[k], bytes);
    CHECKED(hipMalloc, &b[k], bytes);
    CHECKED(hipMalloc, &c[k], bytes);
    CHECKED(hipMalloc, &m[k], n * sizeof(int));
    for (int i = 0; i < n; i++) host[k][i] = float(k * 100000 + i);
  }

  const dim3 grid(n / 256), block(256);
  for (int it = 0; it < iters; it++) {
    roctxRangePushA("iteration");
    for (int k = 0; k < streams; k++) {
      CHECKED(hipMemcpyAsync, a[k], host[k].data(), bytes, hipMemcpyHostToDevice, s[k]);
      op(STR(hipMemcpyAsync), "H2D", bytes);
      CHECKED(hipMemcpyAsync, b[k], a[k], bytes, hipMemcpyDeviceToDevice, s[k]);
      op(STR(hipMemcpyAsync), "D2D", bytes);
      copies += 2;
      int nn = n;
      void* vargs[] = {&a[k], &b[k], &c[k], &nn};
      CHECKED(hipLaunchKernel, reinterpret_cast<const void*>(&vadd), grid, block, vargs, 0, s[k]);
      op(STR(hipLaunchKernel), "launch");
      kernels["vadd(float const*, float const*, float*, int)"]++;
      int v = it, cnt = n;
      void* margs[] = {&m[k], &v, &cnt};
      CHECKED(hipModuleLaunchKernel, fill, n / 64, 1, 1, 64, 1, 1, 0, s[k], margs, nullptr);
      CHECKED(hipExtModuleLaunchKernel, fill, n, 1, 1, 64, 1, 1, 0, s[k], margs, nullptr, nullptr, nullptr, 0);
      kernels["module_fill"] += 2;
      CHECKED(hipMemsetAsync, c[k], 0, bytes, s[k]);
#if HIP_VERSION >= 50300000
      CHECKED(hipLaunchHostFunc, s[k], host_func, &host_funcs);
#endif
      CHECKED(hipMemcpyAsync, back[k].data(), b[k], bytes, hipMemcpyDeviceToHost, s[k]);
      op(STR(hipMemcpyAsync), "D2H", bytes);
      copies++;
    }
    roctxRangePop();
  }
  for (int k = 0; k < streams; k++) CHECKED(hipStreamSynchronize, s[k]);

  // A graph captured from stream 0 (a kernel and a copy; captured calls
  // reach no GPU), then launched: its dispatches and copies belong to
  // hipGraphLaunch.
  roctxRangePushA("graph");
  hipGraph_t graph;
  hipGraphExec_t exec;
  CHECKED(hipStreamBeginCapture, s[0], hipStreamCaptureModeGlobal);
  {
    int nn = n;
    void* vargs[] = {&a[0], &b[0], &c[0], &nn};
    CHECKED(hipLaunchKernel, reinterpret_cast<const void*>(&vadd), grid, block, vargs, 0, s[0]);
    op(STR(hipLaunchKernel), "captured");
    CHECKED(hipMemcpyAsync, a[0], b[0], bytes, hipMemcpyDeviceToDevice, s[0]);
    op(STR(hipMemcpyAsync), "captured");
  }
  CHECKED(hipStreamEndCapture, s[0], &graph);
  CHECKED(hipGraphInstantiate, &exec, graph, nullptr, nullptr, 0);
  for (int g = 0; g < graph_launches; g++) {
    CHECKED(hipGraphLaunch, exec, s[0]);
    kernels["vadd(float const*, float const*, float*, int)"]++;
    copies++;
  }
  CHECKED(hipStreamSynchronize, s[0]);
  CHECKED(hipGraphExecDestroy, exec);
  CHECKED(hipGraphDestroy, graph);
  roctxRangePop();

#if HIP_VERSION_MAJOR >= 6 && HIP_VERSION_MINOR >= 1 || HIP_VERSION_MAJOR >= 7
  // Through pointers from hipGetProcAddress: still traced. Asking for
  // hipGetDeviceProperties at version 600 hands out the R0600 entry point.
  {
    hipError_t (*get_device)(int*) = nullptr;
    hipError_t (*get_props)(hipDeviceProp_t*, int) = nullptr;
    hipDriverProcAddressQueryResult st;
    CHECKED(hipGetProcAddress, "hipGetDevice", reinterpret_cast<void**>(&get_device), 600, 0, &st);
    CHECKED(hipGetProcAddress, "hipGetDeviceProperties", reinterpret_cast<void**>(&get_props), 600, 0, &st);
    int dev = -1;
    for (int i = 0; i < 3; i++) HIP_CHECK(get_device(&dev));
    calls["hipGetDevice"] += 3;
    HIP_CHECK(get_props(&prop, 0));
    calls["hipGetDevicePropertiesR0600"]++;
  }
#endif

  calls[STR(hipDeviceSynchronize)]++;
  HIP_CHECK(hipDeviceSynchronize());
  for (int k = 0; k < streams; k++)
    for (int i = 0; i < n; i++)
      if (back[k][i] != host[k][i]) {
        std::fprintf(stderr, "stream %d element %d: got %f want %f\n", k, i, back[k][i], host[k][i]);
        return 1;
      }
#if HIP_VERSION >= 50300000
  if (host_funcs.load() != streams * iters) {
    std::fprintf(stderr, "host functions ran %d times, want %d\n", host_funcs.load(), streams * iters);
    return 1;
  }
#endif
  for (int k = 0; k < streams; k++) {
    CHECKED(hipFree, a[k]);
    CHECKED(hipFree, b[k]);
    CHECKED(hipFree, c[k]);
    CHECKED(hipFree, m[k]);
    CHECKED(hipStreamDestroy, s[k]);
  }
  CHECKED(hipModuleUnload, mod);
  for (auto& [name, count] : calls) std::printf("call %s %d\n", name.c_str(), count);
  for (auto& [name, count] : kernels) std::printf("kernel %s %d\n", name.c_str(), count);
  for (auto& o : ops) std::printf("op %s\n", o.c_str());
  std::printf("copies %d\nmarks 1\nranges iteration %d graph 1\n", copies, iters);
  return 0;
}
