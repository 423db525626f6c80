// Calls _exit mid-run with kernels in flight: no atexit handlers, no library
// destructors, no flush. Everything published before _exit must be in the trace.
// usage: fault_exit [COMPLETED=50] [CODE=3]
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  int completed = argc > 1 ? std::atoi(argv[1]) : 50;
  int code = argc > 2 ? std::atoi(argv[2]) : 3;
  int* d;
  HIP_CHECK(hipMalloc(&d, 64));
  for (int i = 0; i < completed; i++) hipLaunchKernelGGL(tiny, dim3(1), dim3(64), 0, 0, d);
  HIP_CHECK(hipDeviceSynchronize());
  for (int i = 0; i < 20; i++) hipLaunchKernelGGL(tiny, dim3(1), dim3(64), 0, 0, d);
  std::printf("dispatches=%d completed launches=%d _exit=%d\n", completed, completed + 20, code);
  std::fflush(stdout);
  _exit(code);
}
