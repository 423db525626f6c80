// Runs until it is killed, reporting its progress: after each batch of
// launches has completed it prints "progress dispatches=N" (N completed so
// far), so a test can kill it mid-run and know what was published. It stops by
// itself after MAX_SECONDS so a failed test never leaves it running.
// usage: fault_progress [BATCH=10] [MAX_SECONDS=600]
#include <unistd.h>

#include <chrono>

#include "common.h"

int main(int argc, char** argv) {
  int batch = argc > 1 ? std::atoi(argv[1]) : 10;
  int max_s = argc > 2 ? std::atoi(argv[2]) : 600;
  int* d;
  HIP_CHECK(hipMalloc(&d, 64));
  std::printf("pid=%d\n", (int)getpid());
  std::fflush(stdout);
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(max_s);
  long done = 0;
  while (std::chrono::steady_clock::now() < end) {
    for (int i = 0; i < batch; i++) hipLaunchKernelGGL(tiny, dim3(1), dim3(64), 0, 0, d);
    HIP_CHECK(hipDeviceSynchronize());
    done += batch;
    std::printf("progress dispatches=%ld\n", done);
    std::fflush(stdout);
  }
  std::printf("timed out after %d s\n", max_s);
  return 1;
}
