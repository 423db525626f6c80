/*
 * clock.c: rpg_now(), CLOCK_BOOTTIME nanoseconds from the TSC.
 *
 * clock_gettime costs ~25 ns here and rdtsc ~10 ns; a traced call takes two
 * timestamps, so the TSC is what keeps API tracing near its 20 ns budget.
 * The TSC is only trusted when the CPU says it is invariant. Its rate is
 * learnt lazily (the constructor must stay free): until the first window of
 * RPG_CLOCK_FIRST_WINDOW_NS has passed, rpg_now() answers with clock_gettime
 * and remembers its first (tsc, ns) pair; afterwards it converts ticks with a
 * rate measured over everything seen so far, re-anchored every
 * RPG_CLOCK_REANCHOR_NS so the error never accumulates for long.
 *
 * API records keep raw ticks instead (rpg__stamp, rpg_internal.h); the
 * recorder writes the anchor they need into their chunk (rpg_clock_rec) and
 * the reader converts them the same way.
 */
#define _GNU_SOURCE
#define RPG_RECORDER_IMPL
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "rpg_internal.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#define RPG_CLOCK_FIRST_WINDOW_NS 20000000ull /* 20 ms */
#define RPG_CLOCK_REANCHOR_NS 250000000ull    /* 250 ms */
#define RPG_CLOCK_SLOTS 4

/* One immutable conversion (rpg_clock_anchor); readers load a pointer to it,
 * the re-anchoring thread fills the next slot and publishes it, so readers
 * never see a mix. rpg_internal.h inlines the fast path. */
typedef rpg_clock_anchor clock_anchor;

static clock_anchor g_slots[RPG_CLOCK_SLOTS];
clock_anchor *rpg__clock; /* NULL until calibrated */
uint64_t rpg__clock_gen;  /* atomic: rpg__clock->gen */
#define g_anchor rpg__clock
static int g_tsc_state;          /* 0 unknown, 1 invariant, -1 unusable */
static uint64_t g_first_tsc, g_first_ns;
static int g_first_taken;
static int g_reanchoring;
static unsigned g_next_slot;
static uint64_t g_gen; /* anchors made so far */

static uint64_t boottime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
static int tsc_invariant(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1u;
}

/* A (tsc, ns) pair with the tick taken in the middle of the clock read. */
static void sample(uint64_t *tsc, uint64_t *ns)
{
    uint64_t t0 = __rdtsc();
    *ns = boottime_ns();
    uint64_t t1 = __rdtsc();
    *tsc = t0 + (t1 - t0) / 2;
}

static void anchor(uint64_t tsc, uint64_t ns)
{
    if (tsc <= g_first_tsc || ns <= g_first_ns)
        return;
    unsigned __int128 num = (unsigned __int128)(ns - g_first_ns) << 32;
    uint64_t mult = (uint64_t)(num / (tsc - g_first_tsc));
    if (mult == 0)
        return;
    clock_anchor *a = &g_slots[g_next_slot++ % RPG_CLOCK_SLOTS];
    a->tsc = tsc;
    a->ns = ns;
    a->mult = mult;
    a->span = (uint64_t)(((unsigned __int128)RPG_CLOCK_REANCHOR_NS << 32) / mult);
    a->gen = ++g_gen;
    /* The gen first: a thread that has seen this anchor (and stamped ticks
     * with it) then never sees an older gen, which a chunk without any CLOCK
     * record (clock_gen 0) could match. */
    __atomic_store_n(&rpg__clock_gen, a->gen, __ATOMIC_RELEASE);
    __atomic_store_n(&g_anchor, a, __ATOMIC_RELEASE);
}

static uint64_t slow_now(void)
{
    int st = __atomic_load_n(&g_tsc_state, __ATOMIC_RELAXED);
    if (st == 0) {
        st = tsc_invariant() ? 1 : -1;
        __atomic_store_n(&g_tsc_state, st, __ATOMIC_RELAXED);
    }
    if (st < 0)
        return boottime_ns();
    uint64_t tsc, ns;
    sample(&tsc, &ns);
    if (!__atomic_exchange_n(&g_reanchoring, 1, __ATOMIC_ACQUIRE)) {
        if (!g_first_taken) {
            g_first_tsc = tsc;
            g_first_ns = ns;
            g_first_taken = 1;
        } else if (ns - g_first_ns >= RPG_CLOCK_FIRST_WINDOW_NS) {
            anchor(tsc, ns);
        }
        __atomic_store_n(&g_reanchoring, 0, __ATOMIC_RELEASE);
    }
    return ns;
}

uint64_t rpg__now_slow(void) { return slow_now(); }

void rpg__clock_start(void)
{
    const char *v = getenv(RPG_ENV_GO_TSC);
    if (v && (v[0] == '0' || v[0] == '1') && v[1] == 0)
        __atomic_store_n(&g_tsc_state, v[0] == '1' ? 1 : -1, __ATOMIC_RELAXED);
    (void)slow_now();
}
#else
uint64_t rpg__now_slow(void) { return boottime_ns(); }

void rpg__clock_start(void) {}
#endif

uint64_t rpg_now(void) { return rpg__now_fast(); }

uint64_t rpg__stamp_ns(const rpg_clock_anchor *a, uint64_t stamp)
{
    if (stamp & RPG_STAMP_NS)
        return stamp & ~RPG_STAMP_NS;
    if (!a)
        return rpg__now_slow(); /* not reached: ticks only come with an anchor */
    if (stamp >= a->tsc)
        return a->ns + (uint64_t)(((unsigned __int128)(stamp - a->tsc) * a->mult) >> 32);
    return a->ns - (uint64_t)(((unsigned __int128)(a->tsc - stamp) * a->mult) >> 32);
}

int rpg_clock_uses_tsc(void)
{
    return __atomic_load_n(&g_anchor, __ATOMIC_ACQUIRE) != NULL;
}
