/* Clocks. The system clock counter is CLOCK_BOOTTIME in ns (the clock every
 * rocprof-go timestamp uses) and the GPU clock runs at 100 MHz derived from
 * it, so ROCR's linear tick->time interpolation is exact. In virtual mode
 * both derive from a counter that only packet processing advances. */
#define _GNU_SOURCE
#include <errno.h>
#include <time.h>

#include "vgpu.h"

/* Virtual time starts at 1 s so that no timestamp is 0. */
static _Atomic uint64_t virtual_ns = 1000000000ull;

uint64_t vgpu_now_ns(void) {
  if (vgpu_cfg.clock == VGPU_CLOCK_VIRTUAL) return atomic_load(&virtual_ns);
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t vgpu_gpu_ticks(void) { return vgpu_now_ns() / VGPU_GPU_TICK_NS; }

uint64_t vgpu_virtual_advance(uint64_t ns) { return atomic_fetch_add(&virtual_ns, ns); }

void vgpu_sleep_until_ns(uint64_t ns) {
  struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull), .tv_nsec = (long)(ns % 1000000000ull)};
  while (clock_nanosleep(CLOCK_BOOTTIME, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}
