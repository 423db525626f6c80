// Calls _exit mid-run with kernels in flight: no atexit handlers, no library
// destructors, no flush. Everything published before _exit must be in the trace.
// With COPIES, the app first makes that many synchronous 4 KiB host-to-device
// copies from pinned memory, the last one right before the final launches and _exit: each copy
// returned, so each must be in memory_copy_trace.csv.
// usage: fault_exit [COMPLETED=50] [CODE=3] [COPIES=0]
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  int completed = argc > 1 ? std::atoi(argv[1]) : 50;
  int code = argc > 2 ? std::atoi(argv[2]) : 3;
  int copies = argc > 3 ? std::atoi(argv[3]) : 0;
  int* d;
  HIP_CHECK(hipMalloc(&d, 64));
  for (int i = 0; i < completed; i++) hipLaunchKernelGGL(tiny, dim3(1), dim3(64), 0, 0, d);
  HIP_CHECK(hipDeviceSynchronize());
  if (copies > 0) {
    // Pinned: HIP hands pageable copies this small to the CPU, not to a DMA engine.
    const size_t bytes = 4096;
    void *host, *buf;
    HIP_CHECK(hipHostMalloc(&host, bytes));
    HIP_CHECK(hipMalloc(&buf, bytes));
    for (int i = 0; i < copies; i++) HIP_CHECK(hipMemcpy(buf, host, bytes, hipMemcpyHostToDevice));
  }
  for (int i = 0; i < 20; i++) hipLaunchKernelGGL(tiny, dim3(1), dim3(64), 0, 0, d);
  std::printf("dispatches=%d completed launches=%d copies=%d _exit=%d\n", completed, completed + 20, copies,
              code);
  std::fflush(stdout);
  _exit(code);
}
