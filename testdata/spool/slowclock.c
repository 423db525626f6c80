/*
 * slowclock.c: an LD_PRELOAD clock_gettime that makes every third
 * CLOCK_BOOTTIME read (the first included) take SLOWCLOCK_US microseconds
 * before it reads the clock, as a thread preempted between its rdtsc and its
 * clock read on a loaded node would.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t raw_ns(void)
{
    struct timespec ts;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
    static int (*real)(clockid_t, struct timespec *);
    static unsigned long calls;
    if (!real)
        real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    if (id == CLOCK_BOOTTIME && __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED) % 3 == 0) {
        const char *us = getenv("SLOWCLOCK_US");
        uint64_t until = raw_ns() + (us ? strtoull(us, NULL, 10) : 300) * 1000ull;
        while (raw_ns() < until) {
        }
    }
    return real(id, ts);
}
