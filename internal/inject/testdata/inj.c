/*
 * inj.c: the library internal/inject's tests inject. rpg_test_mark(arg)
 * writes "marked <arg> pid=<pid>" to the file named arg and returns 42,
 * having used the vector registers (memset, doubles) on the way.
 * rpg_test_slow(arg) sleeps 600 ms first (the tests signal the thread
 * meanwhile). rpg_test_exit ends the process (an exit during the attach).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile double sink;

int rpg_test_mark(const char *arg)
{
	char big[8192];
	memset(big, 0x5a, sizeof big);
	double d = 0;
	for (int i = 1; i < 1000; i++)
		d += (double)big[i % sizeof big] / i;
	sink = d;
	__asm__ volatile("vpxor %%ymm0, %%ymm0, %%ymm0\n vpcmpeqd %%ymm15, %%ymm15, %%ymm15" : : : "xmm0", "xmm15");
	char text[4200];
	int n = snprintf(text, sizeof text, "marked %s pid=%d\n", arg, (int)getpid());
	int fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (write(fd, text, (size_t)n) != n) {
		close(fd);
		return -2;
	}
	close(fd);
	errno = 77; /* the app's errno must come back */
	return 42;
}

int rpg_test_exit(const char *arg)
{
	(void)arg;
	_exit(3);
}

int rpg_test_slow(const char *arg)
{
	struct timespec ts = {0, 600 * 1000 * 1000};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	return rpg_test_mark(arg);
}
