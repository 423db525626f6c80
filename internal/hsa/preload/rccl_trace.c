/*
 * rccl_trace.c: RCCL API tracing (--rccl-trace, ROCPROF_RCCL_API_TRACE).
 *
 * rocprofv3 traces RCCL through the API table RCCL hands rocprofiler-register.
 * Debian's RCCL (5.4.3 in trixie, 7.2.4 in experimental) has no such
 * hand-off: it neither links nor names librocprofiler-register. RCCL 7's
 * profiler plug-in interface (NCCL_PROFILER_PLUGIN, ncclProfiler_v1..v4)
 * reports collectives, proxy operations and kernel channels, not API calls,
 * and RCCL 5.4 has none. So, like the HIP wrappers, these functions
 * interpose RCCL's exported API: the preload library comes first in the
 * search order, so the application's calls land here; each wrapper takes a
 * correlation id and two timestamps, calls the real function (found with
 * dlsym(RTLD_NEXT) on first use) and writes one API record on the
 * application's thread (spool.h, RPG_KIND_RCCL_API).
 *
 * The functions are rocprofv3's RCCL_API domain, in its order
 * (rocprofiler_rccl_api_id_t; internal/tracing/rccl.go has the same table
 * with the parameters' names and types). RCCL's other exports (ncclBcast,
 * ncclCommInitRankMulti, ncclCommShrink, rcclGetAlgoInfo, ...) are not in
 * that domain and pass untouched.
 *
 * Only the application's calls are recorded: RCCL calls its own exported
 * API through its PLT (ncclCommInitAll's per-GPU threads call
 * ncclGetVersion, ncclBcast calls ncclBroadcast, ...), and such a call,
 * whose return address lies in RCCL's own code, is forwarded untouched, as
 * is any RCCL call made while the thread is inside a traced one (a library
 * between RCCL and its callbacks). The wrapper does not make its
 * call the thread's current correlation id, so the HIP calls RCCL makes are
 * traced as HIP calls exactly as without --rccl-trace, and the kernels and
 * copies they cause carry those calls' ids; the record's tail says which
 * ids the thread drew during the call (spool.h, rpg_rccl_tail).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach_internal.h"
#include "rpg_internal.h"

#define RPG_RCCL_EXPORT __attribute__((visibility("default")))

/* The function ids: rocprofiler_rccl_api_id_t. */
#define RPG_RCCL_FUNCTIONS(X)                                                                      \
    X(ncclAllGather)                                                                               \
    X(ncclAllReduce)                                                                               \
    X(ncclAllToAll)                                                                                \
    X(ncclAllToAllv)                                                                               \
    X(ncclBroadcast)                                                                               \
    X(ncclGather)                                                                                  \
    X(ncclReduce)                                                                                  \
    X(ncclReduceScatter)                                                                           \
    X(ncclScatter)                                                                                 \
    X(ncclSend)                                                                                    \
    X(ncclRecv)                                                                                    \
    X(ncclRedOpCreatePreMulSum)                                                                    \
    X(ncclRedOpDestroy)                                                                            \
    X(ncclGroupStart)                                                                              \
    X(ncclGroupEnd)                                                                                \
    X(ncclGetVersion)                                                                              \
    X(ncclGetUniqueId)                                                                             \
    X(ncclCommInitRank)                                                                            \
    X(ncclCommInitAll)                                                                             \
    X(ncclCommInitRankConfig)                                                                      \
    X(ncclCommFinalize)                                                                            \
    X(ncclCommDestroy)                                                                             \
    X(ncclCommAbort)                                                                               \
    X(ncclCommSplit)                                                                               \
    X(ncclGetErrorString)                                                                          \
    X(ncclGetLastError)                                                                            \
    X(ncclCommGetAsyncError)                                                                       \
    X(ncclCommCount)                                                                               \
    X(ncclCommCuDevice)                                                                            \
    X(ncclCommUserRank)                                                                            \
    X(ncclMemAlloc)                                                                                \
    X(ncclMemFree)                                                                                 \
    X(mscclLoadAlgo)                                                                               \
    X(mscclRunAlgo)                                                                                \
    X(mscclUnloadAlgo)                                                                             \
    X(ncclCommRegister)                                                                            \
    X(ncclCommDeregister)

enum {
#define RPG_RCCL_ID(name) RPG_RCCL_##name,
    RPG_RCCL_FUNCTIONS(RPG_RCCL_ID)
#undef RPG_RCCL_ID
    RPG_RCCL_COUNT
};

static const char *const rccl_names[RPG_RCCL_COUNT] = {
#define RPG_RCCL_NAME(name) #name,
    RPG_RCCL_FUNCTIONS(RPG_RCCL_NAME)
#undef RPG_RCCL_NAME
};

static void *rccl_real_fns[RPG_RCCL_COUNT];

/* The address range of RCCL's loaded segments (the library that defines
 * the real functions), found once the first function is resolved: a call
 * returning there is RCCL calling itself. */
static uintptr_t rccl_lo, rccl_hi;

size_t rpg__rccl_hooks(rpg_hook *out, size_t cap)
{
    void *self = rpg__self_handle();
    size_t n = 0;
    for (uint32_t i = 0; self && i < RPG_RCCL_COUNT && n < cap; i++) {
        /* By our own handle: a global RCCL would win a plain reference. */
        void *w = dlsym(self, rccl_names[i]);
        if (w && rpg__in_self(w))
            out[n++] = (rpg_hook){rccl_names[i], w, &rccl_real_fns[i], NULL};
    }
    return n;
}

/* RCCL calls in progress on this thread (the application's, and RCCL's own
 * calls into its API underneath). */
static __thread __attribute__((tls_model("initial-exec"))) uint32_t rccl_depth;

/* RCCL's library, for applications that dlopen it RTLD_LOCAL (RTLD_NEXT
 * does not search local scopes, but their calls still bind to these
 * wrappers through the global scope). */
static void *rccl_handle(void)
{
    static const char *const names[] = {"librccl.so.1", "librccl.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *h = dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD);
        if (h)
            return h;
    }
    return NULL;
}

static void *rccl_resolve(uint32_t id)
{
    /* Attach mode: loaded RTLD_LOCAL, where RTLD_NEXT means nothing; the
     * hooks usually set the real function already (rpg__rccl_hooks). */
    void *p = rpg__attach_mode() ? rpg__attach_lookup(rccl_names[id], NULL)
                                 : dlsym(RTLD_NEXT, rccl_names[id]);
    if (!p && !rpg__attach_mode()) {
        void *h = rccl_handle();
        if (h)
            p = dlsym(h, rccl_names[id]);
    }
    if (!p) {
        /* Only reachable when something calls an RCCL function that no
         * loaded RCCL defines (an older RCCL without ncclCommRegister, ...);
         * there is nothing sane to return. */
        char msg[256];
        int n = snprintf(msg, sizeof msg,
                         "rocprof-go: %s called but not found in any loaded RCCL library "
                         "(librccl.so.1); run the application without --rccl-trace\n",
                         rccl_names[id]);
        if (n > 0)
            (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
        abort();
    }
    uintptr_t lo, hi;
    if (!__atomic_load_n(&rccl_hi, __ATOMIC_ACQUIRE) && rpg__module_range(p, &lo, &hi)) {
        __atomic_store_n(&rccl_lo, lo, __ATOMIC_RELAXED);
        __atomic_store_n(&rccl_hi, hi, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&rccl_real_fns[id], p, __ATOMIC_RELAXED);
    return p;
}

static inline void *rccl_real(uint32_t id)
{
    void *p = __atomic_load_n(&rccl_real_fns[id], __ATOMIC_RELAXED);
    return __builtin_expect(p != NULL, 1) ? p : rccl_resolve(id);
}

/* The function names (RPG_STRTAB = the domain), once per spool: 0 not yet,
 * 2 being written, 1 written. A fork child writes a new spool. */
static int rccl_names_recorded;

static void forget_names(void) { rccl_names_recorded = 0; }

static void register_fork_handler(void) { pthread_atfork(NULL, NULL, forget_names); }

static void record_names(void)
{
    /* The fork handler first (see rpg_hip_record_names). */
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_fork_handler);
    int expect = 0;
    if (!__atomic_compare_exchange_n(&rccl_names_recorded, &expect, 2, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return;
    for (uint32_t i = 0; i < RPG_RCCL_COUNT; i++)
        rpg_record_string(RPG_API_RCCL, i, rccl_names[i], strlen(rccl_names[i]));
    __atomic_store_n(&rccl_names_recorded, 1, __ATOMIC_RELEASE);
}

/* One traced call: its id and start stamp, then its argument blob (the
 * tail, then every parameter as HIP's blob holds them: u32 size, bytes,
 * padded to 4; ncclUniqueId's 128 bytes are the largest). */
#define RPG_RCCL_ARGS_MAX 512
typedef struct rccl_call {
    uint64_t corr;
    uint64_t t0;
    uint32_t len;
    unsigned char buf[RPG_RCCL_ARGS_MAX];
} rccl_call;

static inline void rccl_arg_put(rccl_call *c, const void *p, uint32_t n)
{
    uint32_t step = (4 + n + 3) & ~3u;
    if (c->len + step > RPG_RCCL_ARGS_MAX)
        return;
    memcpy(c->buf + c->len, &n, 4);
    memcpy(c->buf + c->len + 4, p, n);
    memset(c->buf + c->len + 4 + n, 0, step - 4 - n);
    c->len += step;
}
#define RPG_RCCL_ARG(x) rccl_arg_put(&c, &(x), (uint32_t)sizeof(x));

/* Non-zero when this call, returning to ra, is the application's and is to
 * be traced (the real function is resolved first, so RCCL's range is
 * known). */
static inline int rccl_tracing(uintptr_t ra)
{
    return (rpg_domains & RPG_DOMAIN_RCCL) && rccl_depth == 0 &&
           !(ra >= rccl_lo && ra < __atomic_load_n(&rccl_hi, __ATOMIC_ACQUIRE));
}

static inline void rccl_enter(rccl_call *c)
{
    rccl_depth++;
    /* 1: an API entry, where a new block of ids may also wake the spool's
     * pre-faulting helper. */
    c->corr = rpg__correlation_next_at(1);
    c->t0 = rpg_stamp();
}

static void rccl_leave(rccl_call *c, uint32_t id)
{
    uint64_t t1 = rpg__stamp_after(c->t0);
    /* After every id the real call drew on this thread: the tail's bound. */
    rpg_rccl_tail tail = {.end_correlation_id = rpg__correlation_next()};
    memcpy(c->buf, &tail, sizeof tail);
    rccl_depth--;
    if (__builtin_expect(__atomic_load_n(&rccl_names_recorded, __ATOMIC_ACQUIRE) != 1, 0))
        record_names();
    /* 2: t1 came from rpg__stamp_after(t0). */
    rpg__record_api_compact(2, RPG_KIND_RCCL_API, RPG_API_RCCL, id, c->corr, c->t0, t1, c->buf,
                            c->len);
}

/* RPG_RCCL_FOR_EACH(m, a, b, ...) expands to m(a) m(b) ... (up to 14). */
#define RPG_FE_1(m, x) m(x)
#define RPG_FE_2(m, x, ...) m(x) RPG_FE_1(m, __VA_ARGS__)
#define RPG_FE_3(m, x, ...) m(x) RPG_FE_2(m, __VA_ARGS__)
#define RPG_FE_4(m, x, ...) m(x) RPG_FE_3(m, __VA_ARGS__)
#define RPG_FE_5(m, x, ...) m(x) RPG_FE_4(m, __VA_ARGS__)
#define RPG_FE_6(m, x, ...) m(x) RPG_FE_5(m, __VA_ARGS__)
#define RPG_FE_7(m, x, ...) m(x) RPG_FE_6(m, __VA_ARGS__)
#define RPG_FE_8(m, x, ...) m(x) RPG_FE_7(m, __VA_ARGS__)
#define RPG_FE_9(m, x, ...) m(x) RPG_FE_8(m, __VA_ARGS__)
#define RPG_FE_10(m, x, ...) m(x) RPG_FE_9(m, __VA_ARGS__)
#define RPG_FE_11(m, x, ...) m(x) RPG_FE_10(m, __VA_ARGS__)
#define RPG_FE_12(m, x, ...) m(x) RPG_FE_11(m, __VA_ARGS__)
#define RPG_FE_13(m, x, ...) m(x) RPG_FE_12(m, __VA_ARGS__)
#define RPG_FE_14(m, x, ...) m(x) RPG_FE_13(m, __VA_ARGS__)
#define RPG_FE_PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, N, ...) N
#define RPG_RCCL_FOR_EACH(m, ...)                                                                  \
    RPG_FE_PICK(__VA_ARGS__, RPG_FE_14, RPG_FE_13, RPG_FE_12, RPG_FE_11, RPG_FE_10, RPG_FE_9,       \
                RPG_FE_8, RPG_FE_7, RPG_FE_6, RPG_FE_5, RPG_FE_4, RPG_FE_3, RPG_FE_2, RPG_FE_1)     \
    (m, __VA_ARGS__)

/* The body of a wrapper of name(args...): untraced calls go straight to
 * RCCL; a traced one is recorded after it returns (the tail's room is
 * reserved first, so that the parameters follow it). */
#define RPG_RCCL_BODY(name, ...)                                                                   \
    __typeof__(&name) real = (__typeof__(&name))rccl_real(RPG_RCCL_##name);                        \
    if (__builtin_expect(!rccl_tracing((uintptr_t)__builtin_return_address(0)), 1))                \
        return real(__VA_ARGS__);                                                                  \
    rccl_call c;                                                                                   \
    RPG_ATTACH_ENTER();                                                                            \
    rccl_enter(&c);                                                                                \
    __typeof__(real(__VA_ARGS__)) r = real(__VA_ARGS__);                                           \
    c.len = sizeof(rpg_rccl_tail);                                                                 \
    RPG_RCCL_FOR_EACH(RPG_RCCL_ARG, __VA_ARGS__)                                                   \
    rccl_leave(&c, RPG_RCCL_##name);                                                               \
    RPG_ATTACH_LEAVE();                                                                            \
    return r;

#define RPG_RCCL_BODY0(name)                                                                       \
    __typeof__(&name) real = (__typeof__(&name))rccl_real(RPG_RCCL_##name);                        \
    if (__builtin_expect(!rccl_tracing((uintptr_t)__builtin_return_address(0)), 1))                \
        return real();                                                                             \
    rccl_call c;                                                                                   \
    RPG_ATTACH_ENTER();                                                                            \
    rccl_enter(&c);                                                                                \
    __typeof__(real()) r = real();                                                                 \
    c.len = sizeof(rpg_rccl_tail);                                                                 \
    rccl_leave(&c, RPG_RCCL_##name);                                                               \
    RPG_ATTACH_LEAVE();                                                                            \
    return r;

/* rccl.h's types by how they are passed, so that no RCCL header is needed:
 * ncclResult_t, ncclDataType_t, ncclRedOp_t, ncclScalarResidence_t and
 * mscclAlgoHandle_t are ints, ncclComm_t and hipStream_t pointers, and
 * ncclUniqueId a 128-byte struct passed by value. */
typedef int32_t rccl_result;
typedef struct {
    char internal[128];
} rccl_unique_id;

RPG_RCCL_EXPORT rccl_result ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                                          int32_t datatype, void *comm, void *stream)
{
    RPG_RCCL_BODY(ncclAllGather, sendbuff, recvbuff, sendcount, datatype, comm, stream)
}

RPG_RCCL_EXPORT rccl_result ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                                          int32_t datatype, int32_t op, void *comm, void *stream)
{
    RPG_RCCL_BODY(ncclAllReduce, sendbuff, recvbuff, count, datatype, op, comm, stream)
}

RPG_RCCL_EXPORT rccl_result ncclAllToAll(const void *sendbuff, void *recvbuff, size_t count,
                                         int32_t datatype, void *comm, void *stream)
{
    RPG_RCCL_BODY(ncclAllToAll, sendbuff, recvbuff, count, datatype, comm, stream)
}

RPG_RCCL_EXPORT rccl_result ncclAllToAllv(const void *sendbuff, const size_t *sendcounts,
                                          const size_t *sdispls, void *recvbuff,
                                          const size_t *recvcounts, const size_t *rdispls,
                                          int32_t datatype, void *comm, void *stream)
{
    RPG_RCCL_BODY(ncclAllToAllv, sendbuff, sendcounts, sdispls, recvbuff, recvcounts, rdispls,
                  datatype, comm, stream)
}

RPG_RCCL_EXPORT rccl_result ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                                          int32_t datatype, int root, void *comm, void *stream)
{
    RPG_RCCL_BODY(ncclBroadcast, sendbuff, recvbuff, count, datatype, root, comm, stream)
}

RPG_RCCL_EXPORT rccl_result ncclGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                                       int32_t datatype, int root, void *comm, void *stream)
{
    RPG_RCCL_BODY(ncclGather, sendbuff, recvbuff, sendcount, datatype, root, comm, stream)
}

RPG_RCCL_EXPORT rccl_result ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
                                       int32_t datatype, int32_t op, int root, void *comm,
                                       void *stream)
{
    RPG_RCCL_BODY(ncclReduce, sendbuff, recvbuff, count, datatype, op, root, comm, stream)
}

RPG_RCCL_EXPORT rccl_result ncclReduceScatter(const void *sendbuff, void *recvbuff,
                                              size_t recvcount, int32_t datatype, int32_t op,
                                              void *comm, void *stream)
{
    RPG_RCCL_BODY(ncclReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, comm, stream)
}

RPG_RCCL_EXPORT rccl_result ncclScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                                        int32_t datatype, int root, void *comm, void *stream)
{
    RPG_RCCL_BODY(ncclScatter, sendbuff, recvbuff, recvcount, datatype, root, comm, stream)
}

RPG_RCCL_EXPORT rccl_result ncclSend(const void *sendbuff, size_t count, int32_t datatype, int peer,
                                     void *comm, void *stream)
{
    RPG_RCCL_BODY(ncclSend, sendbuff, count, datatype, peer, comm, stream)
}

RPG_RCCL_EXPORT rccl_result ncclRecv(void *recvbuff, size_t count, int32_t datatype, int peer,
                                     void *comm, void *stream)
{
    RPG_RCCL_BODY(ncclRecv, recvbuff, count, datatype, peer, comm, stream)
}

RPG_RCCL_EXPORT rccl_result ncclRedOpCreatePreMulSum(int32_t *op, void *scalar, int32_t datatype,
                                                     int32_t residence, void *comm)
{
    RPG_RCCL_BODY(ncclRedOpCreatePreMulSum, op, scalar, datatype, residence, comm)
}

RPG_RCCL_EXPORT rccl_result ncclRedOpDestroy(int32_t op, void *comm)
{
    RPG_RCCL_BODY(ncclRedOpDestroy, op, comm)
}

RPG_RCCL_EXPORT rccl_result ncclGroupStart(void) { RPG_RCCL_BODY0(ncclGroupStart) }

RPG_RCCL_EXPORT rccl_result ncclGroupEnd(void) { RPG_RCCL_BODY0(ncclGroupEnd) }

RPG_RCCL_EXPORT rccl_result ncclGetVersion(int *version)
{
    RPG_RCCL_BODY(ncclGetVersion, version)
}

RPG_RCCL_EXPORT rccl_result ncclGetUniqueId(rccl_unique_id *uniqueId)
{
    RPG_RCCL_BODY(ncclGetUniqueId, uniqueId)
}

RPG_RCCL_EXPORT rccl_result ncclCommInitRank(void **comm, int nranks, rccl_unique_id commId,
                                             int rank)
{
    RPG_RCCL_BODY(ncclCommInitRank, comm, nranks, commId, rank)
}

RPG_RCCL_EXPORT rccl_result ncclCommInitAll(void **comm, int ndev, const int *devlist)
{
    RPG_RCCL_BODY(ncclCommInitAll, comm, ndev, devlist)
}

RPG_RCCL_EXPORT rccl_result ncclCommInitRankConfig(void **comm, int nranks, rccl_unique_id commId,
                                                   int rank, void *config)
{
    RPG_RCCL_BODY(ncclCommInitRankConfig, comm, nranks, commId, rank, config)
}

RPG_RCCL_EXPORT rccl_result ncclCommFinalize(void *comm) { RPG_RCCL_BODY(ncclCommFinalize, comm) }

RPG_RCCL_EXPORT rccl_result ncclCommDestroy(void *comm) { RPG_RCCL_BODY(ncclCommDestroy, comm) }

RPG_RCCL_EXPORT rccl_result ncclCommAbort(void *comm) { RPG_RCCL_BODY(ncclCommAbort, comm) }

RPG_RCCL_EXPORT rccl_result ncclCommSplit(void *comm, int color, int key, void **newcomm,
                                          void *config)
{
    RPG_RCCL_BODY(ncclCommSplit, comm, color, key, newcomm, config)
}

RPG_RCCL_EXPORT const char *ncclGetErrorString(rccl_result result)
{
    RPG_RCCL_BODY(ncclGetErrorString, result)
}

RPG_RCCL_EXPORT const char *ncclGetLastError(void *comm)
{
    RPG_RCCL_BODY(ncclGetLastError, comm)
}

RPG_RCCL_EXPORT rccl_result ncclCommGetAsyncError(void *comm, rccl_result *asyncError)
{
    RPG_RCCL_BODY(ncclCommGetAsyncError, comm, asyncError)
}

RPG_RCCL_EXPORT rccl_result ncclCommCount(void *comm, int *count)
{
    RPG_RCCL_BODY(ncclCommCount, comm, count)
}

RPG_RCCL_EXPORT rccl_result ncclCommCuDevice(void *comm, int *device)
{
    RPG_RCCL_BODY(ncclCommCuDevice, comm, device)
}

RPG_RCCL_EXPORT rccl_result ncclCommUserRank(void *comm, int *rank)
{
    RPG_RCCL_BODY(ncclCommUserRank, comm, rank)
}

RPG_RCCL_EXPORT rccl_result ncclMemAlloc(void **ptr, size_t size)
{
    RPG_RCCL_BODY(ncclMemAlloc, ptr, size)
}

RPG_RCCL_EXPORT rccl_result ncclMemFree(void *ptr) { RPG_RCCL_BODY(ncclMemFree, ptr) }

RPG_RCCL_EXPORT rccl_result mscclLoadAlgo(const char *mscclAlgoFilePath, int32_t *mscclAlgoHandle,
                                          int rank)
{
    RPG_RCCL_BODY(mscclLoadAlgo, mscclAlgoFilePath, mscclAlgoHandle, rank)
}

RPG_RCCL_EXPORT rccl_result mscclRunAlgo(const void *sendBuff, const size_t *sendCounts,
                                         const size_t *sDisPls, void *recvBuff,
                                         const size_t *recvCounts, const size_t *rDisPls,
                                         size_t count, int32_t dataType, int root, int peer,
                                         int32_t op, int32_t mscclAlgoHandle, void *comm,
                                         void *stream)
{
    RPG_RCCL_BODY(mscclRunAlgo, sendBuff, sendCounts, sDisPls, recvBuff, recvCounts, rDisPls,
                  count, dataType, root, peer, op, mscclAlgoHandle, comm, stream)
}

RPG_RCCL_EXPORT rccl_result mscclUnloadAlgo(int32_t mscclAlgoHandle)
{
    RPG_RCCL_BODY(mscclUnloadAlgo, mscclAlgoHandle)
}

RPG_RCCL_EXPORT rccl_result ncclCommRegister(void *comm, void *buff, size_t size, void **handle)
{
    RPG_RCCL_BODY(ncclCommRegister, comm, buff, size, handle)
}

RPG_RCCL_EXPORT rccl_result ncclCommDeregister(void *comm, void *handle)
{
    RPG_RCCL_BODY(ncclCommDeregister, comm, handle)
}
