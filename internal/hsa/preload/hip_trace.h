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
RPG_HIDDEN void rpg_hip_record_names(void);
extern RPG_HIDDEN int rpg_hip_names_recorded;

typedef struct rpg_hip_tls {
    uint32_t depth;  /* traced HIP calls in progress on this thread */
    uint64_t stream; /* hipStream_t of the innermost one that has a stream */
} rpg_hip_tls;
extern RPG_HIDDEN __thread __attribute__((tls_model("initial-exec"))) rpg_hip_tls rpg_hip_t;

typedef struct rpg_hip_call {
    uint64_t corr;
    uint64_t prev_corr;
    uint64_t prev_stream;
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
 * HIP calling itself. */
static inline int rpg_hip_tracing(void)
{
    return (rpg_domains & RPG_HIP_DOMAINS) && rpg_hip_t.depth == 0;
}

static inline uint32_t rpg_hip_domain_bit(uint32_t domain)
{
    return domain == RPG_API_HIP_RUNTIME ? RPG_DOMAIN_HIP_RUNTIME : RPG_DOMAIN_HIP_COMPILER;
}

/* The timestamps are only taken when the call itself is recorded: with only
 * activity domains on, a HIP call costs its correlation id and nothing else. */
static inline __attribute__((always_inline)) void rpg_hip_enter(rpg_hip_call *c, uint32_t domain)
{
    rpg__helper_poll();
    rpg_hip_t.depth++;
    c->prev_stream = rpg_hip_t.stream;
    c->corr = rpg_correlation_next();
    c->prev_corr = rpg_correlation_set(c->corr);
    c->t0 = (rpg_domains & rpg_hip_domain_bit(domain)) ? rpg_stamp() : 0;
}

static inline void rpg_hip_enter_stream(rpg_hip_call *c, uint32_t domain, uint64_t stream)
{
    rpg_hip_enter(c, domain);
    rpg_hip_t.stream = stream;
}

/* Restores the thread's state; non-zero when the call is to be recorded. */
static inline __attribute__((always_inline)) int rpg_hip_leave(rpg_hip_call *c, uint32_t domain)
{
    /* t0 == 0: not recorded at entry (a region may have opened since; the
     * call is left out rather than given a made-up start). */
    c->t1 = c->t0 ? rpg__stamp_after(c->t0) : 0;
    rpg_correlation_set(c->prev_corr);
    rpg_hip_t.stream = c->prev_stream;
    rpg_hip_t.depth--;
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

static inline __attribute__((always_inline)) void rpg_hip_record(const rpg_hip_call *c, uint32_t domain, uint32_t id,
                                  const rpg_hip_args *a)
{
    if (__builtin_expect(!__atomic_load_n(&rpg_hip_names_recorded, __ATOMIC_ACQUIRE), 0))
        rpg_hip_record_names();
    /* 2: t1 came from rpg__stamp_after(t0). */
    rpg__record_api_compact(2, RPG_KIND_HIP_API, domain, id, c->corr, c->t0, c->t1,
                            a->len ? a->buf : NULL, a->len);
}

#endif /* RPG_HIP_TRACE_H */
