/*
 * target.c: a process for internal/inject's tests to inject into.
 *
 *   target regs     prints "ready", then on the main thread: vector
 *                   registers loaded, a raw read(0) that blocks until the
 *                   test writes a line (the injection lands meanwhile), the
 *                   registers checked; then again around a raw 1 s
 *                   nanosleep. A second thread computes a floating-point
 *                   sum the whole time. Prints what each step saw.
 *   target compute  prints only the sum (the reference, no injection).
 *   target sleep    prints "ready" and sleeps until killed.
 *   target signals FILE  counts SIGUSR1 (with its si_code and value, and
 *                   whether FILE existed when it came) and SIGUSR2 in handlers; prints "ready", then for every
 *                   line read on stdin prints what it counted.
 *   target addrs    prints the addresses its code has for dlopen, dlsym,
 *                   dlerror and dlclose, then "ready", and sleeps.
 *   target spinread  a second thread reads lines on stdin and prints
 *                   "got <line>" for each; the main thread computes without
 *                   a system call.
 *   target smallstack  a thread with a 20 KiB stack waits in read(0); the
 *                   main thread computes, sleeping 1 ms every few ms.
 *   target nap      prints "ready", then makes a raw 1 s nanosleep and
 *                   prints "slept=<ms> ret=<r>".
 *   target spin     prints "ready" and computes without a system call
 *                   until killed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile double sum_out;

static void *compute(void *arg)
{
	long n = (long)arg;
	double s = 0, x = 1.0;
	for (long k = 1; k <= n; k++) {
		x = x * 1.0000001 + 1e-9;
		s += 1.0 / ((double)k * (double)k) + x * 1e-12;
	}
	sum_out = s;
	return NULL;
}

#define COMPUTE_N 400000000L

/* 16 ymm registers, and the upper 16 zmm registers when the CPU has
 * AVX-512: loaded from in, a system call made, stored to out. */
static long sys_with_vectors(long nr, long a0, long a1, long a2, const uint8_t *in, uint8_t *ymm, uint8_t *zmm, int avx512)
{
	long ret;
	if (avx512) {
		__asm__ volatile("vmovdqu64 0(%[in]), %%zmm16\n vmovdqu64 64(%[in]), %%zmm17\n"
				 "vmovdqu64 128(%[in]), %%zmm24\n vmovdqu64 192(%[in]), %%zmm31\n"
				 : : [in] "r"(in + 512) : "memory");
	}
	register long r10 __asm__("r10") = 0;
	__asm__ volatile(
		"vmovdqu 0(%[in]), %%ymm0\n vmovdqu 32(%[in]), %%ymm1\n vmovdqu 64(%[in]), %%ymm2\n"
		"vmovdqu 96(%[in]), %%ymm3\n vmovdqu 128(%[in]), %%ymm4\n vmovdqu 160(%[in]), %%ymm5\n"
		"vmovdqu 192(%[in]), %%ymm6\n vmovdqu 224(%[in]), %%ymm7\n vmovdqu 256(%[in]), %%ymm8\n"
		"vmovdqu 288(%[in]), %%ymm9\n vmovdqu 320(%[in]), %%ymm10\n vmovdqu 352(%[in]), %%ymm11\n"
		"vmovdqu 384(%[in]), %%ymm12\n vmovdqu 416(%[in]), %%ymm13\n vmovdqu 448(%[in]), %%ymm14\n"
		"vmovdqu 480(%[in]), %%ymm15\n"
		"syscall\n"
		"vmovdqu %%ymm0, 0(%[out])\n vmovdqu %%ymm1, 32(%[out])\n vmovdqu %%ymm2, 64(%[out])\n"
		"vmovdqu %%ymm3, 96(%[out])\n vmovdqu %%ymm4, 128(%[out])\n vmovdqu %%ymm5, 160(%[out])\n"
		"vmovdqu %%ymm6, 192(%[out])\n vmovdqu %%ymm7, 224(%[out])\n vmovdqu %%ymm8, 256(%[out])\n"
		"vmovdqu %%ymm9, 288(%[out])\n vmovdqu %%ymm10, 320(%[out])\n vmovdqu %%ymm11, 352(%[out])\n"
		"vmovdqu %%ymm12, 384(%[out])\n vmovdqu %%ymm13, 416(%[out])\n vmovdqu %%ymm14, 448(%[out])\n"
		"vmovdqu %%ymm15, 480(%[out])\n"
		: "=a"(ret)
		: "a"(nr), "D"(a0), "S"(a1), "d"(a2), "r"(r10), [in] "r"(in), [out] "r"(ymm)
		: "rcx", "r11", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
		  "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
	if (avx512) {
		__asm__ volatile("vmovdqu64 %%zmm16, 0(%[out])\n vmovdqu64 %%zmm17, 64(%[out])\n"
				 "vmovdqu64 %%zmm24, 128(%[out])\n vmovdqu64 %%zmm31, 192(%[out])\n"
				 : : [out] "r"(zmm) : "memory");
	}
	return ret;
}

static int vectors_intact(const uint8_t *in, const uint8_t *ymm, const uint8_t *zmm, int avx512)
{
	return memcmp(in, ymm, 512) == 0 && (!avx512 || memcmp(in + 512, zmm, 256) == 0);
}

static volatile sig_atomic_t usr1, usr2, usr1_code, usr1_value, usr1_after;
static const char *after_file;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	usr1++;
	usr1_code = si->si_code;
	usr1_value = si->si_value.sival_int;
	usr1_after = after_file && access(after_file, F_OK) == 0;
}

static void on_usr2(int sig)
{
	(void)sig;
	usr2++;
}

static void *echo_lines(void *arg)
{
	(void)arg;
	char line[64];
	while (fgets(line, sizeof line, stdin))
		printf("got %s", line);
	exit(0);
}

static void *wait_read(void *arg)
{
	(void)arg;
	char c;
	if (read(0, &c, 1) < 0)
		return NULL;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "sleep";
	setvbuf(stdout, NULL, _IONBF, 0);
	if (strcmp(mode, "compute") == 0) {
		compute((void *)COMPUTE_N);
		printf("compute=%a\n", sum_out);
		return 0;
	}
	if (strcmp(mode, "sleep") == 0) {
		printf("ready\n");
		for (;;)
			sleep(60);
	}
	if (strcmp(mode, "signals") == 0) {
		struct sigaction sa = {0};
		sa.sa_sigaction = on_usr1;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigaction(SIGUSR1, &sa, NULL);
		struct sigaction sb = {0};
		sb.sa_handler = on_usr2;
		sb.sa_flags = SA_RESTART;
		sigaction(SIGUSR2, &sb, NULL);
		after_file = argc > 2 ? argv[2] : NULL;
		printf("ready\n");
		char line[64];
		while (fgets(line, sizeof line, stdin))
			printf("usr1=%d code=%d value=%d after=%d usr2=%d\n", (int)usr1, (int)usr1_code, (int)usr1_value,
			       (int)usr1_after, (int)usr2);
		return 0;
	}
	if (strcmp(mode, "addrs") == 0) {
		printf("%p %p %p %p\n", (void *)dlopen, (void *)dlsym, (void *)dlerror, (void *)dlclose);
		printf("ready\n");
		for (;;)
			sleep(60);
	}
	if (strcmp(mode, "spinread") == 0) {
		pthread_t reader;
		pthread_create(&reader, NULL, echo_lines, NULL);
		printf("ready\n");
		volatile double x = 1;
		for (;;)
			x = x * 1.0000001 + 1e-9;
	}
	if (strcmp(mode, "smallstack") == 0) {
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 20 << 10);
		pthread_t small;
		pthread_create(&small, &attr, wait_read, NULL);
		printf("ready\n");
		volatile double x = 1;
		for (;;) {
			for (int i = 0; i < 1000000; i++)
				x = x * 1.0000001 + 1e-9;
			struct timespec ms = {0, 1000000};
			nanosleep(&ms, NULL);
		}
	}
	if (strcmp(mode, "nap") == 0) {
		printf("ready\n");
		struct timespec req = {1, 0}, t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		long r = syscall(SYS_nanosleep, &req, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("slept=%ld ret=%ld\n", (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000, r);
		return 0;
	}
	if (strcmp(mode, "spin") == 0) {
		printf("ready\n");
		volatile double x = 1;
		for (;;)
			x = x * 1.0000001 + 1e-9;
	}
	/* regs */
	int avx512 = __builtin_cpu_supports("avx512f");
	static uint8_t in[768], ymm[512], zmm[256];
	for (int i = 0; i < 768; i++)
		in[i] = (uint8_t)(i * 7 + 3);
	pthread_t th;
	pthread_create(&th, NULL, compute, (void *)COMPUTE_N);
	printf("ready avx512=%d\n", avx512);

	char buf[64] = {0};
	errno = 1234;
	long n = sys_with_vectors(SYS_read, 0, (long)buf, sizeof buf - 1, in, ymm, zmm, avx512);
	int err = errno;
	printf("read=%ld %.*s vectors=%s errno=%d\n", n, n > 0 ? (int)strcspn(buf, "\n") : 0, buf,
	       vectors_intact(in, ymm, zmm, avx512) ? "intact" : "CHANGED", err);

	memset(ymm, 0, sizeof ymm);
	memset(zmm, 0, sizeof zmm);
	struct timespec req = {1, 0}, t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	printf("sleeping\n");
	n = sys_with_vectors(SYS_nanosleep, (long)&req, 0, 0, in, ymm, zmm, avx512);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	printf("slept=%ld ret=%ld vectors=%s\n", ms, n, vectors_intact(in, ymm, zmm, avx512) ? "intact" : "CHANGED");

	pthread_join(th, NULL);
	printf("compute=%a\n", sum_out);
	return 0;
}
