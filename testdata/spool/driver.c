/*
 * driver.c: writes known records through the preload library's recorder, so
 * internal/tracing's tests can check what a reader gets back.
 *
 *   driver MODE THREADS RECORDS
 *
 * Every thread t (0-based) writes RECORDS HIP API records with
 * function = t, correlation_id = i (0..RECORDS-1), start = i, end = i + 1.
 * The main thread first writes one record of every other kind ("fixture").
 * MODE decides how the process ends:
 *   return   return from main                     exit    _exit(3)
 *   abort    abort()                              torn    leave one record unpublished, _exit
 *   fork     THREADS forked children (each its own spool), then the threads
 *   kill     write, print "ready" when every thread has written RECORDS, then
 *            keep writing until SIGKILLed
 *   signal   a SIGALRM handler records markers while the threads write
 *   ticks    the threads (and a SIGALRM handler) record traced calls through
 *            rpg_api_begin/end, after the clock has calibrated
 *   churn    THREADS × 100 short-lived threads one after another, each writing
 *            RECORDS records (their chunks are reused, not one per thread)
 *   decoy    after the fixture, put another file under the spool's descriptor
 *            (as an app closing all descriptors and opening its own would),
 *            then the threads write; the decoy must stay empty
 *   bench    print ns per record and per rpg_now() (no fixture)
 *   clock    for RECORDS ms, compare rpg_now() with CLOCK_BOOTTIME read by
 *            the system call around it; print the largest difference (no
 *            fixture)
 * With DRIVER_HELPER=1 in the environment, every writer also enters a traced
 * API call (rpg_api_begin, no record) every 256 records, which is where the
 * recorder starts its pre-faulting helper thread; after the threads are done
 * the driver prints "helper running" if that thread exists.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rpg_recorder.h"

static long g_records;
static volatile sig_atomic_t g_signals;
static volatile int g_forever;
static int g_written; /* threads done with their first RECORDS records */

static int g_helper;

static void api_entry(uint64_t i)
{
    if (g_helper && (i & 255) == 0) {
        rpg_api_span s;
        rpg_api_begin(&s);
    }
}

static void *writer(void *arg)
{
    uint32_t t = (uint32_t)(uintptr_t)arg;
    for (long i = 0; i < g_records; i++) {
        api_entry((uint64_t)i);
        rpg_record_api(RPG_KIND_HIP_API, RPG_API_HIP_RUNTIME, t, (uint64_t)i, (uint64_t)i,
                       (uint64_t)i + 1, NULL, 0);
    }
    __atomic_add_fetch(&g_written, 1, __ATOMIC_RELEASE);
    if (g_forever) {
        for (uint64_t i = (uint64_t)g_records;; i++) {
            api_entry(i);
            rpg_record_api(RPG_KIND_HIP_API, RPG_API_HIP_RUNTIME, t, i, i, i + 1, NULL, 0);
        }
    }
    return NULL;
}

/* Whether the recorder's pre-faulting thread runs in this process. */
static int helper_running(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 0;
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[300], comm[32] = {0};
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(comm, sizeof comm, f) && !strncmp(comm, "rpg-prefault", 12))
            found = 1;
        fclose(f);
    }
    closedir(d);
    return found;
}

static void run_threads(int n)
{
    pthread_t th[64];
    for (int t = 0; t < n; t++)
        pthread_create(&th[t], NULL, writer, (void *)(uintptr_t)t);
    for (int t = 0; t < n; t++)
        pthread_join(th[t], NULL);
}

/* One record of each non-API kind, with values the Go test knows. */
static void fixture(void)
{
    static const char sym[] = "_Z15addition_kernelPfPKfS1_i.kd";
    rpg_record_string(RPG_API_HIP_RUNTIME, 7, "hipFixtureCall", 14);
    rpg_record_marker(RPG_API_MARKER_CORE_RANGE, RPG_MARKER_THREAD_RANGE, 42, 100, 200, 0,
                      "outer range", 11);
    rpg_record_api(RPG_KIND_HSA_API, RPG_API_HSA_CORE, 3, 43, 110, 120, "argblob", 7);

    rpg_kernel_symbol_rec ks = {.kernel_id = 5, .code_object_id = 1, .kernel_object = 0x1000,
                                .kernarg_size = 32, .group_segment_size = 100,
                                .private_segment_size = 16, .vgpr_count = 8, .agpr_count = 4,
                                .sgpr_count = 16};
    rpg_record_kernel_symbol(&ks, sym, sizeof sym - 1);

    rpg_kernel_dispatch_rec kd = {.agent_node = 1, .queue_id = 1, .stream_id = 2,
                                  .dispatch_id = 1, .kernel_id = 5, .correlation_id = 44,
                                  .start_ns = 1000, .end_ns = 2000, .grid = {1024, 1, 1},
                                  .workgroup = {64, 1, 1}, .group_segment_size = 100,
                                  .private_segment_size = 16, .vgpr_count = 8, .agpr_count = 4,
                                  .sgpr_count = 16};
    rpg_record_kernel_dispatch(&kd);

    rpg_memory_copy_rec mc = {.direction = RPG_COPY_HOST_TO_DEVICE, .src_agent_node = 0,
                              .dst_agent_node = 1, .bytes = 4096, .stream_id = 2,
                              .correlation_id = 45, .start_ns = 300, .end_ns = 400,
                              .src_address = 0x7000, .dst_address = 0x8000};
    rpg_record_memory_copy(&mc);

    rpg_memory_allocation_rec ma = {.operation = RPG_ALLOC_ALLOCATE, .agent_node = 1,
                                    .address = 0x7ffb26354000ull, .size = 1 << 20,
                                    .correlation_id = 46, .start_ns = 50, .end_ns = 60};
    rpg_record_memory_allocation(&ma);

    rpg_scratch_memory_rec sm = {.operation = RPG_SCRATCH_ALLOC, .agent_node = 1, .flags = 1,
                                 .queue_id = 1, .size = 65536, .start_ns = 70, .end_ns = 80};
    rpg_record_scratch_memory(&sm);

    rpg_code_object_rec co = {.code_object_id = 1, .operation = RPG_CODE_OBJECT_LOAD,
                              .agent_node = 1, .storage_type = 2, .load_base = 0x10000,
                              .load_size = 8192, .timestamp_ns = 10};
    rpg_record_code_object(&co, "file:///app#offset=0&size=8192", 30);

    rpg_agent_info_rec ag = {.node_id = 1, .logical_node_id = 1, .agent_type = RPG_AGENT_GPU,
                             .simd_count = 4, .max_waves_per_simd = 10, .wave_front_size = 64,
                             .cu_count = 1, .gfx_target_version = 90008,
                             .workgroup_max_dim = {1024, 1024, 1024},
                             .grid_max_dim = {4294967295u, 4294967295u, 4294967295u}};
    strcpy(ag.name, "gfx908");
    strcpy(ag.vendor_name, "AMD");
    strcpy(ag.product_name, "Virtual GPU");
    rpg_record_agent_info(&ag);

    rpg_counter_dim dims[2] = {{1, 0}, {2, 3}};
    rpg_counter_sample_rec cs = {.dispatch_id = 1, .counter_id = 9, .value = 16384.0,
                                 .agent_node = 1, .dim_count = 2};
    rpg_record_counter_sample(&cs, dims, "SQ_WAVES", 8);
}

/* "ticks" mode: traced calls through rpg_api_begin/end, whose records keep
 * TSC ticks (version 3) behind per-chunk clock records. */
static void *tick_writer(void *arg)
{
    uint32_t t = (uint32_t)(uintptr_t)arg;
    for (long i = 0; i < g_records; i++) {
        rpg_api_span s;
        rpg_api_begin(&s);
        rpg_api_end(&s, RPG_KIND_HSA_API, RPG_API_HSA_CORE, t);
    }
    return NULL;
}

static void on_alarm_ticks(int sig)
{
    (void)sig;
    rpg_api_span s;
    rpg_api_begin(&s);
    rpg_api_end(&s, RPG_KIND_HSA_API, RPG_API_HSA_CORE, 999);
    g_signals++;
}

static void on_alarm(int sig)
{
    (void)sig;
    rpg_record_marker(RPG_API_MARKER_CORE_RANGE, RPG_MARKER_MARK, 0, 1, 1, 0, "tick", 4);
    g_signals++;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double user_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6;
}

/* Wall time per call, and this thread's CPU time per call (steadier on a
 * loaded machine; it includes the kernel's page-fault work). */
static void bench(void)
{
    /* Warm up: the spool is created and the clock calibrates. */
    for (int i = 0; i < 100000; i++)
        rpg_record_api(RPG_KIND_HIP_API, RPG_API_HIP_RUNTIME, 0, 0, rpg_now(), rpg_now(), NULL,
                       0);
    struct timespec pause = {0, 30 * 1000 * 1000};
    nanosleep(&pause, NULL);
    (void)rpg_now();
    long n = g_records;
    double t0 = now_s();
    uint64_t sink = 0;
    for (long i = 0; i < n; i++)
        sink += rpg_now();
    double t1 = now_s();
    double c1 = cpu_s(), u1 = user_s();
    for (long i = 0; i < n; i++) {
        uint64_t c = rpg_correlation_next();
        uint64_t s = rpg_now();
        rpg_record_api(RPG_KIND_HSA_API, RPG_API_HSA_CORE, 1, c, s, rpg_now(), NULL, 0);
    }
    double t2 = now_s();
    double c2 = cpu_s(), u2 = user_s();
    printf("now_ns %.2f\nrecord_ns %.2f\nrecord_cpu_ns %.2f\nrecord_user_ns %.2f\ntsc %d\n"
           "sink %llu\n",
           (t1 - t0) * 1e9 / (double)n, (t2 - t1) * 1e9 / (double)n, (c2 - c1) * 1e9 / (double)n,
           (u2 - u1) * 1e9 / (double)n, rpg_clock_uses_tsc(), (unsigned long long)(sink & 1));
}

/* n children, each writing g_records HIP records as function 100 + its index. */
static void fork_writers(int n)
{
    for (int c = 0; c < n; c++) {
        pid_t p = fork();
        if (p == 0) {
            writer((void *)(uintptr_t)(100 + c));
            _exit(0);
        }
    }
    while (wait(NULL) > 0)
        ;
}

/* CLOCK_BOOTTIME from the kernel itself: neither the vDSO nor an
 * LD_PRELOADed clock_gettime (the test's delaying one) sees this read. */
static uint64_t sys_boottime_ns(void)
{
    struct timespec ts;
    syscall(SYS_clock_gettime, CLOCK_BOOTTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* "clock" mode: how far rpg_now() strays outside the CLOCK_BOOTTIME reads
 * that bracket it, over ms milliseconds (the calibration's first window and
 * the re-anchorings after it). */
static void clock_check(long ms)
{
    uint64_t start = sys_boottime_ns(), worst = 0, worst_at = 0;
    long checks = 0;
    for (;;) {
        uint64_t a = sys_boottime_ns();
        uint64_t r = rpg_now();
        uint64_t b = sys_boottime_ns();
        uint64_t err = r < a ? a - r : r > b ? r - b : 0;
        if (err > worst) {
            worst = err;
            worst_at = a - start;
        }
        checks++;
        if (b - start > (uint64_t)ms * 1000000ull)
            break;
    }
    printf("tsc %d checks %ld worst %llu at %llu\n", rpg_clock_uses_tsc(), checks, (unsigned long long)worst,
           (unsigned long long)worst_at);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: driver MODE THREADS RECORDS\n");
        return 2;
    }
    const char *mode = argv[1];
    int threads = atoi(argv[2]);
    g_records = atol(argv[3]);
    if (threads < 0 || threads > 64)
        return 2;

    if (!strcmp(mode, "bench")) {
        bench();
        return 0;
    }
    if (!strcmp(mode, "clock")) {
        clock_check(g_records);
        return 0;
    }
    if (!strcmp(mode, "truncate")) {
        /* The process's first record and a later one carry a message longer
         * than the largest record: both are stored cut, both counted. */
        static char big[100000];
        memset(big, 'm', sizeof big);
        rpg_record_marker(RPG_API_MARKER_CORE_RANGE, RPG_MARKER_MARK, 0, 1, 1, 0, big, sizeof big);
        rpg_record_marker(RPG_API_MARKER_CORE_RANGE, RPG_MARKER_MARK, 0, 2, 2, 0, big, sizeof big);
        return 0;
    }
    const char *h = getenv("DRIVER_HELPER");
    g_helper = h && !strcmp(h, "1");
    if (!strcmp(mode, "fork-idle")) {
        /* The children fork before this process recorded anything: the fork
         * handlers had nothing to reset, the children still write their own
         * spools under their own pids. */
        fork_writers(threads);
        fixture();
        run_threads(threads);
        return 0;
    }
    fixture();
    if (!strcmp(mode, "fork")) {
        fork_writers(threads);
        run_threads(threads);
        if (g_helper && helper_running())
            printf("helper running\n");
        return 0;
    }
    if (!strcmp(mode, "signal")) {
        signal(SIGALRM, on_alarm);
        struct itimerval it = {{0, 200}, {0, 200}};
        setitimer(ITIMER_REAL, &it, NULL);
        run_threads(threads);
        struct itimerval off = {{0, 0}, {0, 0}};
        setitimer(ITIMER_REAL, &off, NULL);
        signal(SIGALRM, SIG_IGN);
        printf("signals %d\n", (int)g_signals);
        fflush(stdout);
        return 0;
    }
    if (!strcmp(mode, "ticks")) {
        /* Let the clock calibrate (20 ms) so that the calls get tick stamps. */
        (void)rpg_now();
        struct timespec calib = {0, 30 * 1000 * 1000};
        nanosleep(&calib, NULL);
        (void)rpg_now();
        uint64_t before = rpg_now();
        signal(SIGALRM, on_alarm_ticks);
        struct itimerval it = {{0, 200}, {0, 200}};
        setitimer(ITIMER_REAL, &it, NULL);
        pthread_t th[64];
        for (int t = 0; t < threads; t++)
            pthread_create(&th[t], NULL, tick_writer, (void *)(uintptr_t)t);
        for (int t = 0; t < threads; t++)
            pthread_join(th[t], NULL);
        struct itimerval off = {{0, 0}, {0, 0}};
        setitimer(ITIMER_REAL, &off, NULL);
        signal(SIGALRM, SIG_IGN);
        printf("signals %d tsc %d before %llu after %llu\n", (int)g_signals, rpg_clock_uses_tsc(),
               (unsigned long long)before, (unsigned long long)rpg_now());
        fflush(stdout);
        return 0;
    }
    if (!strcmp(mode, "decoy")) {
        char link[PATH_MAX], path[64];
        const char *spool = rpg_spool_path();
        for (int fd = 0; fd < 4096 && spool; fd++) {
            snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
            ssize_t n = readlink(path, link, sizeof link - 1);
            if (n <= 0)
                continue;
            link[n] = 0;
            if (strcmp(link, spool) == 0) {
                int decoy = open(getenv("DECOY"), O_RDWR | O_CREAT | O_TRUNC, 0600);
                dup2(decoy, fd);
                close(decoy);
                printf("decoy on fd %d\n", fd);
            }
        }
        run_threads(threads);
        return 0;
    }
    if (!strcmp(mode, "churn")) {
        for (int round = 0; round < 100; round++)
            run_threads(threads);
        return 0;
    }
    if (!strcmp(mode, "kill")) {
        g_forever = 1;
        pthread_t th[64];
        for (int t = 0; t < threads; t++)
            pthread_create(&th[t], NULL, writer, (void *)(uintptr_t)t);
        /* "ready" once every thread has published RECORDS records. */
        struct timespec ms = {0, 1000000};
        while (__atomic_load_n(&g_written, __ATOMIC_ACQUIRE) < threads)
            nanosleep(&ms, NULL);
        printf("ready\n");
        fflush(stdout);
        for (;;)
            pause();
    }
    run_threads(threads);
    if (g_helper && helper_running()) {
        printf("helper running\n");
        fflush(stdout);
    }
    if (!strcmp(mode, "torn")) {
        rpg_api_rec *r = rpg_record_reserve(RPG_KIND_HIP_API, sizeof *r);
        r->function = 999;
        _exit(0);
    }
    if (!strcmp(mode, "exit"))
        _exit(3);
    if (!strcmp(mode, "abort"))
        abort();
    return 0;
}
