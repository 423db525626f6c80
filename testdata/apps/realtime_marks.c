/* Makes ROCTx marks that carry the realtime clock and the host they were
 * made on: "rt=<CLOCK_REALTIME ns> host=<hostname> i=<n>", COUNT of them
 * (default 5), 20 ms apart. A test reads the marks' timestamps in a
 * timeline against the realtime they name: an independent check that
 * nodes' clocks were lined up (test/multinode). roctxMarkA is looked up at
 * run time, so the app needs no ROCm library: rocprof-go's preload library
 * provides it under --marker-trace.
 * usage: realtime_marks [COUNT]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef void (*mark_fn)(const char *);

int main(int argc, char **argv)
{
    int count = argc > 1 ? atoi(argv[1]) : 5;
    mark_fn mark = (mark_fn)dlsym(RTLD_DEFAULT, "roctxMarkA");
    if (!mark) {
        fprintf(stderr, "realtime_marks: no roctxMarkA (run under rocprof-go --marker-trace)\n");
        return 2;
    }
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    for (int i = 0; i < count; i++) {
        struct timespec ts;
        char msg[400];
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(msg, sizeof msg, "rt=%lld host=%s i=%d", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec, host, i);
        mark(msg);
        usleep(20000);
    }
    return 0;
}
