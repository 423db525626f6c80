// Forks after HIP calls were traced: the child (a new spool) makes 3
// hipGetDevice calls and one roctxMarkA("child"), then exits; the parent
// makes 4 more hipGetDevice calls after waiting for it (5 in all).
#include <hip/hip_runtime.h>
#include <rocprofiler-sdk-roctx/roctx.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

int main() {
  int dev = -1;
  if (hipGetDevice(&dev) != hipSuccess) return 2;
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    int bad = 0;
    for (int i = 0; i < 3; i++) bad += hipGetDevice(&dev) != hipSuccess;
    roctxMarkA("child");
    _exit(bad ? 1 : 7);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  for (int i = 0; i < 4; i++)
    if (hipGetDevice(&dev) != hipSuccess) return 2;
  std::printf("child_exit=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  return 0;
}
