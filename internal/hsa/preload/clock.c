/*
 * clock.c: rpg_now(), CLOCK_BOOTTIME nanoseconds from the TSC.
 *
 * clock_gettime costs ~25 ns here and rdtsc ~10 ns; a traced call takes two
 * timestamps, so the TSC is what keeps API tracing near its 20 ns budget.
 * The TSC is only trusted when the CPU says it is invariant. Its rate is
 * learnt lazily (the constructor must stay free): until the first window of
 * RPG_CLOCK_FIRST_WINDOW_NS has passed, rpg_now() answers with clock_gettime
 * and remembers its first (tsc, ns) pair; afterwards it converts ticks with a
 * rate measured over everything seen so far, re-anchored so the error never
 * accumulates for long.
 *
 * Host records are ordered against the GPU's (a kernel's start read from its
 * signal is CLOCK_BOOTTIME, as the runtime converts it), so the conversion
 * must stay within a few hundred ns of CLOCK_BOOTTIME on a loaded node too:
 *  - A (tsc, ns) pair is the narrowest of a few tries, and one much wider
 *    than the narrowest seen is not used: a thread preempted between its
 *    rdtsc and its clock read would put the anchor, and the rate of every
 *    anchor after it, microseconds to milliseconds off.
 *  - An anchor extrapolates at most a quarter of the rate's baseline (and at
 *    most RPG_CLOCK_REANCHOR_NS), so the rate's error (the two pairs'
 *    uncertainty over the baseline) adds at most a quarter of a pair's width
 *    at the span's end. The spans grow with the baseline: 5 ms after the
 *    first window, 250 ms from about a second on.
 * internal/tracing's TestClockStaysOnBoottimeWhenReadsArePreempted delays
 * clock reads to make the preemption happen.
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

#include "attach_internal.h"
#include "rpg_internal.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#define RPG_CLOCK_FIRST_WINDOW_NS 20000000ull /* 20 ms */
#define RPG_CLOCK_REANCHOR_NS 250000000ull    /* 250 ms */
#define RPG_CLOCK_SLOTS 64                    /* a reader holds its anchor for 63 re-anchorings */
#define RPG_CLOCK_SAMPLE_TRIES 8
#define RPG_CLOCK_RETRY_NS 1000000ull /* after a pair too wide to anchor with */

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
static uint64_t g_min_width;    /* narrowest pair seen, in ticks */
static uint64_t g_retry_ns;     /* no anchoring before this, after a wide pair */

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
static uint64_t sample(uint64_t *tsc, uint64_t *ns)
{
    uint64_t t0 = __rdtsc();
    *ns = boottime_ns();
    uint64_t t1 = __rdtsc();
    *tsc = t0 + (t1 - t0) / 2;
    return t1 - t0 ? t1 - t0 : 1;
}

/* The narrowest of up to RPG_CLOCK_SAMPLE_TRIES pairs (it stops at one no
 * wider than twice the narrowest seen). Returns 0 when even that is more than
 * four times the narrowest seen: the caller anchors nothing with it. Called
 * with g_reanchoring held. */
static int narrow_sample(uint64_t *tsc, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < RPG_CLOCK_SAMPLE_TRIES; i++) {
        uint64_t t, n, w = sample(&t, &n);
        if (w < best) {
            best = w;
            *tsc = t;
            *ns = n;
        }
        if (g_min_width && best <= 2 * g_min_width)
            break;
    }
    if (!g_min_width || best < g_min_width)
        g_min_width = best;
    return best <= 4 * g_min_width;
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
    uint64_t span_ns = (ns - g_first_ns) / 4;
    if (span_ns > RPG_CLOCK_REANCHOR_NS)
        span_ns = RPG_CLOCK_REANCHOR_NS;
    a->span = (uint64_t)(((unsigned __int128)span_ns << 32) / mult);
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
    uint64_t ns = boottime_ns();
    if (!__atomic_exchange_n(&g_reanchoring, 1, __ATOMIC_ACQUIRE)) {
        uint64_t tsc = 0, at = ns;
        if (!g_first_taken || (ns - g_first_ns >= RPG_CLOCK_FIRST_WINDOW_NS && ns >= g_retry_ns)) {
            if (!narrow_sample(&tsc, &at)) {
                g_retry_ns = at + RPG_CLOCK_RETRY_NS;
            } else if (!g_first_taken) {
                g_first_tsc = tsc;
                g_first_ns = at;
                g_first_taken = 1;
            } else {
                anchor(tsc, at);
            }
            ns = at;
        }
        __atomic_store_n(&g_reanchoring, 0, __ATOMIC_RELEASE);
    }
    return ns;
}

uint64_t rpg__now_slow(void) { return slow_now(); }

void rpg__clock_start(void)
{
    const char *v = rpg_env(RPG_ENV_GO_TSC);
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
