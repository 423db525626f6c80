// activity.cpp: memory copy and allocation tracing, and the executable hooks
// that hand code objects to Go for the kernel symbol table.
//
// A traced copy runs with a completion signal of ours; the shim's copy
// completion thread sees it complete, reads and records the copy's
// timestamps, and only then decrements the app's signal, so the app never
// sees a copy complete that is not yet recorded.
//
// Why a thread of our own and not the runtime's hsa_amd_signal_async_handler:
// ROCr 5.2.3 serves every registered handler from one thread that waits on
// all of them with hsa_amd_signal_wait_any, and every such wait first polls
// for 200 us before it sleeps. That thread is woken once when a handler is
// registered and once when a copy completes, and with copies outstanding
// each wake-up costs a full 200 us poll: ~0.5 ms of CPU per traced copy with
// 64 threads copying (docs/shim.md). Blocking on each copy's signal with the
// runtime's own wait polls the same 200 us per copy, so the thread polls the
// signals itself and naps (copy_completion_thread).
#include <linux/futex.h>
#include <sys/prctl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "pmc.h"
#include "shim_internal.hpp"

extern "C" {
#include "_cgo_export.h"
}

void shim_install_profiler_hook();

namespace {

decltype(hsa_amd_memory_async_copy) *g_next_copy;
hsa_status_t (*g_next_copy_on_engine)(void *, hsa_agent_t, const void *, hsa_agent_t, size_t, uint32_t,
                                      const hsa_signal_t *, hsa_signal_t, uint32_t, bool);
decltype(hsa_amd_memory_async_copy_rect) *g_next_copy_rect;
decltype(hsa_amd_profiling_async_copy_enable) *g_next_copy_enable;
decltype(hsa_amd_memory_pool_allocate) *g_next_pool_allocate;
decltype(hsa_amd_memory_pool_free) *g_next_pool_free;
// The virtual memory API (ROCR 6.0+) is not in the host's 5.2 headers:
// hsa_amd_vmem_handle_create(pool, size, type, flags, handle*) and
// hsa_amd_vmem_handle_release(handle); the handle is one uint64_t.
hsa_status_t (*g_next_vmem_create)(hsa_amd_memory_pool_t, size_t, uint32_t, uint64_t, uint64_t *);
hsa_status_t (*g_next_vmem_release)(uint64_t);
decltype(hsa_memory_allocate) *g_next_allocate;
decltype(hsa_memory_free) *g_next_free;
decltype(hsa_executable_freeze) *g_next_freeze;
decltype(hsa_executable_destroy) *g_next_exec_destroy;

// A traced copy. It runs on one of our signals (`ours`); whoever claims it
// once that signal completes (copy_claim: the completion thread, or an app
// thread waiting on `app`, see "waiters" below) records it and then passes
// the completion on to the app's signal. refs counts the holders: the
// completion thread, the waiters' registry, a waiter; the last one frees it.
struct Copy {
    hsa_signal_t ours;
    hsa_signal_t app;
    bool record; // the memory-copy domain is on (else it is only fenced)
    bool fenced; // registered with the counters' copy fence
    int nheld;                                   // the fence's signals this copy waits for
    hsa_signal_t held[SHIM_PMC_MAX_AGENTS + 1];
    rpg_memory_copy_rec rec;
    Copy *next;  // in the completion thread's lists
    Copy *wnext; // in the waiters' registry
    int refs;    // atomic
    int claimed; // atomic: 0, then 1 for good
};

// The runtime ties a copy's timestamps to the signal the copy ran with,
// which is ours; the app may still ask for them on its own signal
// (hsa_amd_profiling_get_async_copy_time), so the latest times of each app
// signal are kept here and answered by hook_copy_time.
const uint32_t kCopyTimes = 4096;
struct CopyTime {
    uint64_t signal;
    uint64_t start, end;
};
CopyTime g_copy_times[kCopyTimes];
pthread_mutex_t g_copy_times_lock = PTHREAD_MUTEX_INITIALIZER;

uint32_t copy_time_slot(uint64_t sig) { return (uint32_t)((sig >> 6) * 0x9E3779B1u) % kCopyTimes; }

void copy_time_put(uint64_t sig, uint64_t start, uint64_t end)
{
    pthread_mutex_lock(&g_copy_times_lock);
    CopyTime *e = &g_copy_times[copy_time_slot(sig)];
    *e = CopyTime{sig, start, end};
    pthread_mutex_unlock(&g_copy_times_lock);
}

bool copy_time_get(uint64_t sig, hsa_amd_profiling_async_copy_time_t *t)
{
    pthread_mutex_lock(&g_copy_times_lock);
    CopyTime e = g_copy_times[copy_time_slot(sig)];
    pthread_mutex_unlock(&g_copy_times_lock);
    if (e.signal != sig)
        return false;
    t->start = e.start;
    t->end = e.end;
    return true;
}

decltype(hsa_amd_profiling_get_async_copy_time) *g_next_copy_time;

hsa_status_t hook_copy_time(hsa_signal_t sig, hsa_amd_profiling_async_copy_time_t *t)
{
    // A signal a traced (or fenced) copy completed: our times are its latest.
    if (t && copy_time_get(sig.handle, t))
        return HSA_STATUS_SUCCESS;
    return g_next_copy_time(sig, t);
}

// Copies submitted and not yet recorded: the exit drain waits for them.
std::atomic<int> g_copies_outstanding;

bool copy_claim(Copy *c)
{
    int no = 0;
    return __atomic_compare_exchange_n(&c->claimed, &no, 1, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}

void copy_unref(Copy *c)
{
    if (__atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        if (!c->fenced || shim_pmc_copy_done(c->ours, c->held, c->nheld))
            shim_signal_put(c->ours);
        free(c);
    }
}

// Records a claimed copy, then completes the app's signal: the record exists
// before the app can see the copy done.
void copy_finish(Copy *c)
{
    hsa_amd_profiling_async_copy_time_t t{0, 0};
    bool timed = shim_amd.hsa_amd_profiling_get_async_copy_time_fn(c->ours, &t) == HSA_STATUS_SUCCESS;
    if (timed) {
        c->rec.start_ns = t.start;
        c->rec.end_ns = t.end;
    }
    if (c->record) {
        rpg_record_memory_copy(&c->rec);
        __atomic_fetch_add(&shim_counters.copies, 1, __ATOMIC_RELAXED);
    }
    if (c->app.handle) {
        if (timed)
            copy_time_put(c->app.handle, t.start, t.end);
        shim_core.hsa_signal_subtract_screlease_fn(c->app, 1);
    }
    g_copies_outstanding.fetch_sub(1, std::memory_order_release);
}

// ---- waiters ------------------------------------------------------------------

// A synchronous copy's app thread waits on the app's signal (ROCclr:
// hsa_signal_wait_scacquire, LT 1, first actively for 30 us, then blocked).
// That signal only completes when the shim passes the completion on, so
// left to the completion thread every such copy cost the app its wake-up
// latency (+50-90 us per copy on these VMs, spent polling in the runtime's
// wait). Instead, a copy whose app signal can be waited on is registered
// here, and the wait hooks wait on our signal in the app's own thread, with
// the app's timeout and wait hint, then claim and finish the copy there. The
// completion thread finishes the copies nobody waits on. The registry is a
// short list (copies in flight with a waiter), so a wait that is not for a
// traced copy costs one load while it is empty.
pthread_mutex_t g_waitable_lock = PTHREAD_MUTEX_INITIALIZER;
Copy *g_waitable;
int g_waitable_n; // atomic: entries in g_waitable

void waitable_add(Copy *c)
{
    __atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&g_waitable_lock);
    c->wnext = g_waitable;
    g_waitable = c;
    __atomic_add_fetch(&g_waitable_n, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&g_waitable_lock);
}

// Drops a claimed copy from the registry (and the registry's reference).
void waitable_remove(Copy *c)
{
    bool found = false;
    pthread_mutex_lock(&g_waitable_lock);
    for (Copy **pp = &g_waitable; *pp; pp = &(*pp)->wnext) {
        if (*pp == c) {
            *pp = c->wnext;
            __atomic_sub_fetch(&g_waitable_n, 1, __ATOMIC_RELEASE);
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&g_waitable_lock);
    if (found)
        copy_unref(c);
}

// The registered copy that completes `app`, with a reference for the caller.
Copy *waitable_get(uint64_t app)
{
    Copy *found = nullptr;
    pthread_mutex_lock(&g_waitable_lock);
    for (Copy *c = g_waitable; c; c = c->wnext) {
        if (c->app.handle == app) {
            __atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
            found = c;
            break;
        }
    }
    pthread_mutex_unlock(&g_waitable_lock);
    return found;
}

// Claims and finishes c if nobody has (its signal has completed).
void copy_complete(Copy *c)
{
    if (copy_claim(c)) {
        waitable_remove(c);
        copy_finish(c);
    }
}

// Queues are intercepted (kernel tracing, counters): waits may finish their
// packets (shim_queue_assist).
bool g_assist_queues;

decltype(hsa_signal_wait_scacquire) *g_next_wait_scacquire;
decltype(hsa_signal_wait_relaxed) *g_next_wait_relaxed;

// The registered copy that completes `app` (its signal held 1 when the copy
// was submitted): wait on the copy's own signal with the app's timeout and
// wait hint, and finish the copy here if it completed. Same contract as
// shim_queue_assist: false when `app` is no registered copy's.
bool copy_assist(hsa_signal_t app, uint64_t timeout, hsa_wait_state_t hint, bool *done)
{
    Copy *c = __atomic_load_n(&g_waitable_n, __ATOMIC_ACQUIRE) ? waitable_get(app.handle)
                                                                : nullptr;
    if (!c)
        return false;
    *done = shim_core.hsa_signal_wait_scacquire_fn(c->ours, HSA_SIGNAL_CONDITION_LT, 1, timeout,
                                                   hint) < 1;
    if (*done)
        copy_complete(c);
    copy_unref(c);
    return true;
}

// An app's wait for its signal to drop below 1: when the signal is a traced
// copy's or an intercepted packet's, the copy or the packet is finished in
// this thread first (copy_assist, shim_queue_assist). Then the app's own
// wait: done, its signal is (or, if the completion thread got there first,
// is about to be) complete; not done, the app's timeout has passed and the
// wait returns its signal's value at once.
template <decltype(hsa_signal_wait_scacquire) **Next>
hsa_signal_value_t hook_wait(hsa_signal_t sig, hsa_signal_condition_t cond,
                             hsa_signal_value_t cmp, uint64_t timeout, hsa_wait_state_t hint)
{
    bool done = false;
    if (((cond == HSA_SIGNAL_CONDITION_LT && cmp == 1) ||
         (cond == HSA_SIGNAL_CONDITION_EQ && cmp == 0)) &&
        (copy_assist(sig, timeout, hint, &done) ||
         (g_assist_queues && shim_queue_assist(sig, timeout, hint, &done))))
        return (*Next)(sig, cond, cmp, done ? timeout : 0, hint);
    return (*Next)(sig, cond, cmp, timeout, hint);
}

// ---- the copy completion thread -------------------------------------------------

// One thread per process polls the outstanding copies' signals (a load each)
// and naps between rounds with a growing backoff, woken at once when a copy
// is submitted. Copies may complete in any order. It never calls the
// runtime's waits: each of those polls for 200 us before it sleeps.
struct CopyCompletions {
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    Copy *submitted = nullptr;        // handed over, not yet seen by the thread
    std::atomic<uint32_t> kick{0};    // futex word: bumped on every submission
    std::atomic<uint32_t> napping{0}; // the thread waits on kick
    std::atomic<bool> stopping{false};
    bool started = false;
    pid_t pid = 0; // the process the thread runs in
} g_cc;

// The naps: 10 us doubling to 160 us, then 500 us, from the last completion
// or submission on. A copy still running after n naps costs n futex waits of
// CPU and is seen complete at most one nap late. No spinning: it competes
// with the app's own threads, which already poll in the runtime's waits. The
// thread's timer slack is 1 ns: the default 50 us would stretch every nap.
const long kFirstNapNs = 10000, kMaxNapNs = 500000;

void *copy_completion_thread(void *)
{
    CopyCompletions &cc = g_cc;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    Copy *mine = nullptr; // outstanding copies this thread has taken
    int naps = 0;
    for (;;) {
        uint32_t kick = cc.kick.load(std::memory_order_acquire);
        pthread_mutex_lock(&cc.lock);
        Copy *add = cc.submitted;
        cc.submitted = nullptr;
        pthread_mutex_unlock(&cc.lock);
        if (add)
            naps = 0;
        while (add) {
            Copy *n = add->next;
            add->next = mine;
            mine = add;
            add = n;
        }
        if (!mine) {
            if (cc.stopping.load())
                return nullptr;
            cc.napping.store(1, std::memory_order_seq_cst);
            if (cc.kick.load(std::memory_order_seq_cst) == kick && !cc.stopping.load())
                shim_futex(&cc.kick, FUTEX_WAIT_PRIVATE, kick, nullptr);
            cc.napping.store(0, std::memory_order_relaxed);
            continue;
        }
        bool progress = false;
        for (Copy **pp = &mine; *pp;) {
            Copy *c = *pp;
            if (shim_core.hsa_signal_load_scacquire_fn(c->ours) < 1) {
                *pp = c->next;
                copy_complete(c); // unless a waiter has
                copy_unref(c);
                progress = true;
            } else {
                pp = &c->next;
            }
        }
        if (cc.stopping.load()) {
            // hsa_shut_down: what is still running will not complete. A
            // waiter that still holds one of these finds it claimed.
            while (mine) {
                Copy *n = mine->next;
                if (copy_claim(mine)) {
                    waitable_remove(mine);
                    g_copies_outstanding.fetch_sub(1, std::memory_order_release);
                }
                copy_unref(mine);
                mine = n;
            }
            continue;
        }
        if (progress) {
            naps = 0;
            continue;
        }
        long ns = naps < 5 ? kFirstNapNs << naps : kMaxNapNs;
        if (ns > kMaxNapNs)
            ns = kMaxNapNs;
        naps++;
        struct timespec ts = {0, ns};
        cc.napping.store(1, std::memory_order_seq_cst);
        if (cc.kick.load(std::memory_order_seq_cst) == kick)
            shim_futex(&cc.kick, FUTEX_WAIT_PRIVATE, kick, &ts);
        cc.napping.store(0, std::memory_order_relaxed);
    }
}

// A fork child has no completion thread and none of its parent's copies.
void cc_before_fork()
{
    pthread_mutex_lock(&g_cc.lock);
    pthread_mutex_lock(&g_waitable_lock);
}
void cc_after_fork_parent()
{
    pthread_mutex_unlock(&g_waitable_lock);
    pthread_mutex_unlock(&g_cc.lock);
}
void cc_after_fork_child()
{
    pthread_mutex_unlock(&g_waitable_lock);
    pthread_mutex_unlock(&g_cc.lock);
    g_waitable = nullptr;
    g_waitable_n = 0;
    g_cc.submitted = nullptr;
    g_cc.started = false;
    g_cc.stopping.store(false);
    g_cc.napping.store(0);
    g_copies_outstanding.store(0);
}

// Hands a submitted copy to the completion thread (started on the first
// copy of each process); false if the thread cannot run.
bool cc_take(Copy *c)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, [] { pthread_atfork(cc_before_fork, cc_after_fork_parent, cc_after_fork_child); });
    CopyCompletions &cc = g_cc;
    pthread_mutex_lock(&cc.lock);
    if (cc.stopping.load()) {
        pthread_mutex_unlock(&cc.lock);
        return false;
    }
    if (!cc.started) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_t t;
        bool ok = pthread_create(&t, &attr, copy_completion_thread, nullptr) == 0;
        pthread_attr_destroy(&attr);
        if (!ok) {
            pthread_mutex_unlock(&cc.lock);
            return false;
        }
        pthread_setname_np(t, "rpg-copies");
        cc.started = true;
        cc.pid = getpid();
    }
    c->next = cc.submitted;
    cc.submitted = c;
    g_copies_outstanding.fetch_add(1, std::memory_order_relaxed);
    pthread_mutex_unlock(&cc.lock);
    cc.kick.fetch_add(1, std::memory_order_seq_cst);
    if (cc.napping.load(std::memory_order_seq_cst))
        shim_futex(&cc.kick, FUTEX_WAKE_PRIVATE, 1, nullptr);
    return true;
}

uint32_t direction(bool src_gpu, bool dst_gpu)
{
    if (src_gpu)
        return dst_gpu ? RPG_COPY_DEVICE_TO_DEVICE : RPG_COPY_DEVICE_TO_HOST;
    return dst_gpu ? RPG_COPY_HOST_TO_DEVICE : RPG_COPY_HOST_TO_HOST;
}

// Prepares a traced copy (or, while counting, a fenced one); nullptr means
// run it as is.
Copy *copy_begin(hsa_signal_t app)
{
    bool record = rpg_domains & RPG_DOMAIN_MEMORY_COPY;
    if (!record && !shim_pmc_fencing())
        return nullptr;
    Copy *c = (Copy *)calloc(1, sizeof(Copy));
    if (!c)
        return nullptr;
    c->ours = shim_signal_get();
    if (!c->ours.handle) {
        free(c);
        return nullptr;
    }
    c->app = app;
    c->record = record;
    c->refs = 1; // the completion thread's
    c->rec.tid = rpg_tid();
    c->rec.correlation_id = shim_correlation();
    c->rec.stream_id = shim_hip_stream();
    return c;
}

// Submits a prepared copy through submit(deps): as is, or while counting
// behind the counters' fence (shim_pmc_fenced_copy).
template <typename F> hsa_status_t copy_submit(Copy *c, uint32_t num_dep, const hsa_signal_t *deps, F submit)
{
    if (!shim_pmc_fencing())
        return submit(num_dep, deps);
    hsa_status_t st = shim_pmc_fenced_copy(
        c->ours, num_dep, deps,
        [](void *ctx, uint32_t n, const hsa_signal_t *d) { return (*static_cast<F *>(ctx))(n, d); },
        &submit, c->held, &c->nheld);
    c->fenced = st == HSA_STATUS_SUCCESS;
    return st;
}

hsa_status_t copy_submitted(Copy *c, hsa_status_t st)
{
    if (st != HSA_STATUS_SUCCESS) {
        copy_unref(c);
        return st;
    }
    // Registered before the completion thread has it, so that a waiter
    // always finds it. Only an app signal at 1 ends exactly when this copy
    // completes; any other is left to the completion thread.
    if (c->app.handle && shim_core.hsa_signal_load_relaxed_fn(c->app) == 1)
        waitable_add(c);
    // Without a completion thread the copy still completes on our signal:
    // wait here so that the app's signal is not lost.
    if (!cc_take(c)) {
        shim_core.hsa_signal_wait_scacquire_fn(c->ours, HSA_SIGNAL_CONDITION_LT, 1, UINT64_MAX,
                                               HSA_WAIT_STATE_BLOCKED);
        g_copies_outstanding.fetch_add(1, std::memory_order_relaxed); // copy_finish's
        copy_complete(c);
        copy_unref(c);
    }
    return st;
}

// A linear copy's record: direction, agents, bytes, addresses.
void describe_copy(Copy *c, void *dst, hsa_agent_t dst_agent, const void *src, hsa_agent_t src_agent,
                   size_t size)
{
    const ShimAgent *s = shim_find_agent(src_agent), *d = shim_find_agent(dst_agent);
    c->rec.direction = direction(s && s->type == HSA_DEVICE_TYPE_GPU,
                                 d && d->type == HSA_DEVICE_TYPE_GPU);
    c->rec.src_agent_node = s ? s->node : 0;
    c->rec.dst_agent_node = d ? d->node : 0;
    c->rec.bytes = size;
    c->rec.src_address = (uint64_t)(uintptr_t)src;
    c->rec.dst_address = (uint64_t)(uintptr_t)dst;
}

hsa_status_t hook_copy(void *dst, hsa_agent_t dst_agent, const void *src, hsa_agent_t src_agent,
                       size_t size, uint32_t num_dep, const hsa_signal_t *deps,
                       hsa_signal_t completion)
{
    Copy *c = copy_begin(completion);
    if (!c)
        return g_next_copy(dst, dst_agent, src, src_agent, size, num_dep, deps, completion);
    describe_copy(c, dst, dst_agent, src, src_agent, size);
    return copy_submitted(c, copy_submit(c, num_dep, deps, [&](uint32_t n, const hsa_signal_t *d) {
                              return g_next_copy(dst, dst_agent, src, src_agent, size, n, d, c->ours);
                          }));
}

// ROCm 6's copy on a chosen SDMA engine (HIP 6 copies only through it). Its
// prototype is declared here: the shim is built against ROCm 5.2's headers,
// which predate it (the engine id is an enum, passed as a 32-bit integer).
hsa_status_t hook_copy_on_engine(void *dst, hsa_agent_t dst_agent, const void *src,
                                 hsa_agent_t src_agent, size_t size, uint32_t num_dep,
                                 const hsa_signal_t *deps, hsa_signal_t completion, uint32_t engine,
                                 bool force_sdma)
{
    Copy *c = copy_begin(completion);
    if (!c)
        return g_next_copy_on_engine(dst, dst_agent, src, src_agent, size, num_dep, deps, completion,
                                     engine, force_sdma);
    describe_copy(c, dst, dst_agent, src, src_agent, size);
    return copy_submitted(c, copy_submit(c, num_dep, deps, [&](uint32_t n, const hsa_signal_t *d) {
                              return g_next_copy_on_engine(dst, dst_agent, src, src_agent, size, n, d,
                                                           c->ours, engine, force_sdma);
                          }));
}

hsa_status_t hook_copy_rect(const hsa_pitched_ptr_t *dst, const hsa_dim3_t *dst_offset,
                            const hsa_pitched_ptr_t *src, const hsa_dim3_t *src_offset,
                            const hsa_dim3_t *range, hsa_agent_t copy_agent,
                            hsa_amd_copy_direction_t dir, uint32_t num_dep,
                            const hsa_signal_t *deps, hsa_signal_t completion)
{
    Copy *c = copy_begin(completion);
    if (!c)
        return g_next_copy_rect(dst, dst_offset, src, src_offset, range, copy_agent, dir, num_dep,
                                deps, completion);
    static const uint32_t dirs[] = {RPG_COPY_HOST_TO_HOST, RPG_COPY_HOST_TO_DEVICE,
                                    RPG_COPY_DEVICE_TO_HOST, RPG_COPY_DEVICE_TO_DEVICE};
    c->rec.direction = (unsigned)dir < 4 ? dirs[dir] : RPG_COPY_DEVICE_TO_DEVICE;
    const ShimAgent *gpu = shim_find_agent(copy_agent), *host = shim_host_agent();
    uint32_t g = gpu ? gpu->node : 0, h = host ? host->node : 0;
    bool src_gpu = c->rec.direction == RPG_COPY_DEVICE_TO_HOST ||
                   c->rec.direction == RPG_COPY_DEVICE_TO_DEVICE;
    bool dst_gpu = c->rec.direction == RPG_COPY_HOST_TO_DEVICE ||
                   c->rec.direction == RPG_COPY_DEVICE_TO_DEVICE;
    c->rec.src_agent_node = src_gpu ? g : h;
    c->rec.dst_agent_node = dst_gpu ? g : h;
    if (range)
        c->rec.bytes = (uint64_t)range->x * range->y * range->z;
    c->rec.src_address = src ? (uint64_t)(uintptr_t)src->base : 0;
    c->rec.dst_address = dst ? (uint64_t)(uintptr_t)dst->base : 0;
    return copy_submitted(c, copy_submit(c, num_dep, deps, [&](uint32_t n, const hsa_signal_t *d) {
                              return g_next_copy_rect(dst, dst_offset, src, src_offset, range,
                                                      copy_agent, dir, n, d, c->ours);
                          }));
}

// Copy timestamps must stay on while copies are traced, whatever the app asks.
hsa_status_t hook_copy_enable(bool enable)
{
    if (rpg_domains & RPG_DOMAIN_MEMORY_COPY)
        enable = true;
    return g_next_copy_enable(enable);
}

void record_alloc(uint32_t op, uint32_t node, const void *ptr, size_t size, uint64_t corr,
                  uint64_t t0)
{
    rpg_memory_allocation_rec r;
    memset(&r, 0, sizeof r);
    r.operation = op;
    r.agent_node = node;
    r.address = (uint64_t)(uintptr_t)ptr;
    r.size = size;
    r.correlation_id = corr;
    r.start_ns = t0;
    r.end_ns = rpg_now();
    rpg_record_memory_allocation(&r);
}

hsa_status_t hook_pool_allocate(hsa_amd_memory_pool_t pool, size_t size, uint32_t flags,
                                void **ptr)
{
    if (!(rpg_domains & RPG_DOMAIN_MEMORY_ALLOCATION))
        return g_next_pool_allocate(pool, size, flags, ptr);
    uint64_t corr = shim_correlation(), t0 = rpg_now();
    hsa_status_t st = g_next_pool_allocate(pool, size, flags, ptr);
    if (st == HSA_STATUS_SUCCESS && ptr)
        record_alloc(RPG_ALLOC_ALLOCATE, shim_pool_node(pool.handle), *ptr, size, corr, t0);
    return st;
}

hsa_status_t hook_pool_free(void *ptr)
{
    if (!(rpg_domains & RPG_DOMAIN_MEMORY_ALLOCATION))
        return g_next_pool_free(ptr);
    uint64_t corr = shim_correlation(), t0 = rpg_now();
    hsa_status_t st = g_next_pool_free(ptr);
    if (st == HSA_STATUS_SUCCESS)
        record_alloc(RPG_ALLOC_FREE, 0, ptr, 0, corr, t0);
    return st;
}

// As rocprofv3: VMEM_ALLOCATE carries the handle as its address, the size
// and the pool's agent; VMEM_FREE the handle, size 0.
hsa_status_t hook_vmem_create(hsa_amd_memory_pool_t pool, size_t size, uint32_t type, uint64_t flags,
                              uint64_t *handle)
{
    if (!(rpg_domains & RPG_DOMAIN_MEMORY_ALLOCATION))
        return g_next_vmem_create(pool, size, type, flags, handle);
    uint64_t corr = shim_correlation(), t0 = rpg_now();
    hsa_status_t st = g_next_vmem_create(pool, size, type, flags, handle);
    if (st == HSA_STATUS_SUCCESS && handle)
        record_alloc(RPG_ALLOC_VMEM_ALLOCATE, shim_pool_node(pool.handle), (const void *)(uintptr_t)*handle,
                     size, corr, t0);
    return st;
}

hsa_status_t hook_vmem_release(uint64_t handle)
{
    if (!(rpg_domains & RPG_DOMAIN_MEMORY_ALLOCATION))
        return g_next_vmem_release(handle);
    uint64_t corr = shim_correlation(), t0 = rpg_now();
    hsa_status_t st = g_next_vmem_release(handle);
    if (st == HSA_STATUS_SUCCESS)
        record_alloc(RPG_ALLOC_VMEM_FREE, 0, (const void *)(uintptr_t)handle, 0, corr, t0);
    return st;
}

hsa_status_t hook_allocate(hsa_region_t region, size_t size, void **ptr)
{
    if (!(rpg_domains & RPG_DOMAIN_MEMORY_ALLOCATION))
        return g_next_allocate(region, size, ptr);
    uint64_t corr = shim_correlation(), t0 = rpg_now();
    hsa_status_t st = g_next_allocate(region, size, ptr);
    if (st == HSA_STATUS_SUCCESS && ptr)
        record_alloc(RPG_ALLOC_ALLOCATE, shim_pool_node(region.handle), *ptr, size, corr, t0);
    return st;
}

hsa_status_t hook_free(void *ptr)
{
    if (!(rpg_domains & RPG_DOMAIN_MEMORY_ALLOCATION))
        return g_next_free(ptr);
    uint64_t corr = shim_correlation(), t0 = rpg_now();
    hsa_status_t st = g_next_free(ptr);
    if (st == HSA_STATUS_SUCCESS)
        record_alloc(RPG_ALLOC_FREE, 0, ptr, 0, corr, t0);
    return st;
}

// Kernel names are needed whenever dispatches are traced, and code objects
// for any activity: symbols are gathered at every freeze.
hsa_status_t hook_freeze(hsa_executable_t exec, const char *options)
{
    bool held = shim_pmc_exclusive_begin();
    hsa_status_t st = g_next_freeze(exec, options);
    shim_pmc_exclusive_end(held);
    // Thread trace alone records nothing else but needs the kernel filters.
    if (st == HSA_STATUS_SUCCESS && (rpg_domains || shim_pmc_on) && shim_go_ok()) {
        rpgGoExecutableFrozen(exec.handle);
        shim_drop_startup_pages(); // what that Go call faulted in (footprint.c)
    }
    return st;
}

// The runtime's calls that run blit kernels of their own (counters must not
// see them): exclusive of counted dispatches.
decltype(hsa_executable_load_agent_code_object) *g_next_load_agent_co;
decltype(hsa_executable_load_code_object) *g_next_load_co;
decltype(hsa_memory_copy) *g_next_memory_copy;
decltype(hsa_amd_memory_fill) *g_next_memory_fill;

template <typename Next, typename... Args> hsa_status_t exclusive(Next next, Args... args)
{
    bool held = shim_pmc_exclusive_begin();
    hsa_status_t st = next(args...);
    shim_pmc_exclusive_end(held);
    return st;
}

hsa_status_t hook_load_agent_co(hsa_executable_t e, hsa_agent_t a, hsa_code_object_reader_t r,
                                const char *opts, hsa_loaded_code_object_t *out)
{
    return exclusive(g_next_load_agent_co, e, a, r, opts, out);
}
hsa_status_t hook_load_co(hsa_executable_t e, hsa_agent_t a, hsa_code_object_t co, const char *opts)
{
    return exclusive(g_next_load_co, e, a, co, opts);
}
hsa_status_t hook_memory_copy(void *dst, const void *src, size_t size)
{
    return exclusive(g_next_memory_copy, dst, src, size);
}
hsa_status_t hook_memory_fill(void *ptr, uint32_t value, size_t count)
{
    return exclusive(g_next_memory_fill, ptr, value, count);
}

hsa_status_t hook_exec_destroy(hsa_executable_t exec)
{
    if (rpg_domains && shim_go_ok()) {
        rpgGoExecutableDestroyed(exec.handle);
        shim_drop_startup_pages();
    }
    return g_next_exec_destroy(exec);
}

} // namespace

void shim_install_activity_hooks()
{
#define CORE_HOOK(name, next, fn) shim_hook(SHIM_CORE, CORE_##name, &next, fn)
#define AMD_HOOK(name, next, fn) shim_hook(SHIM_AMD, AMD_##name, &next, fn)
    CORE_HOOK(hsa_memory_allocate, g_next_allocate, hook_allocate);
    CORE_HOOK(hsa_memory_free, g_next_free, hook_free);
    CORE_HOOK(hsa_executable_freeze, g_next_freeze, hook_freeze);
    CORE_HOOK(hsa_executable_destroy, g_next_exec_destroy, hook_exec_destroy);
    if (shim_pmc_on) {
        CORE_HOOK(hsa_executable_load_agent_code_object, g_next_load_agent_co, hook_load_agent_co);
        CORE_HOOK(hsa_executable_load_code_object, g_next_load_co, hook_load_co);
        CORE_HOOK(hsa_memory_copy, g_next_memory_copy, hook_memory_copy);
        AMD_HOOK(hsa_amd_memory_fill, g_next_memory_fill, hook_memory_fill);
    }
    g_assist_queues = (rpg_domains & (RPG_DOMAIN_KERNEL | RPG_DOMAIN_COUNTER)) || shim_pmc_on;
    if ((rpg_domains & RPG_DOMAIN_MEMORY_COPY) || g_assist_queues) {
        CORE_HOOK(hsa_signal_wait_scacquire, g_next_wait_scacquire, hook_wait<&g_next_wait_scacquire>);
        CORE_HOOK(hsa_signal_wait_relaxed, g_next_wait_relaxed, hook_wait<&g_next_wait_relaxed>);
    }
    AMD_HOOK(hsa_amd_memory_async_copy, g_next_copy, hook_copy);
    AMD_HOOK(hsa_amd_memory_async_copy_on_engine, g_next_copy_on_engine, hook_copy_on_engine);
    AMD_HOOK(hsa_amd_memory_async_copy_rect, g_next_copy_rect, hook_copy_rect);
    AMD_HOOK(hsa_amd_profiling_async_copy_enable, g_next_copy_enable, hook_copy_enable);
    AMD_HOOK(hsa_amd_profiling_get_async_copy_time, g_next_copy_time, hook_copy_time);
    AMD_HOOK(hsa_amd_memory_pool_allocate, g_next_pool_allocate, hook_pool_allocate);
    AMD_HOOK(hsa_amd_memory_pool_free, g_next_pool_free, hook_pool_free);
    AMD_HOOK(hsa_amd_vmem_handle_create, g_next_vmem_create, hook_vmem_create);
    AMD_HOOK(hsa_amd_vmem_handle_release, g_next_vmem_release, hook_vmem_release);
    shim_install_profiler_hook();
    if ((rpg_domains & RPG_DOMAIN_MEMORY_COPY) && shim_amd.hsa_amd_profiling_async_copy_enable_fn)
        shim_amd.hsa_amd_profiling_async_copy_enable_fn(true);
}

// From OnUnload (hsa_shut_down): copies still outstanding will not complete;
// the completion thread drops them before the runtime frees their signals.
void shim_copies_shutdown()
{
    if (!g_cc.started || g_cc.pid != getpid())
        return;
    g_cc.stopping.store(true);
    g_cc.kick.fetch_add(1, std::memory_order_seq_cst);
    shim_futex(&g_cc.kick, FUTEX_WAKE_PRIVATE, 1, nullptr);
    for (int i = 0; i < 2000 && g_copies_outstanding.load(std::memory_order_acquire) > 0; i++)
        usleep(100);
}

// At exit, copies already submitted get a moment to complete and be recorded
// (an app may start an async copy and return from main). Bounded, like the
// queues' drain.
__attribute__((destructor)) static void drain_copies_at_exit()
{
    if (!g_cc.started || g_cc.pid != getpid())
        return;
    for (int i = 0; i < 2000 && g_copies_outstanding.load(std::memory_order_acquire) > 0; i++)
        usleep(100); // up to ~200 ms
}
