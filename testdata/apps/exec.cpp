// Launches a kernel, then runs itself as a child through fork + execv; the
// child ("exec child") launches its own kernel and exits 5. The parent exits
// 0 if the child did.
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "common.h"

static void one_launch() {
  int* d;
  HIP_CHECK(hipMalloc(&d, 64));
  hipLaunchKernelGGL(tiny, dim3(1), dim3(64), 0, 0, d);
  HIP_CHECK(hipDeviceSynchronize());
}

int main(int argc, char** argv) {
  if (argc > 1 && !std::strcmp(argv[1], "child")) {
    one_launch();
    std::printf("exec child dispatches=1\n");
    return 5;
  }
  one_launch();
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    char* args[] = {argv[0], (char*)"child", nullptr};
    execv("/proc/self/exe", args);
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 5) {
    std::fprintf(stderr, "exec child ended with status 0x%x\n", st);
    return 1;
  }
  std::printf("parent dispatches=1 child_exit=5\n");
  return 0;
}
