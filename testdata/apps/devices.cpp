// Lists the devices and runs a copy round trip and one kernel on each; with
// two or more devices also a peer copy from device 0 to device 1.
// Prints "devices=N" and one line per device with its name and arch.
#include <vector>

#include "common.h"

int main() {
  int n = 0;
  HIP_CHECK(hipGetDeviceCount(&n));
  std::printf("devices=%d\n", n);
  for (int d = 0; d < n; d++) {
    HIP_CHECK(hipSetDevice(d));
    hipDeviceProp_t p;
    HIP_CHECK(hipGetDeviceProperties(&p, d));
    std::vector<int> h(1024), r(1024);
    for (int i = 0; i < 1024; i++) h[i] = d * 100000 + i;
    int* m;
    HIP_CHECK(hipMalloc(&m, 4096));
    HIP_CHECK(hipMemcpy(m, h.data(), 4096, hipMemcpyHostToDevice));
    hipLaunchKernelGGL(tiny, dim3(1), dim3(64), 0, 0, nullptr);
    HIP_CHECK(hipDeviceSynchronize());
    HIP_CHECK(hipMemcpy(r.data(), m, 4096, hipMemcpyDeviceToHost));
    if (r != h) {
      std::fprintf(stderr, "device %d: copy round trip failed\n", d);
      return 1;
    }
    std::printf("device %d name=%s arch=%s cus=%d\n", d, p.name, p.gcnArchName, p.multiProcessorCount);
  }
  if (n > 1) {
    int can = 0;
    HIP_CHECK(hipDeviceCanAccessPeer(&can, 1, 0));
    std::vector<int> h(4096), r(4096);
    for (int i = 0; i < 4096; i++) h[i] = 7 * i + 1;
    int *a, *b;
    HIP_CHECK(hipSetDevice(0));
    HIP_CHECK(hipMalloc(&a, 4096 * sizeof(int)));
    HIP_CHECK(hipMemcpy(a, h.data(), 4096 * sizeof(int), hipMemcpyHostToDevice));
    HIP_CHECK(hipSetDevice(1));
    HIP_CHECK(hipMalloc(&b, 4096 * sizeof(int)));
    HIP_CHECK(hipMemcpyPeer(b, 1, a, 0, 4096 * sizeof(int)));
    HIP_CHECK(hipMemcpy(r.data(), b, 4096 * sizeof(int), hipMemcpyDeviceToHost));
    if (r != h) {
      std::fprintf(stderr, "peer copy 0 -> 1 failed\n");
      return 1;
    }
    std::printf("peer copy ok can_access_peer=%d\n", can);
  }
  return 0;
}
