// pmc.cpp: the native half of counter collection (see pmc.h): agent
// descriptions and buffers for Go's set-up, the per-kernel-object filter
// cache, and the per-dispatch packet expansion and slot bookkeeping on the
// app's and the completion threads. Nothing here calls Go except
// shim_pmc_init (OnLoad) and shim_pmc_complete (completion thread).
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
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

shim_pmc_stats shim_pmc_counters;
int shim_pmc_on;

namespace {

// ---- agents and memory ---------------------------------------------------------

template <typename T> T info(hsa_agent_t a, int attr)
{
    T v{};
    shim_core.hsa_agent_get_info_fn(a, (hsa_agent_info_t)attr, &v);
    return v;
}

struct AgentList {
    shim_pmc_agent_desc *out;
    int cap, n;
};

hsa_status_t lds_size(hsa_amd_memory_pool_t p, void *data)
{
    hsa_amd_segment_t seg;
    if (shim_amd.hsa_amd_memory_pool_get_info_fn(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg) ==
            HSA_STATUS_SUCCESS &&
        seg == HSA_AMD_SEGMENT_GROUP) {
        size_t size = 0;
        shim_amd.hsa_amd_memory_pool_get_info_fn(p, HSA_AMD_MEMORY_POOL_INFO_SIZE, &size);
        *(uint64_t *)data = size;
    }
    return HSA_STATUS_SUCCESS;
}

hsa_status_t add_gpu(hsa_agent_t a, void *data)
{
    AgentList *l = (AgentList *)data;
    if (info<hsa_device_type_t>(a, HSA_AGENT_INFO_DEVICE) != HSA_DEVICE_TYPE_GPU)
        return HSA_STATUS_SUCCESS;
    if (l->n < l->cap) {
        shim_pmc_agent_desc *d = &l->out[l->n];
        memset(d, 0, sizeof *d);
        d->handle = a.handle;
        d->node = info<uint32_t>(a, HSA_AMD_AGENT_INFO_DRIVER_NODE_ID);
        d->gpu_index = (uint32_t)l->n;
        shim_core.hsa_agent_get_info_fn(a, HSA_AGENT_INFO_NAME, d->name);
        d->name[sizeof d->name - 1] = 0;
        d->cu_count = info<uint32_t>(a, HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT);
        d->simd_per_cu = info<uint32_t>(a, HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU);
        d->se_count = info<uint32_t>(a, HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES);
        d->sa_per_se = info<uint32_t>(a, HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE);
        d->num_xcc = shim_agent_num_xcc(a);
        d->wave_size = info<uint32_t>(a, HSA_AGENT_INFO_WAVEFRONT_SIZE);
        d->max_waves_per_cu = info<uint32_t>(a, HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU);
        d->clock_mhz = info<uint32_t>(a, HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY);
        d->chip_id = info<uint32_t>(a, HSA_AMD_AGENT_INFO_CHIP_ID);
        d->location_id = info<uint32_t>(a, HSA_AMD_AGENT_INFO_BDFID);
        d->domain = info<uint32_t>(a, HSA_AMD_AGENT_INFO_DOMAIN);
        if (shim_amd.hsa_amd_agent_iterate_memory_pools_fn)
            shim_amd.hsa_amd_agent_iterate_memory_pools_fn(a, lds_size, &d->lds_bytes);
    }
    l->n++;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t find_fine_pool(hsa_amd_memory_pool_t p, void *data)
{
    hsa_amd_segment_t seg;
    uint32_t flags = 0;
    bool alloc = false;
    if (shim_amd.hsa_amd_memory_pool_get_info_fn(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg) !=
            HSA_STATUS_SUCCESS ||
        seg != HSA_AMD_SEGMENT_GLOBAL)
        return HSA_STATUS_SUCCESS;
    shim_amd.hsa_amd_memory_pool_get_info_fn(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
    shim_amd.hsa_amd_memory_pool_get_info_fn(p, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
                                             &alloc);
    // Fine-grained system memory: the CP writes the output buffer and the
    // host reads it back without any copy or cache maintenance.
    if (alloc && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED)) {
        *(hsa_amd_memory_pool_t *)data = p;
        return HSA_STATUS_INFO_BREAK;
    }
    return HSA_STATUS_SUCCESS;
}

// ---- kernel decisions ------------------------------------------------------------

// Open addressing over kernel objects, never deleted from: readers (the
// intercept callback) are lock-free, writers (Go, at executable freeze) are
// serialised.
const uint32_t kKernelBits = 14;
const uint32_t kKernelSize = 1u << kKernelBits;
struct KernelEntry {
    std::atomic<uint64_t> key;
    uint8_t selected;
    std::atomic<uint64_t> iterations; // dispatches of this kernel seen so far
};
KernelEntry *g_kernels;
pthread_mutex_t g_kernels_lock = PTHREAD_MUTEX_INITIALIZER;

uint32_t kernel_hash(uint64_t k) { return (uint32_t)((k * 0x9E3779B97F4A7C15ull) >> (64 - kKernelBits)); }

KernelEntry *kernel_find(uint64_t ko)
{
    if (!g_kernels || !ko)
        return nullptr;
    for (uint32_t i = kernel_hash(ko), n = 0; n < kKernelSize; i = (i + 1) & (kKernelSize - 1), n++) {
        uint64_t k = g_kernels[i].key.load(std::memory_order_acquire);
        if (k == ko)
            return &g_kernels[i];
        if (!k)
            return nullptr;
    }
    return nullptr;
}

// ---- per-agent plans and slots ---------------------------------------------------

struct Packet {
    uint8_t b[64];
};

// The group of a slot that serialises an uncounted dispatch.
const uint32_t kNoGroup = UINT32_MAX;

struct PmcAgent;

struct PmcSlot {
    PmcAgent *agent;
    uint32_t index;
    uint32_t group;                   // the group this use of the slot collects
    hsa_signal_t signal;              // the read packet's completion, 1 -> 0
    std::atomic<int64_t> done_seq;    // last sequence number decoded in this slot
    std::atomic<uint64_t> dispatch_id;
    hsa_signal_t held;                // the copy signal this use waits for (fence_dispatch)
};

struct PmcAgent {
    uint64_t handle;
    uint32_t gpu_index, node;
    uint32_t ngroups, interval;
    uint32_t nslots;  // slots in use, 1..SHIM_PMC_SLOTS
    uint32_t npk;     // packets around the dispatch: 3 (PMC) or 2 (thread trace)
    Packet (*packets)[SHIM_PMC_SLOTS][3]; // [group][slot][start, stop, read]
    PmcSlot slots[SHIM_PMC_SLOTS];
    pthread_mutex_t lock;
    int64_t next_seq;
    uint64_t selected; // selected dispatches so far (group multiplexing)
    std::atomic<uint32_t> released{0}; // bumped whenever a slot is decoded (futex word)
    std::atomic<uint32_t> waiters{0};
    bool stuck; // a slot never came back: stop counting here rather than stall every dispatch
    bool hold_all; // thread trace with --att-serialize-all: untraced dispatches wait too
    bool has_marker; // thread trace: the loaded code objects' marker packet, after start
    Packet marker;   // (replaced under lock when a code object loads)
};

PmcAgent g_agents[SHIM_PMC_MAX_AGENTS];
int g_nagents;
std::atomic<bool> g_enabled{false};
bool g_filtered; // include/exclude regexes are set
bool g_timing;   // ROCPROF_GO_PMC_TIMING

// Thread CPU time: on a shared machine, wall time inside a call also counts
// the time the thread was not running.
uint64_t now_ns()
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void add(uint64_t *counter, uint64_t v) { __atomic_fetch_add(counter, v, __ATOMIC_RELAXED); }
uint64_t *g_ranges;
int g_nranges;

PmcAgent *agent_of(hsa_agent_t a)
{
    for (int i = 0; i < g_nagents; i++)
        if (g_agents[i].handle == a.handle)
            return &g_agents[i];
    return nullptr;
}

bool in_ranges(uint64_t n)
{
    if (!g_nranges)
        return true;
    for (int i = 0; i < g_nranges; i++)
        if (n >= g_ranges[2 * i] && n <= g_ranges[2 * i + 1])
            return true;
    return false;
}

const uint16_t kFenceSystem = HSA_FENCE_SCOPE_SYSTEM;

uint16_t header(hsa_packet_type_t type)
{
    return (uint16_t)((type << HSA_PACKET_HEADER_TYPE) | (1 << HSA_PACKET_HEADER_BARRIER) |
                      (kFenceSystem << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                      (kFenceSystem << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE));
}

// Waits (bounded) until sequence number seq may use its slot: the slot's
// previous use is decoded, and the use after that has passed its barrier on
// the slot's signal (it is decoded too), so resetting the signal cannot
// hold up a barrier that still waits for the old value.
bool slot_ready(PmcAgent *a, int64_t seq)
{
    const int64_t n = a->nslots;
    PmcSlot *s = &a->slots[seq % n];
    PmcSlot *t = &a->slots[(seq + 1) % n];
    for (int waits = 0;; waits++) {
        uint32_t epoch = a->released.load(std::memory_order_acquire);
        // One slot: the previous use must be decoded (no barrier is needed).
        if (s->done_seq.load(std::memory_order_acquire) >= seq - n &&
            (n == 1 || t->done_seq.load(std::memory_order_acquire) >= seq - n + 1))
            return true;
        if (waits >= 5000) // ~5 s: give up on counting this dispatch
            return false;
        // Sleep until the completion thread releases a slot (no polling on
        // the app's thread); the timeout only bounds a lost wake-up.
        a->waiters.fetch_add(1, std::memory_order_seq_cst);
        struct timespec ts = {0, 1000000};
        if (a->released.load(std::memory_order_seq_cst) == epoch)
            syscall(SYS_futex, (uint32_t *)&a->released, FUTEX_WAIT_PRIVATE, epoch, &ts, nullptr,
                    0);
        a->waiters.fetch_sub(1, std::memory_order_relaxed);
    }
}

thread_local hsa_kernel_dispatch_packet_t *t_out;
thread_local ShimPmcTag *t_tags;
thread_local uint64_t t_cap;

bool reserve(uint64_t n)
{
    if (n <= t_cap)
        return true;
    uint64_t cap = n < 64 ? 64 : n * 2;
    void *o = realloc(t_out, cap * sizeof *t_out);
    if (!o)
        return false;
    t_out = (hsa_kernel_dispatch_packet_t *)o;
    void *g = realloc(t_tags, cap * sizeof *t_tags);
    if (!g)
        return false;
    t_tags = (ShimPmcTag *)g;
    t_cap = cap;
    return true;
}

} // namespace

extern "C" int shim_pmc_agents(shim_pmc_agent_desc *out, int cap)
{
    AgentList l{out, cap, 0};
    shim_core.hsa_iterate_agents_fn(add_gpu, &l);
    return l.n;
}

extern "C" void *shim_pmc_alloc(uint64_t agent, uint64_t size, int zero)
{
    const ShimAgent *host = shim_host_agent();
    if (!host || !shim_amd.hsa_amd_memory_pool_allocate_fn)
        return nullptr;
    hsa_amd_memory_pool_t pool{0};
    shim_amd.hsa_amd_agent_iterate_memory_pools_fn(host->agent, find_fine_pool, &pool);
    if (!pool.handle)
        return nullptr;
    void *p = nullptr;
    if (shim_amd.hsa_amd_memory_pool_allocate_fn(pool, size, 0, &p) != HSA_STATUS_SUCCESS)
        return nullptr;
    hsa_agent_t gpu{agent};
    if (shim_amd.hsa_amd_agents_allow_access_fn)
        shim_amd.hsa_amd_agents_allow_access_fn(1, &gpu, nullptr, p);
    if (zero)
        memset(p, 0, size);
    return p;
}

extern "C" int shim_pmc_agent_add(uint64_t agent, uint32_t gpu_index, uint32_t node,
                                  uint32_t groups, uint32_t interval, uint32_t slots)
{
    if (g_nagents >= SHIM_PMC_MAX_AGENTS || !groups || groups > SHIM_PMC_MAX_GROUPS || !slots ||
        slots > SHIM_PMC_SLOTS)
        return -1;
    PmcAgent *a = &g_agents[g_nagents];
    a->packets = (Packet(*)[SHIM_PMC_SLOTS][3])calloc(groups, sizeof *a->packets);
    if (!a->packets)
        return -1;
    a->handle = agent;
    a->gpu_index = gpu_index;
    a->node = node;
    a->ngroups = groups;
    a->interval = interval ? interval : 1;
    a->nslots = slots;
    a->npk = 3;
    pthread_mutex_init(&a->lock, nullptr);
    for (int i = 0; i < (int)slots; i++) {
        PmcSlot *s = &a->slots[i];
        s->agent = a;
        s->index = (uint32_t)i;
        s->done_seq.store(i - (int64_t)slots);
        // No interrupt: the GPU completes it and the next counted dispatch's
        // barrier waits for it on the GPU; the host only polls it (the
        // completion thread) or, around the runtime's own GPU work, waits
        // for it (shim_pmc_exclusive_begin). With an interrupt signal every
        // counted dispatch also cost the GPU an event and a wake-up.
        if (shim_amd.hsa_amd_signal_create_fn(0, 0, nullptr, HSA_AMD_SIGNAL_AMD_GPU_ONLY,
                                              &s->signal) != HSA_STATUS_SUCCESS)
            return -1;
    }
    return g_nagents++;
}

extern "C" void shim_pmc_set_packets(int agent_index, uint32_t group, uint32_t slot,
                                     const void *start, const void *stop, const void *read)
{
    PmcAgent *a = &g_agents[agent_index];
    Packet *p = a->packets[group][slot];
    memcpy(p[0].b, start, 64);
    memcpy(p[1].b, stop, 64);
    if (read)
        memcpy(p[2].b, read, 64);
    else
        a->npk = 2;
    uint16_t h = header(HSA_PACKET_TYPE_VENDOR_SPECIFIC);
    for (int i = 0; i < 3; i++)
        memcpy(p[i].b, &h, sizeof h);
}

extern "C" void shim_pmc_set_marker(int agent_index, const void *packet)
{
    if (agent_index < 0 || agent_index >= g_nagents)
        return;
    PmcAgent *a = &g_agents[agent_index];
    pthread_mutex_lock(&a->lock);
    if (packet)
        memcpy(a->marker.b, packet, 64);
    a->has_marker = packet != nullptr;
    pthread_mutex_unlock(&a->lock);
}

extern "C" void shim_pmc_set_hold_all(int agent_index, int on)
{
    if (agent_index >= 0 && agent_index < g_nagents)
        g_agents[agent_index].hold_all = on != 0;
}

extern "C" void shim_pmc_set_filter(int filtered, const uint64_t *ranges, int n)
{
    g_filtered = filtered != 0;
    if (n > 0) {
        g_ranges = (uint64_t *)malloc(2 * sizeof(uint64_t) * (size_t)n);
        if (g_ranges) {
            memcpy(g_ranges, ranges, 2 * sizeof(uint64_t) * (size_t)n);
            g_nranges = n;
        }
    }
}

extern "C" void shim_pmc_kernel(uint64_t ko, int selected)
{
    if (!ko)
        return;
    pthread_mutex_lock(&g_kernels_lock);
    if (!g_kernels)
        g_kernels = (KernelEntry *)calloc(kKernelSize, sizeof(KernelEntry));
    if (g_kernels) {
        for (uint32_t i = kernel_hash(ko), n = 0; n < kKernelSize;
             i = (i + 1) & (kKernelSize - 1), n++) {
            uint64_t k = g_kernels[i].key.load(std::memory_order_relaxed);
            if (k == ko || !k) {
                g_kernels[i].selected = selected ? 1 : 0;
                g_kernels[i].key.store(ko, std::memory_order_release);
                break;
            }
        }
    }
    pthread_mutex_unlock(&g_kernels_lock);
}

void print_timing()
{
    shim_pmc_stats *c = &shim_pmc_counters;
    fprintf(stderr,
            "rocprof-go pmc: profiled=%llu barriers=%llu completed=%llu skipped=%llu "
            "filtered=%llu expand_ns=%llu wait_ns=%llu complete_ns=%llu\n",
            (unsigned long long)c->profiled, (unsigned long long)c->barriers,
            (unsigned long long)c->completed, (unsigned long long)c->skipped,
            (unsigned long long)c->filtered, (unsigned long long)c->expand_ns,
            (unsigned long long)c->wait_ns, (unsigned long long)c->complete_ns);
}

extern "C" void shim_pmc_enable(void)
{
    // ROCPROF_GO_PMC_TIMING=1: time the hot paths and print the totals at
    // exit (the benchmark's source; off, it costs one branch).
    const char *t = getenv(RPG_ENV_GO_PMC_TIMING);
    g_timing = t && t[0] == '1';
    if (g_timing)
        atexit(print_timing);
    shim_pmc_on = g_nagents > 0;
    g_enabled.store(g_nagents > 0);
}

extern "C" void shim_pmc_init(void)
{
    const char *att = getenv(RPG_ENV_ADVANCED_THREAD_TRACE);
    bool want = (rpg_domains & RPG_DOMAIN_COUNTER) || (att && att[0] == '1');
    if (!want || shim_loaded_pid != shim_pid || !shim_go_ok())
        return;
    rpgGoPMCSetup();
}

// ---- copies against counted dispatches -------------------------------------------

// A counted (or traced) dispatch's window must hold its own waves only. The
// runtime runs some copies as blit kernels on queues of its own, which the
// shim does not intercept (ROCR's "BlitKernel", e.g. a device-to-device
// hsa_amd_memory_async_copy): one running during a counted dispatch adds its
// waves to that dispatch's counters. So while counting, copies and counted
// dispatches take turns on the GPU, without blocking the host: each copy
// waits (dependency signals) for the last counted dispatch of every agent
// and for the copy submitted before it, and each counted dispatch waits (a
// barrier) for the last copy. Everything is decided under g_fence_lock, in
// one order of submission, and every added wait points to work submitted
// earlier: no cycle. Copies run one after another while counting, as counted
// dispatches already do.
//
// A signal some copy or counted dispatch waits for must not be re-armed
// before the GPU has seen it complete, or that wait never ends: a copy's own
// signal goes back to the shim's pool when the copy is done (the pool resets
// it to 1), and a slot's signal is re-armed when the slot is used again. So
// such signals are held (g_held) until their waiters have completed: a held
// copy signal goes back to the pool only then, and a slot is not reused
// while its signal is held (hold_wait).

// Nothing waits for the GPU while holding g_fence_lock: a copy's completion
// (its app signal, which later GPU work may wait for) is passed on by a
// thread that takes the lock (shim_pmc_copy_done).
pthread_mutex_t g_fence_lock = PTHREAD_MUTEX_INITIALIZER;
hsa_signal_t g_fence_copy;                      // the last copy (its own signal), until done
hsa_signal_t g_fence_last[SHIM_PMC_MAX_AGENTS]; // each agent's last counted slot
// Runtime calls in progress that run GPU work of their own (exclusive_begin);
// a futex word: counted dispatches wait for it to be 0.
std::atomic<uint32_t> g_exclusive{0};

// Signals waited for by work not yet complete.
struct Held {
    hsa_signal_t sig;
    int refs;      // waiters not yet complete
    bool released; // a copy's signal the copy is done with: back to the pool at refs 0
};
const int kHeld = 128;
Held g_held[kHeld];
int g_nheld;
std::atomic<uint32_t> g_unheld{0}; // futex word, bumped whenever a signal is let go

bool shim_pmc_fencing() { return g_enabled.load(std::memory_order_relaxed); }

// Under g_fence_lock: one more waiter for sig; false if the table is full
// (then the wait must not be added).
bool hold(hsa_signal_t sig)
{
    for (int i = 0; i < g_nheld; i++)
        if (g_held[i].sig.handle == sig.handle) {
            g_held[i].refs++;
            return true;
        }
    if (g_nheld == kHeld)
        return false;
    g_held[g_nheld++] = Held{sig, 1, false};
    return true;
}

// A waiter of sig completed; a copy signal goes back to the pool if its
// copy is done and nothing else waits for it.
void unhold(hsa_signal_t sig)
{
    if (!sig.handle)
        return;
    bool put = false, gone = false;
    pthread_mutex_lock(&g_fence_lock);
    for (int i = 0; i < g_nheld; i++)
        if (g_held[i].sig.handle == sig.handle) {
            if (--g_held[i].refs == 0) {
                put = g_held[i].released;
                g_held[i] = g_held[--g_nheld];
                gone = true;
            }
            break;
        }
    pthread_mutex_unlock(&g_fence_lock);
    if (put)
        shim_signal_put(sig);
    if (gone) {
        g_unheld.fetch_add(1, std::memory_order_seq_cst);
        syscall(SYS_futex, (uint32_t *)&g_unheld, FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
    }
}

// Before a slot's signal is re-armed: waits until no copy waits for its
// previous use (those copies wait for nothing this thread holds).
void hold_wait(hsa_signal_t sig)
{
    for (;;) {
        uint32_t epoch = g_unheld.load(std::memory_order_seq_cst);
        bool held = false;
        pthread_mutex_lock(&g_fence_lock);
        for (int i = 0; i < g_nheld && !held; i++)
            held = g_held[i].sig.handle == sig.handle;
        pthread_mutex_unlock(&g_fence_lock);
        if (!held)
            return;
        syscall(SYS_futex, (uint32_t *)&g_unheld, FUTEX_WAIT_PRIVATE, epoch, nullptr, nullptr, 0);
    }
}

hsa_status_t shim_pmc_fenced_copy(hsa_signal_t ours, uint32_t num_dep, const hsa_signal_t *deps,
                                  hsa_status_t (*submit)(void *ctx, uint32_t n, const hsa_signal_t *deps),
                                  void *ctx, hsa_signal_t *held, int *nheld)
{
    hsa_signal_t all[SHIM_PMC_MAX_AGENTS + 17];
    uint32_t n = 0;
    *nheld = 0;
    if (num_dep > 16)
        return submit(ctx, num_dep, deps); // not seen from any runtime: leave it unfenced
    for (uint32_t i = 0; i < num_dep; i++)
        all[n++] = deps[i];
    pthread_mutex_lock(&g_fence_lock);
    for (int a = 0; a < g_nagents; a++)
        if (g_fence_last[a].handle && shim_core.hsa_signal_load_relaxed_fn(g_fence_last[a]) != 0 &&
            hold(g_fence_last[a]))
            held[(*nheld)++] = all[n++] = g_fence_last[a];
    if (g_fence_copy.handle && hold(g_fence_copy))
        held[(*nheld)++] = all[n++] = g_fence_copy;
    hsa_status_t st = submit(ctx, n, n ? all : nullptr);
    if (st == HSA_STATUS_SUCCESS)
        g_fence_copy = ours;
    pthread_mutex_unlock(&g_fence_lock);
    if (st != HSA_STATUS_SUCCESS) {
        for (int i = 0; i < *nheld; i++)
            unhold(held[i]);
        *nheld = 0;
    }
    return st;
}

bool shim_pmc_copy_done(hsa_signal_t ours, const hsa_signal_t *held, int nheld)
{
    for (int i = 0; i < nheld; i++)
        unhold(held[i]); // this copy has run: its waits are over
    bool put = true;
    pthread_mutex_lock(&g_fence_lock);
    if (g_fence_copy.handle == ours.handle)
        g_fence_copy.handle = 0;
    for (int i = 0; i < g_nheld; i++)
        if (g_held[i].sig.handle == ours.handle) {
            g_held[i].released = true;
            put = false;
            break;
        }
    pthread_mutex_unlock(&g_fence_lock);
    return put;
}

// The runtime's own GPU work outside any copy call: loading a code object
// (its segments are copied by a blit kernel inside hsa_executable_freeze and
// the load calls), hsa_memory_copy, hsa_amd_memory_fill. Around such a call,
// the counted dispatches already submitted finish first and no new one is
// submitted (fence_dispatch waits); these calls are rare (module loads,
// setup). Returns whether the section was entered.
bool shim_pmc_exclusive_begin()
{
    if (!shim_pmc_fencing())
        return false;
    hsa_signal_t last[SHIM_PMC_MAX_AGENTS];
    int n = 0;
    pthread_mutex_lock(&g_fence_lock);
    g_exclusive.fetch_add(1, std::memory_order_seq_cst);
    for (int a = 0; a < g_nagents; a++)
        if (g_fence_last[a].handle)
            last[n++] = g_fence_last[a];
    pthread_mutex_unlock(&g_fence_lock);
    for (int i = 0; i < n; i++)
        shim_core.hsa_signal_wait_scacquire_fn(last[i], HSA_SIGNAL_CONDITION_LT, 1, UINT64_MAX,
                                               HSA_WAIT_STATE_BLOCKED);
    return true;
}

void shim_pmc_exclusive_end(bool entered)
{
    if (!entered)
        return;
    if (g_exclusive.fetch_sub(1, std::memory_order_seq_cst) == 1)
        syscall(SYS_futex, (uint32_t *)&g_exclusive, FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
}

// Under the agent's lock, for a counted dispatch about to use slot s: waits
// out an exclusive section, makes the dispatch the copies' new fence and
// returns the signals it must wait for: the previous counted dispatch (prev,
// if any) and the last copy, held for the slot until it completes.
int fence_dispatch(PmcAgent *a, PmcSlot *s, hsa_signal_t prev, hsa_signal_t *out)
{
    int n = 0;
    if (prev.handle)
        out[n++] = prev;
    s->held.handle = 0;
    pthread_mutex_lock(&g_fence_lock);
    for (uint32_t x; (x = g_exclusive.load(std::memory_order_seq_cst)) != 0;) {
        pthread_mutex_unlock(&g_fence_lock);
        syscall(SYS_futex, (uint32_t *)&g_exclusive, FUTEX_WAIT_PRIVATE, x, nullptr, nullptr, 0);
        pthread_mutex_lock(&g_fence_lock);
    }
    g_fence_last[a - g_agents] = s->signal;
    if (g_fence_copy.handle && shim_core.hsa_signal_load_relaxed_fn(g_fence_copy) >= 1 &&
        hold(g_fence_copy)) {
        s->held = g_fence_copy;
        out[n++] = g_fence_copy;
    }
    pthread_mutex_unlock(&g_fence_lock);
    return n;
}

uint64_t shim_pmc_expand(hsa_agent_t agent, hsa_kernel_dispatch_packet_t **pkts, uint64_t count,
                         const ShimPmcTag **tags)
{
    *tags = nullptr;
    if (!g_enabled.load(std::memory_order_relaxed))
        return count;
    PmcAgent *a = agent_of(agent);
    if (!a)
        return count;
    uint64_t t0 = g_timing ? now_ns() : 0, waited = 0;
    hsa_kernel_dispatch_packet_t *in = *pkts;
    uint64_t out = 0;
    bool any = false;
    // Room for every packet plus four more per profiled dispatch.
    if (!reserve(count * 5))
        return count;
    for (uint64_t i = 0; i < count; i++) {
        hsa_kernel_dispatch_packet_t *k = &in[i];
        uint32_t type = (k->header >> HSA_PACKET_HEADER_TYPE) & 0xff;
        bool pick = false;
        bool dispatch = type == HSA_PACKET_TYPE_KERNEL_DISPATCH;
        if (dispatch) {
            KernelEntry *e = kernel_find(k->kernel_object);
            if (e) {
                uint64_t n = e->iterations.fetch_add(1, std::memory_order_relaxed) + 1;
                pick = e->selected && in_ranges(n);
            } else {
                // Not a symbol we saw frozen: only "profile everything" covers it.
                pick = !g_filtered && !g_nranges;
            }
            if (!pick)
                __atomic_fetch_add(&shim_pmc_counters.filtered, 1, __ATOMIC_RELAXED);
        }
        // While counting, dispatches the filters leave out are serialised
        // too (not counted): on the GPU they would run during a counted one
        // and add to its counters. Thread trace serialises traced ones only,
        // or every dispatch with --att-serialize-all.
        bool hold = dispatch && !pick && (a->npk == 3 || a->hold_all);
        if (!pick && !hold) {
            t_out[out] = *k;
            t_tags[out++] = ShimPmcTag{nullptr, nullptr};
            continue;
        }
        pthread_mutex_lock(&a->lock);
        int64_t seq = a->next_seq;
        uint64_t w0 = g_timing ? now_ns() : 0;
        bool ready = !a->stuck && slot_ready(a, seq);
        if (g_timing)
            waited += now_ns() - w0;
        if (!ready && !a->stuck) {
            a->stuck = true;
            fprintf(stderr, "rocprof-go: warning: GPU %u: a counted dispatch did not complete "
                            "within 5 s; counter collection stops on this GPU\n", a->gpu_index);
        }
        if (!ready) {
            pthread_mutex_unlock(&a->lock);
            __atomic_fetch_add(&shim_pmc_counters.skipped, 1, __ATOMIC_RELAXED);
            t_out[out] = *k;
            t_tags[out++] = ShimPmcTag{nullptr, nullptr};
            continue;
        }
        a->next_seq = seq + 1;
        uint32_t group = kNoGroup;
        if (pick)
            group = (uint32_t)((a->selected++ / a->interval) % a->ngroups);
        PmcSlot *s = &a->slots[seq % a->nslots];
        // With one slot the previous use is already decoded: no barrier.
        PmcSlot *prev = seq && a->nslots > 1 ? &a->slots[(seq - 1) % a->nslots] : nullptr;
        s->group = group;
        s->dispatch_id.store(0, std::memory_order_relaxed);
        if (shim_pmc_fencing())
            hold_wait(s->signal);
        shim_core.hsa_signal_store_relaxed_fn(s->signal, 1);
        // Serialise: wait for the agent's previous profiled dispatch unless
        // it is already done (its signal went to 0), and for the copies in
        // flight (fence_dispatch).
        hsa_signal_t waits[2];
        hsa_signal_t prev_sig{0};
        if (prev && shim_core.hsa_signal_load_relaxed_fn(prev->signal) != 0)
            prev_sig = prev->signal;
        if (int nwaits = fence_dispatch(a, s, prev_sig, waits)) {
            hsa_barrier_and_packet_t b;
            memset(&b, 0, sizeof b);
            for (int d = 0; d < nwaits; d++)
                b.dep_signal[d] = waits[d];
            b.header = header(HSA_PACKET_TYPE_BARRIER_AND);
            memcpy(&t_out[out], &b, sizeof b);
            t_tags[out++] = ShimPmcTag{nullptr, nullptr};
            __atomic_fetch_add(&shim_pmc_counters.barriers, 1, __ATOMIC_RELAXED);
        }
        // Thread trace: the code-object markers follow the start packet.
        Packet mk;
        bool with_marker = pick && a->npk == 2 && a->has_marker;
        if (with_marker)
            mk = a->marker;
        pthread_mutex_unlock(&a->lock);
        any = true;
        if (hold) {
            // dispatch, then an empty barrier that completes the slot.
            t_out[out] = *k;
            t_tags[out++] = ShimPmcTag{nullptr, nullptr};
            hsa_barrier_and_packet_t b;
            memset(&b, 0, sizeof b);
            b.header = header(HSA_PACKET_TYPE_BARRIER_AND);
            b.completion_signal = s->signal;
            memcpy(&t_out[out], &b, sizeof b);
            t_tags[out++] = ShimPmcTag{nullptr, s};
            continue;
        }
        Packet *p = a->packets[group][s->index];
        memcpy(&t_out[out], p[0].b, 64);
        t_tags[out++] = ShimPmcTag{nullptr, nullptr};
        if (with_marker) {
            memcpy(&t_out[out], mk.b, 64);
            t_tags[out++] = ShimPmcTag{nullptr, nullptr};
        }
        t_out[out] = *k;
        t_tags[out++] = ShimPmcTag{s, nullptr};
        for (uint32_t j = 1; j < a->npk; j++) {
            memcpy(&t_out[out], p[j].b, 64);
            t_tags[out++] = ShimPmcTag{nullptr, nullptr};
        }
        // The last packet (read, or the thread trace's stop) completes the slot.
        t_out[out - 1].completion_signal = s->signal;
        t_tags[out - 1] = ShimPmcTag{nullptr, s};
        any = true;
        __atomic_fetch_add(&shim_pmc_counters.profiled, 1, __ATOMIC_RELAXED);
    }
    if (g_timing) {
        add(&shim_pmc_counters.expand_ns, now_ns() - t0);
        add(&shim_pmc_counters.wait_ns, waited);
    }
    if (!any)
        return count;
    *pkts = t_out;
    *tags = t_tags;
    return out;
}

void shim_pmc_bind(void *slot, uint64_t dispatch_id)
{
    ((PmcSlot *)slot)->dispatch_id.store(dispatch_id, std::memory_order_relaxed);
}

void shim_pmc_complete(void *slot)
{
    PmcSlot *s = (PmcSlot *)slot;
    PmcAgent *a = s->agent;
    uint64_t t0 = g_timing ? now_ns() : 0;
    if (s->group != kNoGroup && shim_go_ok())
        rpgGoPMCSample((int)(a - g_agents), s->group, s->index, a->node,
                       s->dispatch_id.load(std::memory_order_relaxed));
    __atomic_fetch_add(&shim_pmc_counters.completed, 1, __ATOMIC_RELAXED);
    if (g_timing)
        add(&shim_pmc_counters.complete_ns, now_ns() - t0);
}

void shim_pmc_release(void *slot)
{
    PmcSlot *s = (PmcSlot *)slot;
    PmcAgent *a = s->agent;
    hsa_signal_t held = s->held;
    s->held.handle = 0;
    unhold(held);
    // done_seq grows by the slot count per use of the slot.
    s->done_seq.fetch_add(a->nslots, std::memory_order_release);
    a->released.fetch_add(1, std::memory_order_seq_cst);
    if (a->waiters.load(std::memory_order_seq_cst))
        syscall(SYS_futex, (uint32_t *)&a->released, FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr,
                nullptr, 0);
}

// Once no queue can run a counted dispatch (OnUnload, after the completion
// threads stopped; or hsa_shut_down's last reference with every intercepted
// queue destroyed): the counter slots' signals (SHIM_PMC_SLOTS per agent,
// made at set-up) go back to the runtime, which would count them as leaked
// in hsa_shut_down ("Resource leak detected by SharedSignalPool";
// docs/shim.md, "Signals at exit"). Counting stops first, so that a queue
// made after all (an hsa_init the shim did not see) runs uncounted rather
// than on a freed signal. A call the runtime refuses (ROCR 7.2 in OnUnload)
// keeps the signal.
void shim_pmc_shutdown()
{
    if (shim_pid != shim_loaded_pid || !shim_core.hsa_signal_destroy_fn)
        return;
    g_enabled.store(false, std::memory_order_seq_cst);
    pthread_mutex_lock(&g_fence_lock);
    for (int a = 0; a < g_nagents; a++)
        g_fence_last[a].handle = 0;
    pthread_mutex_unlock(&g_fence_lock);
    for (int i = 0; i < g_nagents; i++)
        for (uint32_t k = 0; k < g_agents[i].nslots; k++) {
            PmcSlot *s = &g_agents[i].slots[k];
            if (s->signal.handle && shim_core.hsa_signal_destroy_fn(s->signal) == HSA_STATUS_SUCCESS)
                s->signal.handle = 0;
        }
}
