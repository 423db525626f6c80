// --collection-period sample: calls hipGetDevice about every 200 us for
// MS milliseconds of wall time, then prints when the loop started and ended
// (CLOCK_BOOTTIME ns, the clock of the records) and how many calls it made.
// One hipGetDeviceCount before the loop initialises HIP.
// usage: hip_calls_period [MS=400]
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <unistd.h>

static unsigned long long boottime() {
  timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int main(int argc, char** argv) {
  unsigned long long ms = argc > 1 ? std::atoll(argv[1]) : 400;
  int count = 0;
  if (hipGetDeviceCount(&count) != hipSuccess) return 1;  // HIP's slow start-up
  unsigned long long start = boottime(), end = start + ms * 1000000ull, now;
  long calls = 0;
  int dev = -1;
  while ((now = boottime()) < end) {
    if (hipGetDevice(&dev) != hipSuccess) return 1;
    calls++;
    usleep(200);
  }
  std::printf("start=%llu end=%llu calls=%ld\n", start, now, calls);
  return 0;
}
