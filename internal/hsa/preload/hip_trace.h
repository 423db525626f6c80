/*
 * hip_trace.h: what the generated HIP wrappers (hip_api_gen.c) need.
 *
 * Every wrapper resolves the real function lazily (a constructor resolving
 * ~400 symbols would cost every process the preload library enters, HIP or
 * not), then takes one branch when no HIP-related domain is on. When one is,
 * the call gets a correlation id that is the thread's current id while the
 * real function runs (so dispatches and copies the HSA shim records
 * underneath carry it), and a record if its own domain is on.
 *
 * The wrappers (generated from every HIP release of the ROCm matrix) declare
 * their parameters by how they are passed, so no HIP header is needed here.
 *
 * Calls HIP makes into its own exported API while serving a traced call
 * (libamdhip64 calls hipMemcpy through its PLT, for instance) are forwarded
 * untouched: rocprofv3 reports only the application's calls.
 */
#ifndef RPG_HIP_TRACE_H
#define RPG_HIP_TRACE_H

#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>

#include "attach_internal.h"
#include "hip_stream.h"
#include "rpg_internal.h"

#define RPG_HIP_EXPORT __attribute__((visibility("default")))

/* Domains for which a HIP call needs a correlation id: its own two, and the
 * activity it may cause (the shim's records carry the HIP call's id). */
#define RPG_HIP_DOMAINS                                                                        \
    (RPG_DOMAIN_HIP_RUNTIME | RPG_DOMAIN_HIP_COMPILER | RPG_DOMAIN_KERNEL |                    \
     RPG_DOMAIN_MEMORY_COPY | RPG_DOMAIN_MEMORY_ALLOCATION | RPG_DOMAIN_SCRATCH_MEMORY |       \
     RPG_DOMAIN_COUNTER)

/* The strings are offsets into rpg_hip_strings, so that the table needs no
 * relocation (rpg_hip_str). */
typedef struct rpg_hip_function {
    uint32_t name;    /* API name as rocprofv3 prints it */
    uint32_t symbol;  /* exported symbol (mangled for C++ functions) */
    uint32_t version; /* its symbol version in libamdhip64 */
    uint32_t domain;  /* RPG_API_HIP_RUNTIME or RPG_API_HIP_COMPILER */
} rpg_hip_function;

/* Generated (hip_api_gen.c). */
extern RPG_HIDDEN const char rpg_hip_strings[];
extern RPG_HIDDEN const rpg_hip_function rpg_hip_functions[];
#define rpg_hip_str(off) (rpg_hip_strings + (off))
extern RPG_HIDDEN const uint32_t rpg_hip_function_count;
extern RPG_HIDDEN void *rpg_hip_real_fns[];

/* hip_trace.c */
RPG_HIDDEN void *rpg_hip_resolve(uint32_t id);
/* hipGetProcAddress and its kin: replaces *pfn, a HIP function, with its
 * wrapper, so that calls through the pointer are traced too. */
RPG_HIDDEN void rpg_hip_wrap_proc(void *pfn);
/* hip_stream.c: forgets a destroyed stream's number. */
RPG_HIDDEN void rpg_hip_stream_forget(uint64_t handle);
/* __hipRegisterFunction: a kernel's host stub and device name (hip_register.c). */
RPG_HIDDEN void rpg_hip_host_function(const void *host, const void *device);
RPG_HIDDEN void rpg_hip_record_names(void);
extern RPG_HIDDEN int rpg_hip_names_recorded;

typedef struct rpg_hip_call {
    uint64_t corr;
    uint64_t t0, t1; /* stamps (rpg_stamp); t0 == 0: not recorded */
} rpg_hip_call;

static inline void *rpg_hip_real(uint32_t id)
{
    void *p = __atomic_load_n(&rpg_hip_real_fns[id], __ATOMIC_RELAXED);
    if (__builtin_expect(p == NULL, 0))
        p = rpg_hip_resolve(id);
    return p;
}

/* Non-zero when this call must be traced: a domain wants it and it is not
 * HIP calling itself. A traced call is in progress on the thread exactly
 * when the thread's current correlation id is not 0: only the wrappers set
 * it (rpg_correlation_set is theirs), to the call's id for its duration. */
static inline int rpg_hip_tracing(void)
{
    return (rpg_domains & RPG_HIP_DOMAINS) && RPG_T.correlation == 0;
}

/* Whether the exported wrapper takes its out-of-line path: to be traced, or
 * (attach mode, rpg_attach.h) to count itself in flight. With tracing on,
 * launch mode pays nothing more than before; only an untraced call (its
 * domain off, or HIP calling itself) loads one more flag. */
static inline int rpg_hip_slow(void) { return rpg_hip_tracing() || rpg__attach_active; }

/* Attached: counts the call in flight, then says whether it is traced. */
static inline __attribute__((always_inline)) int rpg_hip_attach_enter(void)
{
    rpg_attach_enter();
    return rpg_hip_tracing();
}

static inline uint32_t rpg_hip_domain_bit(uint32_t domain)
{
    return domain == RPG_API_HIP_RUNTIME ? RPG_DOMAIN_HIP_RUNTIME : RPG_DOMAIN_HIP_COMPILER;
}

/* The timestamps are only taken when the call itself is recorded: with only
 * activity domains on, a HIP call costs its correlation id and nothing else.
 * While the call runs, its id is the thread's current correlation id and its
 * stream (if it has one) the thread's current stream; outside traced calls
 * both are 0, so leave resets them rather than saving and restoring them.
 * Every instruction here counts: with rdtsc taking ~8 ns of front-end time
 * on Intel, two stamps are most of what a traced call may add. */
static inline __attribute__((always_inline)) void rpg_hip_enter(rpg_hip_call *c, uint32_t domain)
{
    /* The id and the start go to the thread state, not into c: read back
     * after the real call, nothing needs to live in a callee-saved register
     * across it, which saves the wrapper most of its pushes and pops. */
    (void)c;
    rpg_thread_state *t = &RPG_T;
    t->correlation = rpg__correlation_next_at(1);
    t->hip_t0 = (rpg_domains & rpg_hip_domain_bit(domain)) ? rpg_stamp() : 0;
}

static inline __attribute__((always_inline)) void rpg_hip_enter_stream(rpg_hip_call *c, uint32_t domain, uint64_t stream)
{
    rpg_hip_enter(c, domain);
    RPG_T.hip_stream = stream;
}

/* Resets the thread's state; non-zero when the call is to be recorded. */
static inline __attribute__((always_inline)) int rpg_hip_leave(rpg_hip_call *c, uint32_t domain)
{
    rpg_thread_state *t = &RPG_T;
    c->t0 = t->hip_t0;
    c->corr = t->correlation;
    /* t0 == 0: not recorded at entry (a region may have opened since; the
     * call is left out rather than given a made-up start). */
    c->t1 = c->t0 ? rpg__stamp_after(c->t0) : 0;
    t->correlation = 0;
    t->hip_stream = 0;
    return c->t0 && (rpg_domains & rpg_hip_domain_bit(domain));
}

/* The argument blob of a HIP record (rpg_api_rec's tail): for each argument
 * in declaration order, a u32 byte count, the argument's bytes as passed
 * (pointers as addresses, structs by value), padded to 4 bytes. Arguments
 * that do not fit are left out; internal/hsa/hiptrace decodes it with the
 * generated parameter tables. */
#define RPG_HIP_ARGS_MAX 384
typedef struct rpg_hip_args {
    uint32_t len;
    unsigned char buf[RPG_HIP_ARGS_MAX];
} rpg_hip_args;

/* Whether records carry arguments: fixed at load (hip_trace.c). */
extern RPG_HIDDEN int rpg_hip_args_on;

static inline void rpg_hip_arg_put(rpg_hip_args *a, const void *p, uint32_t n)
{
    uint32_t step = (4 + n + 3) & ~3u;
    if (a->len + step > RPG_HIP_ARGS_MAX)
        return;
    memcpy(a->buf + a->len, &n, 4);
    memcpy(a->buf + a->len + 4, p, n);
    a->len += step;
}
#define RPG_HIP_ARG(a, x) rpg_hip_arg_put(&(a), &(x), (uint32_t)sizeof(x))

RPG_HIDDEN void rpg_hip_record_slow(uint32_t domain, uint32_t id, uint64_t corr, uint64_t t0,
                                    uint64_t t1, const void *args, uint32_t args_size);

/* The call's record (a version-3 rpg_api_rec2 of ticks). The common case is
 * written here, inline, in the fewest instructions: the thread's chunk has
 * room and a CLOCK record of the current anchor, both stamps are ticks, no
 * signal handler on this thread is mid-record. Everything else (and the
 * function names, once per spool) goes through rpg_hip_record_slow. The
 * argument blob is copied in 8-byte words: its buffer and the record both
 * extend to the next multiple of 8. */
static inline __attribute__((always_inline)) void rpg_hip_record(const rpg_hip_call *c, uint32_t domain, uint32_t id,
                                  const rpg_hip_args *a)
{
    rpg_thread_state *t = &RPG_T;
    uint32_t len = a->len;
    uint32_t size = ((uint32_t)sizeof(rpg_api_rec2) + len + 7u) & ~7u;
    uint64_t dur = c->t1 - c->t0;
    /* Ticks (no RPG_STAMP_NS) imply a calibrated clock, whose generation
     * the chunk's last CLOCK record must carry. A thread without a chunk has
     * cur == end == NULL: no room. */
    if (__builtin_expect(__atomic_load_n(&rpg_hip_names_recorded, __ATOMIC_ACQUIRE) == 1 &&
                             t->depth == 0 && !(c->t0 & RPG_STAMP_NS) && dur <= 0xffffffffu,
                         1)) {
        t->depth = 1;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        rpg_cursor *cu = &t->c[0];
        char *p = cu->cur;
        if (__builtin_expect(cu->clock_gen == __atomic_load_n(&RPG_CLOCK_GEN, __ATOMIC_RELAXED) &&
                                 (size_t)(cu->end - p) >= size,
                             1)) {
            cu->cur = p + size;
            rpg__prefetch_ahead(p);
            /* Bytes 8-15 (function, domain, padding, duration) in one store. */
            uint64_t w1 = (uint64_t)(uint16_t)id | (uint64_t)(uint8_t)domain << 16 |
                          (uint64_t)(uint8_t)(size - sizeof(rpg_api_rec2) - len) << 24 | dur << 32;
            __atomic_store_n((uint32_t *)p, size, __ATOMIC_RELAXED);
            memcpy(p + 8, &w1, 8);
            memcpy(p + 16, &c->corr, 8);
            memcpy(p + 24, &c->t0, 8);
            for (uint32_t i = 0; i < len; i += 8) {
                uint64_t w;
                memcpy(&w, a->buf + i, 8);
                memcpy(p + sizeof(rpg_api_rec2) + i, &w, 8);
            }
            uint64_t h = (uint64_t)size | (uint64_t)RPG_KIND_HIP_API << 32 | (uint64_t)3 << 48 |
                         (uint64_t)RPG_COMMIT << 56;
            __atomic_store_n((uint64_t *)p, h, __ATOMIC_RELEASE);
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
            t->depth = 0;
            return;
        }
        t->depth = 0;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    }
    rpg_hip_record_slow(domain, id, c->corr, c->t0, c->t1, a->buf, len);
}

#endif /* RPG_HIP_TRACE_H */
