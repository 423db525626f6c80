/*
 * rpg_internal.h: declarations shared by the preload library's own sources,
 * not exported to the shim or the interposers.
 *
 * The hot path of a traced call (correlation id, two timestamps, one API
 * record) is inlined here for the library's own callers (the HIP and ROCTx
 * wrappers): through the exported functions every step would be a PLT call,
 * ~1-2 ns each, six of them per traced call. The public names below are
 * redirected to the inline versions in every source file of the library
 * except the recorder's own (which defines RPG_RECORDER_IMPL and keeps the
 * exported definitions for the shim and other users).
 */
#ifndef RPG_INTERNAL_H
#define RPG_INTERNAL_H

#include <string.h>

#include "rpg_recorder.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define RPG_HIDDEN __attribute__((visibility("hidden")))

/* Longest argument blob the inline path writes (HIP's are <= 384 bytes). */
#define RPG_API2_MAX_ARGS 1024u

/* ---- clock (clock.c) ---------------------------------------------------- */

/* One immutable TSC conversion; readers load a pointer to it. */
typedef struct rpg_clock_anchor {
    uint64_t tsc;
    uint64_t ns;
    uint64_t mult;        /* ns per tick, 32.32 fixed point */
    uint64_t reanchor_at; /* tick count after which to re-anchor */
} rpg_clock_anchor;

extern RPG_HIDDEN rpg_clock_anchor *rpg__clock; /* NULL until calibrated */
RPG_HIDDEN uint64_t rpg__now_slow(void);

static inline __attribute__((always_inline)) uint64_t rpg__now_fast(void)
{
#if defined(__x86_64__)
    rpg_clock_anchor *a = __atomic_load_n(&rpg__clock, __ATOMIC_ACQUIRE);
    if (__builtin_expect(a != NULL, 1)) {
        uint64_t t = __rdtsc();
        if (__builtin_expect(t < a->reanchor_at && t >= a->tsc, 1))
            return a->ns + (uint64_t)(((unsigned __int128)(t - a->tsc) * a->mult) >> 32);
    }
#endif
    return rpg__now_slow();
}

/* ---- per-thread recorder state (recorder.c) ----------------------------- */

typedef struct rpg_cursor {
    char *cur;
    char *end;
} rpg_cursor;

/* One writing thread's state. depth lets a signal handler that records while
 * the thread is mid-record use a second cursor instead of corrupting the
 * first; deeper nesting drops the record (and counts it). */
typedef struct rpg_thread_state {
    rpg_cursor c[2];
    uint32_t depth;
    uint32_t tid;
    uint64_t correlation;
    uint32_t holds_lock; /* a signal handler on this thread must not wait for the spool lock */
} rpg_thread_state;

extern RPG_HIDDEN __thread __attribute__((tls_model("initial-exec"))) rpg_thread_state rpg__t;
extern RPG_HIDDEN uint64_t rpg__correlation; /* atomic: last id handed out */

RPG_HIDDEN int rpg__record_api_slow(uint16_t kind, uint32_t domain, uint32_t function,
                                    uint64_t correlation_id, uint64_t start_ns, uint64_t end_ns,
                                    const void *args, uint32_t args_size);

static inline __attribute__((always_inline)) uint64_t rpg__correlation_next(void)
{
    return __atomic_add_fetch(&rpg__correlation, 1, __ATOMIC_RELAXED);
}

static inline __attribute__((always_inline)) uint64_t rpg__correlation_current(void)
{
    return rpg__t.correlation;
}

static inline __attribute__((always_inline)) uint64_t rpg__correlation_set(uint64_t id)
{
    uint64_t prev = rpg__t.correlation;
    rpg__t.correlation = id;
    return prev;
}

/* The compact API record (rpg_api_rec2) when everything fits it, on the
 * thread's current chunk; anything else (no chunk yet, chunk full, nested in
 * a signal handler's record, values too large) goes through the exported
 * function. Same publication protocol as rpg_record_reserve/publish. */
static inline __attribute__((always_inline)) int
rpg__record_api_fast(uint16_t kind, uint32_t domain, uint32_t function, uint64_t correlation_id,
                     uint64_t start_ns, uint64_t end_ns, const void *args, uint32_t args_size)
{
    uint32_t d = rpg__t.depth;
    uint64_t dur = end_ns - start_ns;
    if (__builtin_expect(d < 2 && args_size <= RPG_API2_MAX_ARGS && function <= 0xffffu &&
                             domain <= 0xffu && end_ns >= start_ns && dur <= 0xffffffffu,
                         1)) {
        uint32_t size = (uint32_t)(sizeof(rpg_api_rec2) + args_size + 7u) & ~7u;
        rpg__t.depth = d + 1;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        rpg_cursor *c = &rpg__t.c[d];
        char *p = c->cur;
        if (__builtin_expect(p != NULL && (size_t)(c->end - p) >= size, 1)) {
            c->cur = p + size;
            rpg_api_rec2 *r = (rpg_api_rec2 *)p;
            /* The size first: a reader steps over a record the process died
             * writing. */
            __atomic_store_n(&r->h.size, size, __ATOMIC_RELAXED);
            r->function = (uint16_t)function;
            r->domain = (uint8_t)domain;
            r->args_pad = (uint8_t)(size - sizeof(rpg_api_rec2) - args_size);
            r->duration_ns = (uint32_t)dur;
            r->correlation_id = correlation_id;
            r->start_ns = start_ns;
            if (args_size)
                memcpy(r + 1, args, args_size);
            uint64_t w = (uint64_t)size | (uint64_t)kind << 32 | (uint64_t)2 << 48 |
                         (uint64_t)RPG_COMMIT << 56;
            __atomic_store_n((uint64_t *)p, w, __ATOMIC_RELEASE);
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
            rpg__t.depth = d;
            return 0;
        }
        rpg__t.depth = d;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    }
    return rpg__record_api_slow(kind, domain, function, correlation_id, start_ns, end_ns, args,
                                args_size);
}

/* The spool's pre-faulting helper thread (recorder.c): wanted once a thread
 * records a lot, started from a traced API call's entry (never from inside a
 * record, which may be a signal handler's). One load and a branch. */
extern RPG_HIDDEN int rpg__helper;
RPG_HIDDEN void rpg__helper_start(void);

static inline __attribute__((always_inline)) void rpg__helper_poll(void)
{
    if (__builtin_expect(__atomic_load_n(&rpg__helper, __ATOMIC_RELAXED) == 1, 0))
        rpg__helper_start();
}

#ifndef RPG_RECORDER_IMPL
#define rpg_now rpg__now_fast
#define rpg_correlation_next rpg__correlation_next
#define rpg_correlation_current rpg__correlation_current
#define rpg_correlation_set rpg__correlation_set
#define rpg_record_api rpg__record_api_fast
#endif

#endif /* RPG_INTERNAL_H */
