// activity.cpp: memory copy and allocation tracing, and the executable hooks
// that hand code objects to Go for the kernel symbol table.
//
// A traced copy runs with a completion signal of ours; the runtime's async
// handler thread calls back when it completes, the copy's timestamps are read
// and recorded, and only then is the app's signal decremented, so the app
// never sees a copy complete that is not yet recorded.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pmc.h"
#include "shim_internal.hpp"

extern "C" {
#include "_cgo_export.h"
}

void shim_install_profiler_hook(AmdExtTable *amd, uint32_t amd_size);

namespace {

decltype(hsa_amd_memory_async_copy) *g_next_copy;
decltype(hsa_amd_memory_async_copy_rect) *g_next_copy_rect;
decltype(hsa_amd_profiling_async_copy_enable) *g_next_copy_enable;
decltype(hsa_amd_memory_pool_allocate) *g_next_pool_allocate;
decltype(hsa_amd_memory_pool_free) *g_next_pool_free;
decltype(hsa_memory_allocate) *g_next_allocate;
decltype(hsa_memory_free) *g_next_free;
decltype(hsa_executable_freeze) *g_next_freeze;
decltype(hsa_executable_destroy) *g_next_exec_destroy;

struct Copy {
    hsa_signal_t ours;
    hsa_signal_t app;
    rpg_memory_copy_rec rec;
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
    // A signal a traced copy completed: our times are its latest.
    if (t && (rpg_domains & RPG_DOMAIN_MEMORY_COPY) && copy_time_get(sig.handle, t))
        return HSA_STATUS_SUCCESS;
    return g_next_copy_time(sig, t);
}

bool copy_done(hsa_signal_value_t, void *arg)
{
    Copy *c = (Copy *)arg;
    hsa_amd_profiling_async_copy_time_t t{0, 0};
    if (shim_amd.hsa_amd_profiling_get_async_copy_time_fn(c->ours, &t) == HSA_STATUS_SUCCESS) {
        c->rec.start_ns = t.start;
        c->rec.end_ns = t.end;
    }
    rpg_record_memory_copy(&c->rec);
    __atomic_fetch_add(&shim_counters.copies, 1, __ATOMIC_RELAXED);
    if (c->app.handle) {
        copy_time_put(c->app.handle, t.start, t.end);
        shim_core.hsa_signal_subtract_screlease_fn(c->app, 1);
    }
    // Recycled, not destroyed: the runtime still holds it while this
    // handler runs.
    shim_signal_put(c->ours);
    free(c);
    return false; // one-shot
}

uint32_t direction(bool src_gpu, bool dst_gpu)
{
    if (src_gpu)
        return dst_gpu ? RPG_COPY_DEVICE_TO_DEVICE : RPG_COPY_DEVICE_TO_HOST;
    return dst_gpu ? RPG_COPY_HOST_TO_DEVICE : RPG_COPY_HOST_TO_HOST;
}

// Prepares a traced copy; nullptr means run it untraced.
Copy *copy_begin(hsa_signal_t app)
{
    if (!(rpg_domains & RPG_DOMAIN_MEMORY_COPY) || !shim_amd.hsa_amd_signal_async_handler_fn)
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
    c->rec.tid = rpg_tid();
    c->rec.correlation_id = shim_correlation();
    c->rec.stream_id = shim_hip_stream();
    return c;
}

hsa_status_t copy_submitted(Copy *c, hsa_status_t st)
{
    if (st != HSA_STATUS_SUCCESS) {
        shim_signal_put(c->ours);
        free(c);
        return st;
    }
    // If the handler cannot be registered the copy still completes on our
    // signal: wait here so that the app's signal is not lost.
    if (shim_amd.hsa_amd_signal_async_handler_fn(c->ours, HSA_SIGNAL_CONDITION_LT, 1, copy_done,
                                                 c) != HSA_STATUS_SUCCESS) {
        shim_core.hsa_signal_wait_scacquire_fn(c->ours, HSA_SIGNAL_CONDITION_LT, 1, UINT64_MAX,
                                               HSA_WAIT_STATE_BLOCKED);
        copy_done(0, c);
    }
    return st;
}

hsa_status_t hook_copy(void *dst, hsa_agent_t dst_agent, const void *src, hsa_agent_t src_agent,
                       size_t size, uint32_t num_dep, const hsa_signal_t *deps,
                       hsa_signal_t completion)
{
    Copy *c = copy_begin(completion);
    if (!c)
        return g_next_copy(dst, dst_agent, src, src_agent, size, num_dep, deps, completion);
    const ShimAgent *s = shim_find_agent(src_agent), *d = shim_find_agent(dst_agent);
    c->rec.direction = direction(s && s->type == HSA_DEVICE_TYPE_GPU,
                                 d && d->type == HSA_DEVICE_TYPE_GPU);
    c->rec.src_agent_node = s ? s->node : 0;
    c->rec.dst_agent_node = d ? d->node : 0;
    c->rec.bytes = size;
    c->rec.src_address = (uint64_t)(uintptr_t)src;
    c->rec.dst_address = (uint64_t)(uintptr_t)dst;
    return copy_submitted(
        c, g_next_copy(dst, dst_agent, src, src_agent, size, num_dep, deps, c->ours));
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
    return copy_submitted(c, g_next_copy_rect(dst, dst_offset, src, src_offset, range, copy_agent,
                                              dir, num_dep, deps, c->ours));
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
    hsa_status_t st = g_next_freeze(exec, options);
    // Thread trace alone records nothing else but needs the kernel filters.
    if (st == HSA_STATUS_SUCCESS && (rpg_domains || shim_pmc_on) && shim_go_ok())
        rpgGoExecutableFrozen(exec.handle);
    return st;
}

hsa_status_t hook_exec_destroy(hsa_executable_t exec)
{
    if (rpg_domains && shim_go_ok())
        rpgGoExecutableDestroyed(exec.handle);
    return g_next_exec_destroy(exec);
}

template <typename T, typename F> void hook(T *table, uint32_t size, size_t off, F **next, F *fn)
{
    F **slot = (F **)((char *)table + off);
    if (off + sizeof(void *) > size || !*slot)
        return;
    *next = *slot;
    *slot = fn;
}

} // namespace

void shim_install_activity_hooks(CoreApiTable *core, AmdExtTable *amd, uint32_t core_size,
                                 uint32_t amd_size)
{
#define CORE_HOOK(member, next, fn) hook(core, core_size, offsetof(CoreApiTable, member), &next, fn)
#define AMD_HOOK(member, next, fn) hook(amd, amd_size, offsetof(AmdExtTable, member), &next, fn)
    CORE_HOOK(hsa_memory_allocate_fn, g_next_allocate, hook_allocate);
    CORE_HOOK(hsa_memory_free_fn, g_next_free, hook_free);
    CORE_HOOK(hsa_executable_freeze_fn, g_next_freeze, hook_freeze);
    CORE_HOOK(hsa_executable_destroy_fn, g_next_exec_destroy, hook_exec_destroy);
    if (!amd)
        return;
    AMD_HOOK(hsa_amd_memory_async_copy_fn, g_next_copy, hook_copy);
    AMD_HOOK(hsa_amd_memory_async_copy_rect_fn, g_next_copy_rect, hook_copy_rect);
    AMD_HOOK(hsa_amd_profiling_async_copy_enable_fn, g_next_copy_enable, hook_copy_enable);
    AMD_HOOK(hsa_amd_profiling_get_async_copy_time_fn, g_next_copy_time, hook_copy_time);
    AMD_HOOK(hsa_amd_memory_pool_allocate_fn, g_next_pool_allocate, hook_pool_allocate);
    AMD_HOOK(hsa_amd_memory_pool_free_fn, g_next_pool_free, hook_pool_free);
    shim_install_profiler_hook(amd, amd_size);
    if ((rpg_domains & RPG_DOMAIN_MEMORY_COPY) && shim_amd.hsa_amd_profiling_async_copy_enable_fn)
        shim_amd.hsa_amd_profiling_async_copy_enable_fn(true);
}
