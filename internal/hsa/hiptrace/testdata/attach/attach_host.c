/* The attach tests' program: linked plainly against a fake HIP and a fake
 * ROCTx library (lazy binding), it does what the CLI's injector would (loads
 * the preload library RTLD_LOCAL and calls rpg_attach_start) when told to on
 * stdin, so that the test needs no ptrace. A background thread calls
 * hipDeviceSynchronize without pause, attached or not.
 *
 * Commands (one per line), each answered on stdout:
 *   attach <preload library> <configuration>  -> "started <rc>"
 *   run <n>      n iterations of push, hipGetDevice, mark, pop -> a summary
 *   count <n>    n calls of hipGetDeviceCount (bound lazily, first here)
 *   dlopen <lib> loads the late module         -> "loaded"
 *   late <n>     n calls of its late_call      -> a summary
 *   forkrun <preload library> <configuration> <go file> <n>
 *                forks a child that attaches itself (dlopen, rpg_attach_start:
 *                the library it inherited), waits for the go file, makes n
 *                hipGetDevice calls, then waits (10 s at most) until the
 *                library is unmapped: "child started <rc>", "child ran <n>
 *                devs=<sum>", "child unmapped <0|1>", then "forked <status>"
 *   spin <n>     waits for n more calls of the thread -> "spun"
 *   block        a thread calls hipStreamSynchronize, which waits inside
 *                until unblock                           -> "blocked"
 *   unblock      lets it return and joins it             -> "unblocked"
 *   fork         a child that calls hipDeviceSynchronize and exits
 *                                                        -> "forked <status>"
 *   time <n>     n hipGetDevice calls timed in 10k-call slices, the
 *                thread paused               -> "ns_per_call <median slice>"
 *   spinning     waits for the thread's first call -> "spinning"
 *   quit         stops the thread, prints its verdict, exits 0
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

int hipGetDevice(int *device);
int hipGetDeviceCount(int *count);
int hipDeviceSynchronize(void);
int hipStreamSynchronize(void *stream);
extern int fakehip_block, fakehip_inside;
void roctxMarkA(const char *message);
int roctxRangePushA(const char *message);
int roctxRangePop(void);

static int library_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char l[4096];
    int found = 0;
    while (f && fgets(l, sizeof l, f))
        found |= strstr(l, "librocprof-go-preload.so") != NULL;
    if (f)
        fclose(f);
    return found;
}

static void forkrun(const char *lib, const char *conf, const char *go, long n)
{
    pid_t c = fork();
    if (c == 0) {
        void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        int (*start)(const char *) = h ? (int (*)(const char *))dlsym(h, "rpg_attach_start") : NULL;
        printf("child started %d\n", start ? start(conf) : -9999);
        while (access(go, F_OK) != 0)
            usleep(1000);
        long devs = 0;
        for (long i = 0; i < n; i++) {
            int d = -1;
            if (hipGetDevice(&d) == 0)
                devs += d;
        }
        printf("child ran %ld devs=%ld\n", n, devs);
        int i = 0;
        while (library_mapped() && i++ < 10000)
            usleep(1000);
        printf("child unmapped %d\n", !library_mapped());
        _exit(0);
    }
    int st = -1;
    if (c > 0)
        waitpid(c, &st, 0);
    printf("forked %d\n", c > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static void *blocked_call(void *arg)
{
    (void)arg;
    hipStreamSynchronize(NULL);
    return NULL;
}

static int stop;
static int paused; /* time: the thread stops calling meanwhile */
static int bad;
static unsigned long syncs;

static void *spin(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        if (__atomic_load_n(&paused, __ATOMIC_RELAXED)) {
            usleep(1000);
            continue;
        }
        if (hipDeviceSynchronize() != 0)
            bad = 1;
        __atomic_add_fetch(&syncs, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    pthread_t th;
    if (pthread_create(&th, NULL, spin, NULL) != 0)
        return 2;
    int (*late_call)(void) = NULL;
    pthread_t blocked;
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        char a[2048], b[2048], go[1024];
        long n;
        if (sscanf(line, "attach %2047s %2047s", a, b) == 2) {
            void *h = dlopen(a, RTLD_NOW | RTLD_LOCAL);
            int (*start)(const char *) = h ? (int (*)(const char *))dlsym(h, "rpg_attach_start") : NULL;
            /* As the injector: the library owns the reference from here,
             * whatever the start returns. */
            printf("started %d\n", start ? start(b) : -9999);
        } else if (sscanf(line, "run %ld", &n) == 1) {
            long levels = 0, pops = 0, devs = 0;
            for (long i = 0; i < n; i++) {
                levels += roctxRangePushA("iteration");
                int d = -1;
                if (hipGetDevice(&d) == 0)
                    devs += d;
                roctxMarkA("mark");
                pops += roctxRangePop();
            }
            printf("ran %ld levels=%ld devs=%ld pops=%ld\n", n, levels, devs, pops);
        } else if (sscanf(line, "count %ld", &n) == 1) {
            long total = 0;
            for (long i = 0; i < n; i++) {
                int c = 0;
                hipGetDeviceCount(&c);
                total += c;
            }
            printf("counted %ld\n", total);
        } else if (sscanf(line, "dlopen %2047s", a) == 1) {
            void *h = dlopen(a, RTLD_NOW | RTLD_LOCAL);
            late_call = h ? (int (*)(void))dlsym(h, "late_call") : NULL;
            printf("%s\n", late_call ? "loaded" : dlerror());
        } else if (sscanf(line, "late %ld", &n) == 1) {
            long devs = 0;
            for (long i = 0; i < n && late_call; i++)
                devs += late_call();
            printf("late %ld devs=%ld\n", n, devs);
        } else if (sscanf(line, "forkrun %2047s %2047s %1023s %ld", a, b, go, &n) == 4) {
            forkrun(a, b, go, n);
        } else if (sscanf(line, "spin %ld", &n) == 1) {
            unsigned long from = __atomic_load_n(&syncs, __ATOMIC_RELAXED);
            while (__atomic_load_n(&syncs, __ATOMIC_RELAXED) - from < (unsigned long)n)
                sched_yield();
            printf("spun\n");
        } else if (strcmp(line, "block") == 0) {
            __atomic_store_n(&fakehip_block, 1, __ATOMIC_SEQ_CST);
            if (pthread_create(&blocked, NULL, blocked_call, NULL) != 0)
                return 3;
            while (!__atomic_load_n(&fakehip_inside, __ATOMIC_SEQ_CST))
                sched_yield();
            printf("blocked\n");
        } else if (strcmp(line, "unblock") == 0) {
            __atomic_store_n(&fakehip_block, 0, __ATOMIC_SEQ_CST);
            pthread_join(blocked, NULL);
            printf("unblocked\n");
        } else if (strcmp(line, "fork") == 0) {
            pid_t c = fork();
            if (c == 0)
                _exit(hipDeviceSynchronize() == 0 ? 0 : 1);
            int st = -1;
            if (c > 0)
                waitpid(c, &st, 0);
            printf("forked %d\n", c > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        } else if (sscanf(line, "time %ld", &n) == 1) {
            struct timespec a0, a1;
            int d;
            __atomic_store_n(&paused, 1, __ATOMIC_RELAXED);
            usleep(2000);
            /* The median 10k-call slice: a slice that met a spool page
             * fault or a preemption is an outlier on a shared machine. */
            enum { SLICE = 10000, MAXS = 1000 };
            double sl[MAXS];
            int ns_ = 0;
            for (long done = 0; done + SLICE <= n && ns_ < MAXS; done += SLICE) {
                clock_gettime(CLOCK_MONOTONIC, &a0);
                for (long i = 0; i < SLICE; i++)
                    hipGetDevice(&d);
                clock_gettime(CLOCK_MONOTONIC, &a1);
                sl[ns_++] = ((double)(a1.tv_sec - a0.tv_sec) * 1e9 + (double)(a1.tv_nsec - a0.tv_nsec)) / SLICE;
            }
            __atomic_store_n(&paused, 0, __ATOMIC_RELAXED);
            for (int i = 1; i < ns_; i++) /* insertion sort: a few hundred */
                for (int j = i; j > 0 && sl[j] < sl[j - 1]; j--) {
                    double x = sl[j];
                    sl[j] = sl[j - 1];
                    sl[j - 1] = x;
                }
            printf("ns_per_call %.2f\n", ns_ ? sl[ns_ / 2] : 0.0);
        } else if (strcmp(line, "spinning") == 0) {
            while (__atomic_load_n(&syncs, __ATOMIC_RELAXED) == 0)
                sched_yield();
            printf("spinning\n");
        } else if (strcmp(line, "quit") == 0) {
            break;
        } else {
            printf("unknown %s\n", line);
        }
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    pthread_join(th, NULL);
    printf("spinner %s\n", bad || syncs == 0 ? "failed" : "ok");
    return 0;
}
