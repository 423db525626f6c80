// One MPI rank's traced work for the teardown test (test/teardown): CALLS
// hipGetDevice calls after hipSetDevice(0), then exit 0 — or, in the rank
// CRASH_RANK (OMPI_COMM_WORLD_RANK, else PMI_RANK, SLURM_PROCID), a NULL
// write right after its last call: SIGSEGV with every call returned.
// usage: teardown_calls [CALLS=1000000] [CRASH_RANK=-1]
// prints: rank=<r> calls=<n> (before the crash: "crashing" is added)
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>

static int rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const char* s = std::getenv(v)) return std::atoi(s);
  }
  return 0;
}

int main(int argc, char** argv) {
  long calls = argc > 1 ? std::atol(argv[1]) : 1000000;
  int crash = argc > 2 ? std::atoi(argv[2]) : -1;
  int dev = -1;
  if (hipSetDevice(0) != hipSuccess) return 2;
  for (long i = 0; i < calls; i++) {
    if (hipGetDevice(&dev) != hipSuccess) return 1;
  }
  int r = rank();
  if (r == crash) {
    std::printf("rank=%d calls=%ld crashing\n", r, calls);
    std::fflush(stdout);
    volatile int* p = nullptr;
    *p = 1;
  }
  std::printf("rank=%d calls=%ld\n", r, calls);
  std::fflush(stdout);
  return 0;
}
