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

int hipGetDevice(int *device);
int hipGetDeviceCount(int *count);
int hipDeviceSynchronize(void);
void roctxMarkA(const char *message);
int roctxRangePushA(const char *message);
int roctxRangePop(void);

static int stop;
static int bad;
static unsigned long syncs;

static void *spin(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
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
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        char a[2048], b[2048];
        long n;
        if (sscanf(line, "attach %2047s %2047s", a, b) == 2) {
            void *h = dlopen(a, RTLD_NOW | RTLD_LOCAL);
            int (*start)(const char *) = h ? (int (*)(const char *))dlsym(h, "rpg_attach_start") : NULL;
            int rc = start ? start(b) : -9999;
            if (h && rc != 0)
                dlclose(h); /* as the injector does when the start fails */
            printf("started %d\n", rc);
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
