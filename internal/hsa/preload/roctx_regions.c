/*
 * roctx_regions.c: switching recording on and off while the application
 * runs, for --selected-regions (ROCTx driven) and --collection-period
 * (timer driven).
 *
 * Both act on rpg_domains, the mask every wrapper and the shim test before
 * recording: outside a region it keeps only the marker bit (so that the
 * region boundaries stay visible), inside it is the mask the recorder's
 * constructor computed. This file's constructor runs after recorder.c's
 * (same library, later in link order), so that mask is final here.
 *
 * With marker tracing on (ROCPROF_MARKER_API_TRACE=1), roctxProfilerPause
 * and roctxProfilerResume act as in rocprofv3, which stops and restarts its
 * whole tracing context on them whatever thread id they name: between a
 * Pause and the next Resume nothing is recorded but the Pause and Resume
 * calls themselves (no HIP or HSA call, kernel, copy, allocation, mark or
 * range; rpg_regions_paused tells the ROCTx interposers).
 *
 * ROCPROF_COLLECTION_PERIOD holds "DELAY:DURATION:REPEAT" triplets in
 * nanoseconds, separated by ';'. Each triplet in turn: REPEAT times (0:
 * forever) wait DELAY, record for DURATION, stop. A timer thread, started
 * only when the variable is set, does the waiting; a fork child starts its
 * own from the beginning. With ROCPROF_COLLECTION_PERIOD_TESTING true, as in
 * rocprofv3, the timer notes each step's begin and end (a string record per
 * step, RPG_STRTAB_PERIOD) and the CLI writes them to
 * <prefix>_collection_periods.log; rocprofv3's tests check the recorded
 * calls against those windows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "attach_internal.h"
#include "roctx_regions.h"

#define MAX_PERIODS 64

typedef struct period {
    uint64_t delay, duration, repeat;
} period;

static uint32_t g_all;  /* the domains a region records */
static int g_selected;  /* --selected-regions */
static int g_markers;   /* markers traced for output (not only for --kernel-rename) */
static int g_paused;    /* marker tracing: between a Pause and a Resume (atomic) */
static period g_periods[MAX_PERIODS];
static int g_nperiods;
static int g_log_periods;    /* ROCPROF_COLLECTION_PERIOD_TESTING */
static uint64_t g_log_line;  /* the timer thread's only: its next line's number */

static void set_recording(int on)
{
    __atomic_store_n(&rpg_domains, on ? g_all : (g_all & RPG_DOMAIN_MARKER), __ATOMIC_RELAXED);
}

void rpg_regions_select(uint64_t tid, int on)
{
    if (g_markers) {
        __atomic_store_n(&g_paused, !on, __ATOMIC_RELAXED);
        set_recording(on);
    } else if (g_selected && tid == 0) {
        set_recording(on);
    }
}

int rpg_regions_paused(void) { return __atomic_load_n(&g_paused, __ATOMIC_RELAXED); }

static void sleep_until(struct timespec *t, uint64_t ns)
{
    uint64_t total = (uint64_t)t->tv_nsec + ns % 1000000000ull;
    t->tv_sec += (time_t)(ns / 1000000000ull + total / 1000000000ull);
    t->tv_nsec = (long)(total % 1000000000ull);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL) == EINTR) {
    }
}

/* log_line records one line of the collection-period log. */
static void log_line(const char *label, uint64_t begin, uint64_t end)
{
    char line[80];
    int n = label[0] == '-' ? snprintf(line, sizeof line, "--")
                            : snprintf(line, sizeof line, "%s:%llu:%llu", label,
                                       (unsigned long long)begin, (unsigned long long)end);
    if (n > 0)
        rpg_record_string(RPG_STRTAB_PERIOD, g_log_line++, line, (size_t)n);
}

static void *period_timer(void *arg)
{
    (void)arg;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    for (int i = 0; i < g_nperiods; i++) {
        const period *p = &g_periods[i];
        for (uint64_t n = 0; p->repeat == 0 || n < p->repeat; n++) {
            if (!g_log_periods) {
                sleep_until(&t, p->delay);
                set_recording(1);
                sleep_until(&t, p->duration);
                set_recording(0);
                continue;
            }
            /* rocprofv3's labels: each step timed around what it does. */
            log_line("--", 0, 0);
            uint64_t b = rpg_now();
            sleep_until(&t, p->delay);
            log_line("delay", b, rpg_now());
            b = rpg_now();
            set_recording(1);
            log_line("start", b, rpg_now());
            b = rpg_now();
            sleep_until(&t, p->duration);
            log_line("duration", b, rpg_now());
            b = rpg_now();
            set_recording(0);
            log_line("stop", b, rpg_now());
        }
    }
    return NULL;
}

/* Parses the triplets; returns how many, or -1 on a malformed value (the
 * CLI validates the option, so this only guards against hand-set values). */
static int parse_periods(const char *s)
{
    int n = 0;
    while (*s && n < MAX_PERIODS) {
        char *end;
        uint64_t v[3];
        for (int k = 0; k < 3; k++) {
            errno = 0;
            v[k] = strtoull(s, &end, 10);
            if (errno || end == s || (k < 2 && *end != ':'))
                return -1;
            s = k < 2 ? end + 1 : end;
        }
        if (*s && *s != ';')
            return -1;
        g_periods[n++] = (period){v[0], v[1], v[2]};
        if (*s == ';')
            s++;
    }
    return n;
}

static void start_timer(void)
{
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 64 * 1024);
    /* The application's signals are not for this thread. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t th;
    if (pthread_create(&th, &a, period_timer, NULL) != 0)
        set_recording(1); /* better everything than nothing */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
}

static void restart_timer_in_child(void)
{
    g_log_line = 0;
    set_recording(0);
    start_timer();
}

static int env_on(const char *name)
{
    const char *v = rpg_env(name);
    return v && v[0] == '1' && v[1] == 0;
}

/* A boolean as rocprofv3's get_env reads it: true, yes, on, 1 (any case). */
static int env_true(const char *name)
{
    const char *v = rpg_env(name);
    if (!v)
        return 0;
    static const char *const yes[] = {"1", "true", "yes", "on", "y", "t"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        if (strcasecmp(v, yes[i]) == 0)
            return 1;
    return 0;
}

int rpg__regions_setup(int attach)
{
    g_all = rpg_domains;
    if (!g_all)
        return 0; /* not profiling: nothing to switch */
    g_markers = env_on(RPG_ENV_MARKER_API_TRACE);
    const char *periods = rpg_env(RPG_ENV_COLLECTION_PERIOD);
    if (periods && periods[0]) {
        /* Attach mode has no timer thread to stop at the detach. */
        if (attach)
            return -ENOTSUP;
        g_nperiods = parse_periods(periods);
        g_log_periods = env_true(RPG_ENV_COLLECTION_PERIOD_TESTING);
        if (g_nperiods > 0) {
            set_recording(0);
            start_timer();
            pthread_atfork(NULL, NULL, restart_timer_in_child);
            return 0;
        }
    }
    if (env_on(RPG_ENV_SELECTED_REGIONS)) {
        g_selected = 1;
        set_recording(0);
    }
    return 0;
}

__attribute__((constructor)) static void regions_init(void) { (void)rpg__regions_setup(0); }
