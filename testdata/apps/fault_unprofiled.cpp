// An app whose records the profiler cannot keep unless it notices: it may
// change its user (setuid) before its first recorded call, so that it
// cannot create its spool in the run's private directory. Run under a
// private /dev/shm, or with LD_PRELOAD removed, it is the other cases of
// issue 31's unprofiled processes (test/reliability/unprofiled_test.go).
// usage: fault_unprofiled [setuid UID GID]
// Prints pid=N, then makes one ROCTx mark (roctxMarkA, found with dlsym so
// that the app needs no ROCTx library: the preload library's interposer
// when it is there), hipGetDevice, one kernel and hipDeviceSynchronize, and
// prints calls=done.
#include <dlfcn.h>
#include <grp.h>
#include <unistd.h>

#include <cstring>

#include "common.h"

int main(int argc, char** argv) {
  std::printf("pid=%d\n", (int)getpid());
  std::fflush(stdout);
  if (argc == 4 && !std::strcmp(argv[1], "setuid")) {
    gid_t gid = (gid_t)std::atoi(argv[3]);
    if (setgroups(1, &gid) != 0 || setgid(gid) != 0 || setuid((uid_t)std::atoi(argv[2])) != 0) {
      std::perror("setuid");
      return 3;
    }
    std::printf("uid=%d\n", (int)getuid());
  }
  using mark_fn = void (*)(const char*);
  if (auto mark = reinterpret_cast<mark_fn>(dlsym(RTLD_DEFAULT, "roctxMarkA"))) mark("unprofiled-mark");
  int dev = -1;
  HIP_CHECK(hipGetDevice(&dev));
  int* p = nullptr;
  HIP_CHECK(hipMalloc(&p, sizeof(int)));
  tiny<<<1, 64>>>(p);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipFree(p));
  std::printf("calls=done\n");
  return 0;
}
