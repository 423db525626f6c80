// --selected-regions sample: hipGetDevice calls before, inside and after one
// roctxProfilerResume(0) .. roctxProfilerPause(0) region.
// Makes 3 calls before, 5 inside, 7 after.
#include <hip/hip_runtime.h>
#include <rocprofiler-sdk-roctx/roctx.h>

#include <cstdio>

static int calls(int n) {
  int dev = -1, bad = 0;
  for (int i = 0; i < n; i++) bad += hipGetDevice(&dev) != hipSuccess;
  return bad;
}

int main() {
  int bad = calls(3);
  roctxProfilerResume(0);
  bad += calls(5);
  roctxProfilerPause(0);
  bad += calls(7);
  std::printf("failures=%d\n", bad);
  return bad ? 1 : 0;
}
