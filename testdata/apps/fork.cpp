// Forks after HIP is initialised. The child does not touch the GPU and exits
// with 7; the parent checks that, launches once more and exits 0.
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

int main() {
  int* d;
  HIP_CHECK(hipMalloc(&d, 64));
  hipLaunchKernelGGL(tiny, dim3(1), dim3(64), 0, 0, d);
  HIP_CHECK(hipDeviceSynchronize());
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    std::printf("child %d\n", (int)getpid());
    std::fflush(stdout);
    _exit(7);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 7) {
    std::fprintf(stderr, "child ended with status 0x%x\n", st);
    return 1;
  }
  hipLaunchKernelGGL(tiny, dim3(1), dim3(64), 0, 0, d);
  HIP_CHECK(hipDeviceSynchronize());
  std::printf("parent dispatches=2 child_exit=7\n");
  return 0;
}
