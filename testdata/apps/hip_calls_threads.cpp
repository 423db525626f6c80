// Many threads making many cheap HIP calls at once, each call wrapped in
// ROCTx marks every so often, to check that no record is lost and that
// correlation ids stay unique.
// usage: hip_calls_threads [THREADS=64] [CALLS_PER_THREAD=100000]
// Every thread makes CALLS hipGetDevice calls and one push/pop range named
// "thread-<i>" around them.
#include <hip/hip_runtime.h>
#include <rocprofiler-sdk-roctx/roctx.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 64;
  long calls = argc > 2 ? std::atol(argv[2]) : 100000;
  if (hipSetDevice(0) != hipSuccess) return 2;
  std::vector<std::thread> ts;
  std::vector<int> failures(threads);
  for (int t = 0; t < threads; t++) {
    ts.emplace_back([t, calls, &failures] {
      std::string name = "thread-" + std::to_string(t);
      roctxRangePushA(name.c_str());
      int dev = -1;
      for (long i = 0; i < calls; i++)
        if (hipGetDevice(&dev) != hipSuccess) failures[t]++;
      roctxRangePop();
    });
  }
  for (auto& t : ts) t.join();
  int bad = 0;
  for (int f : failures) bad += f;
  std::printf("threads=%d calls=%ld failures=%d\n", threads, calls, bad);
  return bad ? 1 : 0;
}
