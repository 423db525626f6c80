/*
 * rpg_internal.h: the recorder's hot path, inlined into its callers.
 *
 * The hot path of a traced call (correlation id, two timestamps, one API
 * record) is inlined here for the library's own callers (the HIP and ROCTx
 * wrappers): through the exported functions every step would be a PLT call,
 * ~1-2 ns each, six of them per traced call. The public names below are
 * redirected to the inline versions in every source file of the library
 * except the recorder's own (which defines RPG_RECORDER_IMPL and keeps the
 * exported definitions for other users).
 *
 * The shim inlines the same path into its HSA API wrappers (a PLT call and a
 * function each for begin and end measured ~5 ns of a ~20 ns budget). It is
 * another library, so it defines RPG_INLINE_FOREIGN before including this
 * header and reaches the recorder's state through the addresses
 * rpg_inline_abi_get() hands out once (rpg__foreign, filled at OnLoad): the
 * thread state's offset from the thread pointer (the preload library's TLS
 * is static, so that offset is the same in every thread), the clock anchor,
 * the correlation counter and the slow paths. Both libraries are built from
 * this header in one build; the ABI's size and version guard a mismatch.
 */
#ifndef RPG_INTERNAL_H
#define RPG_INTERNAL_H

#include "rpg_env_gen.h" /* the environment contract (internal/cmd/genenv) */
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
    uint64_t mult; /* ns per tick, 32.32 fixed point */
    uint64_t span; /* ticks after tsc until the next re-anchoring */
    uint64_t gen;  /* 1, 2, ...: which anchor this is (slots are reused) */
} rpg_clock_anchor;

/* ---- per-thread recorder state (recorder.c) ----------------------------- */

typedef struct rpg_cursor {
    char *cur;
    char *end;
    uint64_t clock_gen; /* anchor of the chunk's last rpg_clock_rec, 0 = none yet */
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
    uint32_t corr_size;  /* ids the thread's next block will hold */
    /* The thread's block of correlation ids (rpg__correlation_next): ids
     * [corr_next, corr_end) are this thread's to hand out; corr_end 0: none. */
    uint64_t corr_next;
    uint64_t corr_end;
    /* The HIP wrappers' state (hip_trace.h), here so that a traced call
     * reaches all of its thread state from one TLS address. */
    uint64_t hip_stream; /* hipStream_t of the traced call in progress, if it has one */
    uint64_t hip_t0;     /* its start stamp, 0: not recorded */
} rpg_thread_state;

typedef int (*rpg_record_api_slow_fn)(uint16_t kind, uint32_t domain, uint32_t function,
                                      uint64_t correlation_id, uint64_t start_ns,
                                      uint64_t end_ns, const void *args, uint32_t args_size);

/* What another library needs to inline the hot path (see the top). */
#define RPG_INLINE_ABI_VERSION 3u
typedef struct rpg_inline_abi {
    uint32_t size;    /* sizeof(rpg_inline_abi) */
    uint32_t version; /* RPG_INLINE_ABI_VERSION */
    uint32_t thread_state_size;
    intptr_t tls_offset; /* &rpg__t minus the thread pointer */
    rpg_clock_anchor **clock;
    uint64_t *correlation_floor;
    uint64_t (*correlation_refill)(int api_entry);
    int *helper;
    void (*helper_start)(void);
    uint64_t (*now_slow)(void);
    rpg_record_api_slow_fn record_api_slow;
    rpg_record_api_slow_fn record_api_stamped_slow;
} rpg_inline_abi;
RPG_API const rpg_inline_abi *rpg_inline_abi_get(void);

#ifndef RPG_INLINE_FOREIGN
extern RPG_HIDDEN rpg_clock_anchor *rpg__clock; /* NULL until calibrated */
/* The published anchor's gen (0 before the first): one load where the
 * library's own record paths only need to know whether a chunk's CLOCK
 * record is the current one. */
extern RPG_HIDDEN uint64_t rpg__clock_gen;
RPG_HIDDEN uint64_t rpg__now_slow(void);
/* The clock's first (tsc, ns) pair, taken in the constructor of a profiled
 * process; whether the TSC is invariant comes from RPG_ENV_GO_TSC when the
 * launcher set it (cpuid traps to the hypervisor in a VM: ~8 us a call). */
RPG_HIDDEN void rpg__clock_start(void);
extern RPG_HIDDEN __thread __attribute__((tls_model("initial-exec"))) rpg_thread_state rpg__t;
extern RPG_HIDDEN uint64_t rpg__correlation; /* atomic: the first id no block holds yet */
/* Blocks ending at or below this are stale (rpg__correlation_barrier). */
extern RPG_HIDDEN uint64_t rpg__correlation_floor;
RPG_HIDDEN uint64_t rpg__correlation_refill(int api_entry);
RPG_HIDDEN void rpg__correlation_barrier(void);
RPG_HIDDEN int rpg__record_api_slow(uint16_t kind, uint32_t domain, uint32_t function,
                                    uint64_t correlation_id, uint64_t start_ns, uint64_t end_ns,
                                    const void *args, uint32_t args_size);
/* A stamp in CLOCK_BOOTTIME ns, converted with anchor a (clock.c). */
RPG_HIDDEN uint64_t rpg__stamp_ns(const rpg_clock_anchor *a, uint64_t stamp);
RPG_HIDDEN int rpg__record_api_stamped_slow(uint16_t kind, uint32_t domain, uint32_t function,
                                            uint64_t correlation_id, uint64_t start,
                                            uint64_t end, const void *args, uint32_t args_size);
extern RPG_HIDDEN int rpg__helper;
RPG_HIDDEN void rpg__helper_start(void);
#define RPG_T rpg__t
#define RPG_CLOCK rpg__clock
#define RPG_CLOCK_GEN rpg__clock_gen
#define RPG_CORRELATION_FLOOR rpg__correlation_floor
#define RPG_CORRELATION_REFILL rpg__correlation_refill
#define RPG_HELPER rpg__helper
#define RPG_HELPER_START rpg__helper_start
#define RPG_NOW_SLOW rpg__now_slow
#define RPG_RECORD_API_SLOW rpg__record_api_slow
#define RPG_RECORD_API_STAMPED_SLOW rpg__record_api_stamped_slow
#else
extern RPG_HIDDEN rpg_inline_abi rpg__foreign;
static inline __attribute__((always_inline)) rpg_thread_state *rpg__foreign_thread(void)
{
    char *tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    return (rpg_thread_state *)(tp + rpg__foreign.tls_offset);
}
#define RPG_T (*rpg__foreign_thread())
#define RPG_CLOCK (*rpg__foreign.clock)
#define RPG_CORRELATION_FLOOR (*rpg__foreign.correlation_floor)
#define RPG_CORRELATION_REFILL rpg__foreign.correlation_refill
#define RPG_HELPER (*rpg__foreign.helper)
#define RPG_HELPER_START rpg__foreign.helper_start
#define RPG_NOW_SLOW rpg__foreign.now_slow
#define RPG_RECORD_API_SLOW rpg__foreign.record_api_slow
#define RPG_RECORD_API_STAMPED_SLOW rpg__foreign.record_api_stamped_slow
#endif

static inline __attribute__((always_inline)) uint64_t rpg__now_fast(void)
{
#if defined(__x86_64__)
    rpg_clock_anchor *a = __atomic_load_n(&RPG_CLOCK, __ATOMIC_ACQUIRE);
    if (__builtin_expect(a != NULL, 1)) {
        uint64_t t = __rdtsc();
        if (__builtin_expect(t - a->tsc < a->span, 1))
            return a->ns + (uint64_t)(((unsigned __int128)(t - a->tsc) * a->mult) >> 32);
    }
#endif
    return RPG_NOW_SLOW();
}

/* Timestamps of API records ("stamps"): raw TSC ticks once the clock is
 * calibrated, converted by the reader (version-3 records, spool.h), since the
 * conversion measured ~4 ns of a ~20 ns traced call; before that, or without
 * an invariant TSC, CLOCK_BOOTTIME ns marked with RPG_STAMP_NS. A stamp is
 * never 0. */
#define RPG_STAMP_NS (1ull << 63)

static inline __attribute__((always_inline)) uint64_t rpg__stamp(void)
{
#if defined(__x86_64__)
    rpg_clock_anchor *a = __atomic_load_n(&RPG_CLOCK, __ATOMIC_ACQUIRE);
    if (__builtin_expect(a != NULL, 1)) {
        uint64_t t = __rdtsc();
        /* Past the anchor's span: the slow clock read re-anchors. */
        if (__builtin_expect(t - a->tsc >= a->span, 0))
            (void)RPG_NOW_SLOW();
        return t;
    }
#endif
    return RPG_NOW_SLOW() | RPG_STAMP_NS;
}

/* The second stamp of a call whose first was `start`: ticks when that was
 * ticks, ns when it was ns, so the pair always converts alike. It skips the
 * anchor's span check (the first stamp made it; the reader converts ticks
 * either side of an anchor) and loads nothing: the fewer instructions wait
 * on rdtsc's result (~40 cycles here), the less of it a traced call pays. */
static inline __attribute__((always_inline)) uint64_t rpg__stamp_after(uint64_t start)
{
#if defined(__x86_64__)
    if (__builtin_expect(!(start & RPG_STAMP_NS), 1))
        return __rdtsc();
#endif
    (void)start;
    return RPG_NOW_SLOW() | RPG_STAMP_NS;
}

/* Correlation ids: unique in the process, increasing on each thread. Each
 * thread hands them out from a block of its own, taken from the process-wide
 * counter with one atomic add per block (rpg__correlation_refill), because a
 * lock-prefixed add per call cost ~7-12 ns of a ~20 ns budget on Intel hosts.
 * Ids are therefore not in time order across threads, except around
 * rpg__correlation_barrier(): every block taken before it is stale after it,
 * so every id drawn after a barrier is larger than every id drawn before it
 * (what stream numbering needs, hip_stream.c). Blocks are small at first
 * (a thread that makes a few calls leaves a small gap) and grow.
 *
 * The id comes from an xadd without lock prefix: one instruction, so a
 * signal handler that interrupts this thread sees the increment whole (no
 * other thread writes the field). corr_end is read before it: should a
 * handler replace the block in between, our id lies above the old end and
 * we take a block of our own instead of an id that may not be ours.
 *
 * api_entry (a constant): the caller is a traced API call's entry, where the
 * refill may also start the spool's pre-faulting helper (rpg__helper_poll),
 * which a record path must never do; checking once per block instead of once
 * per call keeps a load and a branch off every call. */
static inline __attribute__((always_inline)) uint64_t rpg__correlation_next_at(int api_entry)
{
    rpg_thread_state *t = &RPG_T;
    uint64_t end = t->corr_end, id = 1;
    __asm__ volatile("xaddq %0, %1" : "+r"(id), "+m"(t->corr_next) : "r"(end));
    if (__builtin_expect(id < end && id >= __atomic_load_n(&RPG_CORRELATION_FLOOR, __ATOMIC_RELAXED),
                         1))
        return id;
    return RPG_CORRELATION_REFILL(api_entry);
}

static inline __attribute__((always_inline)) uint64_t rpg__correlation_next(void)
{
    return rpg__correlation_next_at(0);
}

static inline __attribute__((always_inline)) uint64_t rpg__correlation_current(void)
{
    return RPG_T.correlation;
}

static inline __attribute__((always_inline)) uint64_t rpg__correlation_set(uint64_t id)
{
    rpg_thread_state *t = &RPG_T;
    uint64_t prev = t->correlation;
    t->correlation = id;
    return prev;
}

/* Asks for the cache line 1 KiB ahead of p, for writing. The spool's fresh
 * pages were zeroed on another core (the pre-faulting helper), so each new
 * line a record lands in is a cache miss, and on the Intel host nothing
 * overlaps the two rdtsc of a traced call: measured there (hip_calls_rate,
 * ROCm 5.2, paired rounds), a traced call costs ~3 ns less with the prefetch
 * (256 B to 2 KiB ahead alike); a C loop writing records to a cache-hot
 * buffer instead of fresh memory showed the same difference. prefetchw
 * (0f 0d /1) is a no-op on CPUs without it, and a prefetch never faults,
 * past the chunk's end included. */
#define RPG_PREFETCH_AHEAD 1024
static inline __attribute__((always_inline)) void rpg__prefetch_ahead(const char *p)
{
#if defined(__x86_64__)
    __asm__ volatile("prefetchw %0" : : "m"(*(const char *)(p + RPG_PREFETCH_AHEAD)));
#else
    __builtin_prefetch(p + RPG_PREFETCH_AHEAD, 1);
#endif
}

/* Stores one compact API record (rpg_api_rec2; version 2: ns, 3: ticks) of
 * size bytes at p and publishes it. The size goes first: a reader steps over
 * a record the process died writing. */
static inline __attribute__((always_inline)) void
rpg__put_api_rec2(char *p, uint32_t size, uint16_t kind, uint8_t version, uint32_t domain,
                  uint32_t function, uint64_t correlation_id, uint64_t start, uint32_t duration,
                  const void *args, uint32_t args_size)
{
    rpg_api_rec2 *r = (rpg_api_rec2 *)p;
    __atomic_store_n(&r->h.size, size, __ATOMIC_RELAXED);
    r->function = (uint16_t)function;
    r->domain = (uint8_t)domain;
    r->args_pad = (uint8_t)(size - sizeof(rpg_api_rec2) - args_size);
    r->duration_ns = duration;
    r->correlation_id = correlation_id;
    r->start_ns = start;
    if (args_size)
        memcpy(r + 1, args, args_size);
    uint64_t w = (uint64_t)size | (uint64_t)kind << 32 | (uint64_t)version << 48 |
                 (uint64_t)RPG_COMMIT << 56;
    __atomic_store_n((uint64_t *)p, w, __ATOMIC_RELEASE);
}

/* The compact API record on the thread's current chunk, when everything fits
 * it: version 2 for ns (ticks == 0), version 3 for two stamps (ticks == 1:
 * two rpg__stamp; ticks == 2: end from rpg__stamp_after(start), so only
 * start needs testing for ns), which also needs the chunk to hold the
 * current anchor's rpg_clock_rec. Anything else (no chunk yet, chunk full,
 * no clock record yet, nested in a signal handler's record, ns stamps,
 * values too large, end before start) goes through the slow paths in
 * recorder.c. Same publication protocol as rpg_record_reserve/publish.
 * ticks is a constant at every call site. */
static inline __attribute__((always_inline)) int
rpg__record_api_compact(int ticks, uint16_t kind, uint32_t domain, uint32_t function,
                        uint64_t correlation_id, uint64_t start, uint64_t end, const void *args,
                        uint32_t args_size)
{
    rpg_clock_anchor *a = ticks ? __atomic_load_n(&RPG_CLOCK, __ATOMIC_ACQUIRE) : NULL;
    rpg_thread_state *t = &RPG_T;
    uint32_t d = t->depth;
    /* end < start wraps to a huge duration: one test for both. */
    uint64_t dur = end - start;
    uint64_t ns_flags = ticks == 2 ? start : (start | end);
    if (__builtin_expect((!ticks || (a != NULL && !(ns_flags & RPG_STAMP_NS))) && d < 2 &&
                             args_size <= RPG_API2_MAX_ARGS && function <= 0xffffu &&
                             domain <= 0xffu && (ticks || end >= start) &&
                             dur <= 0xffffffffu,
                         1)) {
        uint32_t size = (uint32_t)(sizeof(rpg_api_rec2) + args_size + 7u) & ~7u;
        t->depth = d + 1;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        rpg_cursor *c = &t->c[d];
        char *p = c->cur;
        if (__builtin_expect(p != NULL && (!ticks || c->clock_gen == a->gen) &&
                                 (size_t)(c->end - p) >= size,
                             1)) {
            c->cur = p + size;
            rpg__prefetch_ahead(p);
            rpg__put_api_rec2(p, size, kind, ticks ? 3 : 2, domain, function, correlation_id,
                              start, (uint32_t)dur, args, args_size);
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
            t->depth = d;
            return 0;
        }
        t->depth = d;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    }
    if (ticks)
        return RPG_RECORD_API_STAMPED_SLOW(kind, domain, function, correlation_id, start, end,
                                           args, args_size);
    return RPG_RECORD_API_SLOW(kind, domain, function, correlation_id, start, end, args,
                               args_size);
}

static inline __attribute__((always_inline)) int
rpg__record_api_fast(uint16_t kind, uint32_t domain, uint32_t function, uint64_t correlation_id,
                     uint64_t start_ns, uint64_t end_ns, const void *args, uint32_t args_size)
{
    return rpg__record_api_compact(0, kind, domain, function, correlation_id, start_ns, end_ns,
                                   args, args_size);
}

static inline __attribute__((always_inline)) int
rpg__record_api_stamped_fast(uint16_t kind, uint32_t domain, uint32_t function,
                             uint64_t correlation_id, uint64_t start, uint64_t end,
                             const void *args, uint32_t args_size)
{
    return rpg__record_api_compact(1, kind, domain, function, correlation_id, start, end, args,
                                   args_size);
}

/* The spool's pre-faulting helper thread (recorder.c): wanted once a thread
 * records a lot, started from a traced API call's entry (never from inside a
 * record, which may be a signal handler's) when it takes a new block of
 * correlation ids. One load and a branch. */
static inline __attribute__((always_inline)) void rpg__helper_poll(void)
{
    if (__builtin_expect(__atomic_load_n(&RPG_HELPER, __ATOMIC_RELAXED) == 1, 0))
        RPG_HELPER_START();
}

/* rpg_api_begin / rpg_api_end (rpg_recorder.h), inline. */
static inline __attribute__((always_inline)) void rpg__api_begin_fast(rpg_api_span *s)
{
    s->parent = rpg__correlation_current();
    s->correlation_id = rpg__correlation_next_at(1);
    s->start = rpg__stamp();
}

static inline __attribute__((always_inline)) int
rpg__api_end_fast(const rpg_api_span *s, uint16_t kind, uint32_t domain, uint32_t function)
{
    uint64_t t1 = rpg__stamp_after(s->start);
    uint64_t parent = s->parent;
    /* 2: t1 came from rpg__stamp_after(start). */
    return rpg__record_api_compact(2, kind, domain, function, s->correlation_id, s->start, t1,
                                   &parent, parent ? (uint32_t)sizeof parent : 0u);
}

#if !defined(RPG_RECORDER_IMPL) && !defined(RPG_INLINE_FOREIGN)
/* The library's own reads of rpg_domains go to a hidden alias of it (a
 * direct load instead of one through the GOT). */
extern RPG_HIDDEN uint32_t rpg__domains;
#define rpg_domains rpg__domains
#define rpg_now rpg__now_fast
#define rpg_correlation_next rpg__correlation_next
#define rpg_correlation_current rpg__correlation_current
#define rpg_correlation_set rpg__correlation_set
#define rpg_record_api rpg__record_api_fast
#define rpg_stamp rpg__stamp
#define rpg_record_api_stamped rpg__record_api_stamped_fast
#endif

/* recorder.c: bit N is set once status string N (< 32) was recorded in
 * this process; hsa_init.c reads the shim's RPG_STATUS_SHIM_ATTACHED and
 * RPG_STATUS_NO_GPU_AGENT there after the real hsa_init returns. */
extern uint32_t rpg__status_seen;

#endif /* RPG_INTERNAL_H */
