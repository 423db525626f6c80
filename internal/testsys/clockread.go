//go:build cgo

package testsys

/*
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

static uint64_t testsys_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// slices x per back-to-back reads of one clock: each slice's ns per read
// into out. what 0: __rdtsc(), as the recorder's stamps read it (no fence,
// no rdtscp); 1: clock_gettime(CLOCK_BOOTTIME), the recorder's slow clock
// (preload/clock.c). Returns 0 without that clock (rdtsc off x86-64).
static int testsys_clock_reads(int what, int slices, long per, double *out)
{
	uint64_t sink = 0;
	struct timespec ts;
#if !defined(__x86_64__)
	if (what == 0)
		return 0;
#endif
	for (int s = 0; s < slices; s++) {
		uint64_t t0 = testsys_mono_ns();
		if (what == 0) {
#if defined(__x86_64__)
			for (long i = 0; i < per; i++)
				sink += __rdtsc();
#endif
		} else {
			for (long i = 0; i < per; i++) {
				clock_gettime(CLOCK_BOOTTIME, &ts);
				sink += (uint64_t)ts.tv_nsec;
			}
		}
		out[s] = (double)(testsys_mono_ns() - t0) / (double)per;
	}
	__asm__ volatile("" : : "r"(sink));
	return 1;
}
*/
import "C"

import (
	"unsafe"
)

// clockReadsMeasured: this build times the clock reads (cgo).
const clockReadsMeasured = true

// MeasureClockReads times the clock reads the recorder makes on the app's
// thread, in C: rdtsc and clock_gettime(CLOCK_BOOTTIME), back to back, ns
// per read (0 for rdtsc off x86-64). Each figure is the median of 5 runs of
// 1e6 reads; a run counts as its median slice of 10,000 reads, so that a
// preemption on the shared machines (which would add milliseconds to one
// slice) does not pass for the clock's cost.
func MeasureClockReads() (rdtscNs, clockGettimeNs float64) {
	const runs, nslices, per = 5, 100, 10000
	measure := func(what C.int) float64 {
		var perRun []float64
		buf := make([]float64, nslices)
		for range runs {
			if C.testsys_clock_reads(what, nslices, per, (*C.double)(unsafe.Pointer(&buf[0]))) == 0 {
				return 0
			}
			perRun = append(perRun, Median(buf))
		}
		return Median(perRun)
	}
	return measure(0), measure(1)
}
