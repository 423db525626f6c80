// An app written for roctracer's legacy ROCTx: includes <roctracer/roctx.h>
// and links libroctx64 (rocprof-go's build of that name). Marker tracing
// must record it like an app on the rocprofiler-sdk-roctx library.
// Makes: mark "legacy-mark", push "legacy-range" / pop, start "legacy-start"
// / stop, and prints the library's legacy version.
#include <roctracer/roctx.h>

#include <cstdio>

int main() {
  roctxMarkA("legacy-mark");
  int level = roctxRangePushA("legacy-range");
  int popped = roctxRangePop();
  roctx_range_id_t id = roctxRangeStartA("legacy-start");
  roctxRangeStop(id);
  std::printf("version=%u.%u level=%d popped=%d id=%llu\n", roctx_version_major(),
              roctx_version_minor(), level, popped, (unsigned long long)id);
  return 0;
}
