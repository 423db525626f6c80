/*
 * attach_hsa.c: the HSA side of attach mode (rpg_attach.h, docs/attach.md).
 *
 * In launch mode the cgo shim sees every queue from its creation (it makes
 * them intercept queues) and every executable from its freeze. A process we
 * attach to made its queues and loaded its code objects long before, and no
 * Go may enter it, so this file does the same work in plain C, writing the
 * same spool records as the shim (queue.cpp, agents.cpp, symbols.cpp and
 * shim.go's executableFrozen), so that every writer's output is the same:
 *
 *  - rpg_attach_hsa_start records the agents (AGENT_INFO, as agents.cpp) and
 *    the code objects already loaded (the AMD loader extension's executable
 *    walk: CODE_OBJECT and KERNEL_SYMBOL records numbered from 1, as the
 *    shim numbers them), so that dispatches of kernels loaded before the
 *    attach are named.
 *  - The hooks below (attach_got.c points every module's GOT slot of these
 *    names here) see the queues: the write-index functions tag each reserved
 *    slot with the reserving thread's HIP correlation id, stream and tid (as
 *    queue.cpp's tag_slots), and a doorbell store hands us the queue
 *    (amd_signal_t.queue_ptr) and the index of its last written packet: the
 *    packets between the last index seen on that queue and it are new.
 *  - A new kernel dispatch packet without a completion signal gets one of
 *    ours (memory-only, from a pool made with the real runtime functions),
 *    written into the packet before the doorbell is rung; one that carries
 *    the app's signal is left alone and its times are read from the app's
 *    signal once it completes (profiling is enabled on the queue, so the
 *    packet processor writes start_ts/end_ts into whichever signal the
 *    packet names). The control thread polls both (rpg_attach_hsa_poll),
 *    reads hsa_amd_profiling_get_dispatch_time (the system clock domain,
 *    CLOCK_BOOTTIME ns, as in launch mode) and records the dispatch. No
 *    runtime async handler, no thread of ours beyond the control thread.
 *
 * Why the app's signal is not swapped for ours and passed on (what the shim
 * does): passing on needs code of ours to run when the packet completes. A
 * kernel still running at the detach would leave the app waiting for ever on
 * a signal nobody decrements once the library is unloaded. Reading the times
 * from the app's own signal leaves the app's synchronisation untouched; the
 * one risk, the app reusing the signal before the control thread has read
 * it, is closed by the signal-store hooks: the app (ROCclr included) resets
 * a signal with a store before reusing it, and the store hook settles any
 * dispatch waiting on that signal first. A dispatch that cannot be settled
 * exactly is counted lost, never guessed, and never recorded without times
 * (a record with start = end = 0 would break every statistic and the
 * timeline): lost_untimed counts it, untimed_why says why.
 *
 * Packets the device may already be consuming. On AMD hardware the packet
 * processor fetches packets up to the write index the doorbell announces,
 * so a packet is normally untouched until the real doorbell store this hook
 * runs before; the virtual GPU does the same (vgpu/src/queues.c, "Doorbells").
 * But hardware whose doorbell was already rung past the slot by another
 * producer thread takes the packet as soon as its header is valid (and the
 * virtual GPU takes a valid packet no doorbell announced after 10 ms, its
 * stand-in for a store it could not see). So: a packet whose index is
 * below read_dispatch_id is past; a dispatch among them (told from the body the device leaves when it marks
 * the header INVALID: consumed_kind) is counted lost (untimed), a packet
 * that cannot be told apart is counted lost (unseen). A dispatch at or
 * past read_dispatch_id gets our signal, stored first thing in the hook from
 * a spare kept per queue (the window in which a device already rung past
 * the slot can take the packet without it is then a few loads wide); if
 * the processor copied it just before our store, our signal never
 * completes. Every dispatch lost this way was submitted inside the window:
 * a loss, which fails the run (internal/attach); work submitted before we
 * saw its queue (in_flight_at_attach) and dispatches still running when the
 * stop's wait ends (WHY_STOP: running_at_detach) are the window's edges,
 * counted apart and not lost. The read index cannot tell
 * when the device is done with such a packet (on hardware it passes a kernel
 * at launch, not at its end), but a barrier packet can: a packet whose
 * header has the barrier bit (HIP's in-order streams set it on every packet)
 * begins only once every earlier packet of its queue has completed. So once
 * a later barrier packet of the same queue is known complete (its signal,
 * ours or the app's, settled: done_below), a dispatch of ours whose signal
 * did not complete has finished without it: it is counted lost (WHY_MISSED)
 * and the signal, which nothing will write now, goes back to the pool and is
 * destroyed at the stop (missed(): in the poll, the queue-destroy hook and
 * the stop). The stop, after its bounded wait, waits up to STOP_EXTRA_MS
 * more while such a later barrier packet is still pending. Only a signal
 * with no such evidence (a queue's last dispatch before the detach, with no
 * later barrier packet; a queue destroyed first) is left with the runtime,
 * as the device could still write it: counted in signals_left. Each left
 * would add one to ROCm 7.2's "SharedSignalPool, N Signals leaked" at the
 * app's exit; on the virtual GPU over 18 attaches of attach_server on the
 * four runtimes (5.2, 6.1, 6.4, 7.2) 16 dispatches ran without our signal,
 * every signal was given back, none left.
 *
 * Everything is called through the real functions (looked up in the loaded
 * runtime, dlopen RTLD_NOLOAD), never through a patched slot; no hsa
 * header is needed (the layouts below are the runtime's ABI, stable from
 * ROCm 5.2 to 7.2: amd_hsa_queue.h, amd_hsa_signal.h, hsa.h), and functions
 * that differ between runtimes are looked up by name.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attach_internal.h"
#include "attach_pcs.h"
#include "attach_pmc.h"
#include "hip_stream.h"
#include "rpg_attach.h"
#include "rpg_internal.h"

/* descriptor.c's register-count table (shared with the shim): compiled in
 * here, without the shim's header. */
#define RPG_SHIM_H
#define SHIM_HIDDEN RPG_HIDDEN
RPG_HIDDEN void shim_decode_descriptor(const void *kd, uint32_t major, uint32_t minor,
                                       uint32_t *vgpr, uint32_t *agpr, uint32_t *sgpr);
#include "../descriptor.c"

/* agentinfo.c's AGENT_INFO record builder (shared with the shim's
 * agents.cpp), compiled in here. */
#include "../agentinfo.c"

/* ---- the runtime's ABI --------------------------------------------------- */

typedef int hstatus; /* hsa_status_t */
enum {
    ST_SUCCESS = 0,
    ST_INFO_BREAK = 1,
    ST_NOT_INITIALIZED = 0x100b,
    /* packet types (header bits 0-7) */
    PKT_INVALID = 1,
    PKT_KERNEL_DISPATCH = 2,
    /* agent attributes (hsa.h, hsa_ext_amd.h; agentinfo.c has the record's) */
    AI_DEVICE = 17,
    AI_DRIVER_NODE_ID = 0xA004,
    DEVICE_CPU = 0,
    DEVICE_GPU = 1,
    ISA_NAME_LENGTH = 0,
    ISA_NAME = 1,
    /* executable symbol attributes */
    SYM_TYPE = 0,
    SYM_NAME_LENGTH = 1,
    SYM_NAME = 2,
    SYM_KERNARG_SIZE = 11,
    SYM_GROUP_SIZE = 13,
    SYM_PRIVATE_SIZE = 14,
    SYM_AGENT = 20,
    SYM_KERNEL_OBJECT = 22,
    SYM_KIND_KERNEL = 1,
    /* loaded code object attributes (hsa_ven_amd_loader.h) */
    LCO_AGENT = 3,
    LCO_STORAGE_TYPE = 4,
    LCO_LOAD_DELTA = 8,
    LCO_LOAD_BASE = 9,
    LCO_LOAD_SIZE = 10,
    LCO_URI_LENGTH = 11,
    LCO_URI = 12,
    EXTENSION_AMD_LOADER = 0x201,
    AMD_SIGNAL_GPU_ONLY = 1,
    QUEUE_INFO_AGENT = 0, /* hsa_amd_queue_get_info, ROCm 6.4 and later */
};

/* hsa_queue_t and amd_queue_t (amd_hsa_queue.h): only what is read here. */
typedef struct rq_hsa_queue {
    uint32_t type;
    uint32_t features;
    void *base_address;
    uint64_t doorbell_signal;
    uint32_t size;
    uint32_t reserved1;
    uint64_t id;
} rq_hsa_queue;
enum { AMDQ_WRITE_DISPATCH_ID = 56, AMDQ_READ_DISPATCH_ID = 128, AMDQ_PROPERTIES = 180 };
#define AMDQ_PROFILING (1u << 3) /* AMD_QUEUE_PROPERTIES_ENABLE_PROFILING */

/* amd_signal_t (amd_hsa_signal.h): 64 bytes. */
typedef struct rq_signal {
    int64_t kind; /* 1 user, -1 doorbell, -2 legacy doorbell */
    volatile int64_t value;
    uint64_t event_mailbox_ptr;
    uint32_t event_id;
    uint32_t reserved1;
    volatile uint64_t start_ts;
    volatile uint64_t end_ts;
    void *queue_ptr; /* amd_queue_t of a doorbell signal */
    uint32_t reserved3[2];
} rq_signal;
_Static_assert(sizeof(rq_signal) == 64, "amd_signal_t is 64 bytes");
_Static_assert(offsetof(rq_signal, start_ts) == 32 && offsetof(rq_signal, queue_ptr) == 48,
               "amd_signal_t layout");
_Static_assert(sizeof(rq_hsa_queue) == 40, "hsa_queue_t is 40 bytes");

/* hsa_kernel_dispatch_packet_t (hsa.h): 64 bytes. */
typedef struct rq_dispatch {
    uint16_t header;
    uint16_t setup;
    uint16_t workgroup_size[3];
    uint16_t reserved0;
    uint32_t grid_size[3];
    uint32_t private_segment_size;
    uint32_t group_segment_size;
    uint64_t kernel_object;
    uint64_t kernarg_address;
    uint64_t reserved2;
    uint64_t completion_signal;
} rq_dispatch;
_Static_assert(sizeof(rq_dispatch) == 64 && offsetof(rq_dispatch, completion_signal) == 56,
               "AQL packet layout");

typedef struct rq_dispatch_time {
    uint64_t start, end;
} rq_dispatch_time;

/* Handles (hsa_agent_t, hsa_signal_t, ...) are structs of one uint64: the
 * same registers as a uint64_t in the x86-64 ABI. */
typedef uint64_t handle_t;

/* The dispatches are watched for kernel records and for counters
 * (attach_pmc.c), which records the dispatches it counts as launch mode
 * does. */
#define RPG_WATCH (RPG_DOMAIN_KERNEL | RPG_DOMAIN_COUNTER)

/* ---- the real functions ---------------------------------------------------- */

typedef void (*signal_store_fn)(handle_t, int64_t);
typedef int64_t (*signal_load_fn)(handle_t);
typedef uint64_t (*qidx_add_fn)(const void *, uint64_t);
typedef uint64_t (*qidx_cas_fn)(const void *, uint64_t, uint64_t);
typedef uint64_t (*qidx_load_fn)(const void *);
typedef void (*qidx_store_fn)(const void *, uint64_t);
typedef hstatus (*queue_create_fn)(handle_t, uint32_t, uint32_t, void (*)(hstatus, void *, void *),
                                   void *, uint32_t, uint32_t, void **);
typedef hstatus (*queue_destroy_fn)(void *);
typedef hstatus (*exec_freeze_fn)(handle_t, const char *);
typedef hstatus (*exec_destroy_fn)(handle_t);
typedef hstatus (*signal_destroy_fn)(handle_t);

static struct {
    hstatus (*iterate_agents)(hstatus (*)(handle_t, void *), void *);
    hstatus (*agent_get_info)(handle_t, int, void *);
    hstatus (*agent_iterate_isas)(handle_t, hstatus (*)(handle_t, void *), void *);
    hstatus (*isa_get_info_alt)(handle_t, int, void *);
    hstatus (*iterate_pools)(handle_t, hstatus (*)(handle_t, void *), void *);
    hstatus (*pool_get_info)(handle_t, int, void *);
    hstatus (*signal_create)(int64_t, uint32_t, const handle_t *, handle_t *);
    hstatus (*amd_signal_create)(int64_t, uint32_t, const handle_t *, uint64_t, handle_t *);
    hstatus (*signal_destroy)(handle_t);
    void (*signal_store_relaxed)(handle_t, int64_t);
    int64_t (*signal_load_scacquire)(handle_t);
    hstatus (*set_profiler_enabled)(void *, int);
    hstatus (*get_dispatch_time)(handle_t, handle_t, rq_dispatch_time *);
    hstatus (*queue_get_info)(void *, int, void *);
    hstatus (*ext_table)(uint16_t, uint16_t, size_t, void *);
    hstatus (*sym_get_info)(handle_t, int, void *);
    hstatus (*exec_iterate_symbols)(handle_t, hstatus (*)(handle_t, handle_t, void *), void *);
} rt;

/* hsa_ven_amd_loader_1_03_pfn_t: the executable walk (1.03, ROCm 5.2 on). */
static struct {
    hstatus (*query_host_address)(const void *, const void **);
    void *query_segment_descriptors;
    void *query_executable;
    hstatus (*iterate_loaded_code_objects)(handle_t, hstatus (*)(handle_t, handle_t, void *),
                                           void *);
    hstatus (*loaded_code_object_get_info)(handle_t, int, void *);
    void *reader_create_from_file_with_offset_size;
    hstatus (*iterate_executables)(hstatus (*)(handle_t, void *), void *);
} loader;
static int loader_ok; /* 1: up to the code-object functions; 2: the executable walk too */

/* ---- agents ------------------------------------------------------------------- */

#define MAX_AGENTS 64
typedef struct agent {
    handle_t handle;
    int type;
    uint32_t node;
    uint32_t gfx_major, gfx_minor;
} agent;
static agent agents[MAX_AGENTS];
static int nagents;

static const agent *find_agent(handle_t h)
{
    for (int i = 0; i < nagents; i++)
        if (agents[i].handle == h)
            return &agents[i];
    return NULL;
}

/* ---- kernels: kernel_object -> id and register counts ------------------------ */

typedef struct kinfo {
    uint64_t kernel_object;
    uint64_t kernel_id;
    uint32_t vgpr, agpr, sgpr;
    uint32_t node;  /* the agent the kernel's code object was loaded for */
    handle_t agent; /* 0: not known */
} kinfo;
static kinfo *kmap; /* open addressing; key 0 = empty */
static uint32_t kmap_mask, kmap_used;

static uint32_t hash64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (uint32_t)k;
}

/* Under lock (g_lock). Readers take g_lock too: lookups happen at doorbell
 * time, a few per packet batch. */
static void kmap_put(const kinfo *k)
{
    if (!k->kernel_object)
        return;
    if (!kmap || (kmap_used + 1) * 2 > kmap_mask + 1) {
        uint32_t n = kmap ? (kmap_mask + 1) * 2 : 1024;
        kinfo *t = calloc(n, sizeof *t);
        if (!t)
            return;
        for (uint32_t i = 0; kmap && i <= kmap_mask; i++)
            if (kmap[i].kernel_object)
                for (uint32_t j = hash64(kmap[i].kernel_object) & (n - 1);; j = (j + 1) & (n - 1))
                    if (!t[j].kernel_object) {
                        t[j] = kmap[i];
                        break;
                    }
        free(kmap);
        kmap = t;
        kmap_mask = n - 1;
    }
    for (uint32_t i = hash64(k->kernel_object) & kmap_mask;; i = (i + 1) & kmap_mask) {
        if (kmap[i].kernel_object == k->kernel_object) {
            kmap[i] = *k; /* a reused address: the newest symbol wins */
            return;
        }
        if (!kmap[i].kernel_object) {
            kmap[i] = *k;
            kmap_used++;
            return;
        }
    }
}

static const kinfo *kmap_get(uint64_t ko)
{
    if (!kmap || !ko)
        return NULL;
    for (uint32_t i = hash64(ko) & kmap_mask, n = 0; n <= kmap_mask; i = (i + 1) & kmap_mask, n++) {
        if (kmap[i].kernel_object == ko)
            return &kmap[i];
        if (!kmap[i].kernel_object)
            return NULL;
    }
    return NULL;
}

/* Executables whose code objects are recorded, and those code objects (for
 * the UNLOAD records at hsa_executable_destroy). */
typedef struct exec_co {
    handle_t exec;
    uint64_t id;
    uint32_t node;
} exec_co;
static exec_co *cos;
static size_t ncos, cos_cap;
static handle_t *execs;
static size_t nexecs, execs_cap;
static uint64_t next_kernel_id, next_code_object_id;

/* ---- queues --------------------------------------------------------------------- */

/* Who reserved one slot (queue.cpp's Tag): index + 1, written last. */
typedef struct tag {
    uint64_t index;
    uint64_t correlation_id;
    uint64_t stream_id;
    uint32_t tid;
    uint64_t seen; /* index + 1 once the doorbell hook looked at the packet (under the queue's lock) */
} tag;

typedef struct aqueue {
    char *amd; /* the amd_queue_t, whose first member is the app's hsa_queue_t */
    uint64_t id;
    handle_t agent;
    uint32_t node;
    uint64_t next;  /* first packet index not looked at yet */
    uint64_t first; /* the first index ours: those below were submitted before we saw the queue */
    uint64_t pre;   /* below first: looked at from here (in_flight_at_attach) */
    uint32_t mask;  /* queue size - 1 */
    int prof_prev;  /* profiling was on before we saw the queue */
    int prof_set;   /* we switched it on */
    int dead;       /* destroyed while attached */
    handle_t spare; /* a signal of the pool ready for its next packet (under lock) */
    uint64_t done_below; /* every packet below this index has completed (under g_lock) */
    tag *tags;
    pthread_mutex_t lock;
} aqueue;

#define MAX_QUEUES 1024
#define QTAB 2048 /* open addressing by amd_queue_t address; 1 = a destroyed queue's slot */
static aqueue *qtab_q[QTAB];
static uintptr_t qtab_key[QTAB];
static aqueue *queues[MAX_QUEUES];
static int nqueues;
static uint64_t next_queue_id;

/* ---- pending dispatches ----------------------------------------------------------- */

typedef struct pending {
    aqueue *q;
    handle_t signal; /* ours, or the app's */
    int own;
    int64_t v0;  /* the app's signal at the doorbell */
    uint64_t e0; /* its end_ts then */
    uint64_t index;
    int barrier; /* the packet's header had the barrier bit */
    int counted; /* counter slot + 1 (attach_pmc.c): recorded with or without kernel tracing */
    rpg_kernel_dispatch_rec rec;
} pending;
static pending *pend;
static size_t npend, pend_cap;
static size_t app_pending; /* entries waiting on the app's signals */
/* How many of them wait on a signal of each hash: the signal-store hooks,
 * on every signal the app stores to, take the lock only on a hit. */
#define APP_HASH 256
static uint32_t app_hash[APP_HASH];

static uint32_t *app_slot(handle_t s)
{
    return &app_hash[hash64(s) & (APP_HASH - 1)];
}

static handle_t *pool;
static size_t npool, pool_cap;
static handle_t *all_signals; /* every signal we created (destroyed at stop unless leaked) */
static size_t nall, all_cap;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* everything above */
static uint64_t next_dispatch_id;
/* What could not be seen, all counted lost at the stop: dispatches without
 * times (counted, not recorded), packets the device consumed before we saw
 * them (their type is gone: counted, as they may have been dispatches), packets overwritten
 * before we looked (the doorbell rung past a whole ring). */
static uint64_t lost_untimed, lost_unseen, lost_overrun;
/* The window's edges, not losses (docs/attach.md, "What it cannot see"):
 * dispatches submitted before the agent saw their queue and not finished
 * then (in flight at the attach), and dispatches of the window still
 * running when the detach's bounded wait ended (WHY_STOP). */
static uint64_t in_flight_at_attach;
static void count_in_flight(struct aqueue *q, uint64_t end);
/* The last stop's account, for the control thread's "dispatches" line. */
static char losses_line[320];
/* Signals of ours left with the runtime: in a packet the device may still
 * hold, no evidence that it finished (see the top). */
static uint64_t signals_left;
static int started;

static int grow(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 64;
    while (c < need)
        c *= 2;
    void *n = realloc(*v, c * elem);
    if (!n)
        return -1;
    *v = n;
    *cap = c;
    return 0;
}

/* ---- real functions of the hooks (set by attach_got.c before any slot) ---- */

static signal_store_fn real_store_relaxed, real_store_screlease, real_store_release;
static signal_store_fn real_silent_relaxed, real_silent_screlease;
static signal_destroy_fn real_signal_destroy;
static qidx_add_fn real_add[7];
static qidx_cas_fn real_cas[7];
static qidx_load_fn real_load[3];
static qidx_store_fn real_qstore[3];
static queue_create_fn real_queue_create;
static queue_destroy_fn real_queue_destroy;
static exec_freeze_fn real_freeze;
static exec_destroy_fn real_exec_destroy;

static uint64_t amdq_u64(const aqueue *q, size_t off)
{
    return __atomic_load_n((const uint64_t *)(q->amd + off), __ATOMIC_ACQUIRE);
}

static uint32_t *amdq_props(const aqueue *q)
{
    return (uint32_t *)(q->amd + AMDQ_PROPERTIES);
}

static handle_t pool_get(void);

static const agent *sole_gpu(void)
{
    const agent *g = NULL;
    for (int i = 0; i < nagents; i++)
        if (agents[i].type == DEVICE_GPU) {
            if (g)
                return NULL;
            g = &agents[i];
        }
    return g;
}

static aqueue *queue_find(const void *amdq)
{
    uintptr_t k = (uintptr_t)amdq;
    for (uint32_t i = hash64(k) & (QTAB - 1), n = 0; n < QTAB; i = (i + 1) & (QTAB - 1), n++) {
        uintptr_t v = __atomic_load_n(&qtab_key[i], __ATOMIC_ACQUIRE);
        if (v == k)
            return __atomic_load_n(&qtab_q[i], __ATOMIC_ACQUIRE);
        if (!v)
            return NULL;
    }
    return NULL;
}

/* The queue's entry, made at first sight: its id in first-seen order, its
 * agent, profiling switched on (the previous state kept for the stop). The
 * queue's agent: known when it is created while attached; else asked of the
 * runtime (hsa_amd_queue_get_info, ROCm 6.4 and later); else the only GPU.
 * `from` is the first packet index that is ours to look at.
 * A queue made before the attach on a machine of several GPUs under an older
 * runtime takes the agent its first named kernel was loaded for (on_doorbell);
 * until then, or without one, its dispatches name node 0 (the CPU), which
 * the outputs show as such rather than a guessed GPU. */
static aqueue *queue_get(const void *amdq, handle_t agent_hint, uint64_t from)
{
    aqueue *q = queue_find(amdq);
    if (q || !amdq || !started)
        return q;
    pthread_mutex_lock(&g_lock);
    q = queue_find(amdq);
    if (q || nqueues >= MAX_QUEUES) {
        pthread_mutex_unlock(&g_lock);
        return q;
    }
    const rq_hsa_queue *hq = amdq;
    uint32_t size = hq->size;
    q = calloc(1, sizeof *q);
    tag *tags = size && !(size & (size - 1)) ? calloc(size, sizeof *tags) : NULL;
    if (!q || !tags) {
        free(q);
        free(tags);
        pthread_mutex_unlock(&g_lock);
        return NULL;
    }
    q->amd = (char *)amdq;
    q->tags = tags;
    q->mask = size - 1;
    pthread_mutex_init(&q->lock, NULL);
    q->id = ++next_queue_id;
    handle_t ag = agent_hint;
    if (!ag && rt.queue_get_info && rt.queue_get_info((void *)amdq, QUEUE_INFO_AGENT, &ag) != ST_SUCCESS)
        ag = 0;
    if (!ag && sole_gpu())
        ag = sole_gpu()->handle;
    const agent *a = find_agent(ag);
    q->agent = ag;
    q->node = a ? a->node : 0;
    /* Packets from `from` on are looked at: the first slot reserved in our
     * sight, or the doorbell's own packet, or the write index a load
     * returned. Those written earlier were submitted before we knew the
     * queue (before the attach): neither recorded nor counted. */
    q->next = from;
    q->first = q->pre = from;
    uint64_t rd0 = amdq_u64(q, AMDQ_READ_DISPATCH_ID);
    if (rd0 < from)
        q->pre = from - rd0 > size ? from - size : rd0;
    count_in_flight(q, from); /* not published yet: q->lock not needed */
    q->prof_prev = (__atomic_load_n(amdq_props(q), __ATOMIC_RELAXED) & AMDQ_PROFILING) != 0;
    if (!q->prof_prev && rt.set_profiler_enabled &&
        rt.set_profiler_enabled((void *)amdq, 1) == ST_SUCCESS)
        q->prof_set = 1;
    q->spare = pool_get(); /* the first packet's too goes in first thing */
    queues[nqueues++] = q;
    uintptr_t k = (uintptr_t)amdq;
    for (uint32_t i = hash64(k) & (QTAB - 1);; i = (i + 1) & (QTAB - 1))
        if (!qtab_key[i]) {
            __atomic_store_n(&qtab_q[i], q, __ATOMIC_RELEASE);
            __atomic_store_n(&qtab_key[i], k, __ATOMIC_RELEASE);
            break;
        }
    pthread_mutex_unlock(&g_lock);
    return q;
}

/* On the reserving thread, right after slots [first, first+n) of the queue
 * were reserved, before their packets can be written (queue.cpp's
 * tag_slots). */
static void tag_slots(const void *hq, uint64_t first, uint64_t n)
{
    if (!n || !(rpg_domains & RPG_WATCH))
        return;
    aqueue *q = queue_get(hq, 0, first);
    if (!q)
        return;
    uint64_t corr = rpg_correlation_current(), stream = rpg_hip_current_stream();
    uint32_t tid = rpg_tid();
    if (n > (uint64_t)q->mask + 1)
        n = (uint64_t)q->mask + 1;
    for (uint64_t i = first; i != first + n; i++) {
        tag *g = &q->tags[i & q->mask];
        __atomic_store_n(&g->index, 0, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        __atomic_store_n(&g->correlation_id, corr, __ATOMIC_RELAXED);
        __atomic_store_n(&g->stream_id, stream, __ATOMIC_RELAXED);
        __atomic_store_n(&g->tid, tid, __ATOMIC_RELAXED);
        __atomic_store_n(&g->index, i + 1, __ATOMIC_RELEASE);
    }
}

static int slot_tag(const aqueue *q, uint64_t index, tag *out)
{
    const tag *g = &q->tags[index & q->mask];
    if (__atomic_load_n(&g->index, __ATOMIC_ACQUIRE) != index + 1)
        return 0;
    out->correlation_id = __atomic_load_n(&g->correlation_id, __ATOMIC_RELAXED);
    out->stream_id = __atomic_load_n(&g->stream_id, __ATOMIC_RELAXED);
    out->tid = __atomic_load_n(&g->tid, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return __atomic_load_n(&g->index, __ATOMIC_RELAXED) == index + 1;
}

/* ---- signals ------------------------------------------------------------------------ */

/* Under g_lock. A memory-only signal (no interrupt event: the control thread
 * polls it), value 1, its timestamps zeroed so that a completion the packet
 * processor did not stamp shows. */
static handle_t pool_get(void)
{
    handle_t s = 0;
    if (npool)
        s = pool[--npool];
    else {
        if (grow((void **)&all_signals, &all_cap, nall + 1, sizeof *all_signals))
            return 0;
        if (!(rt.amd_signal_create &&
              rt.amd_signal_create(1, 0, NULL, AMD_SIGNAL_GPU_ONLY, &s) == ST_SUCCESS) &&
            !(rt.signal_create && rt.signal_create(1, 0, NULL, &s) == ST_SUCCESS))
            return 0;
        all_signals[nall++] = s;
    }
    rq_signal *r = (rq_signal *)(uintptr_t)s;
    r->start_ts = 0;
    r->end_ts = 0;
    rt.signal_store_relaxed(s, 1);
    return s;
}

static void pool_put(handle_t s)
{
    if (!grow((void **)&pool, &pool_cap, npool + 1, sizeof *pool))
        pool[npool++] = s;
}

/* Forgets a leaked signal: it stays with the runtime (see the top). */
static void pool_leak(handle_t s)
{
    signals_left++;
    for (size_t i = 0; i < nall; i++)
        if (all_signals[i] == s) {
            all_signals[i] = all_signals[--nall];
            return;
        }
}

/* ---- records -------------------------------------------------------------------------- */

/* Why dispatches went without times (ROCPROF_GO_SHIM_DEBUG prints them).
 * WHY_MISSED: the device ran the packet without our signal (a later barrier
 * packet completed while our signal did not). */
enum { WHY_PAST, WHY_UNSTAMPED, WHY_REUSED, WHY_NOMEM, WHY_DESTROYED, WHY_STOP, WHY_MISSED, WHY_N };
static uint64_t untimed_why[WHY_N];

/* A dispatch without times is only counted, never recorded: a row without
 * times would break every statistic and the timeline. */
static void record_untimed(pending *p, int why)
{
    (void)p;
    untimed_why[why]++;
    if (why != WHY_STOP) /* still running when the window closed: its edge */
        lost_untimed++;
}

/* Records a completed entry with the times the packet processor stamped
 * into signal s (ticks, converted by the runtime), or counts it lost when it
 * stamped none. */
static void record_from(pending *p, handle_t s, int stamped)
{
    rq_dispatch_time t = {0, 0};
    if (!stamped || !rt.get_dispatch_time ||
        rt.get_dispatch_time(p->q->agent, s, &t) != ST_SUCCESS || !t.start || t.end < t.start) {
        record_untimed(p, WHY_UNSTAMPED);
        return;
    }
    p->rec.start_ns = t.start;
    p->rec.end_ns = t.end;
    if ((rpg_domains & RPG_DOMAIN_KERNEL) || p->counted)
        rpg_record_kernel_dispatch(&p->rec);
}

static void pend_remove(size_t i)
{
    if (!pend[i].own) {
        app_pending--;
        __atomic_fetch_sub(app_slot(pend[i].signal), 1, __ATOMIC_RELEASE);
    }
    pend[i] = pend[--npend];
}

/* Settles entry i if its signal completed (under g_lock); 1 if settled. A
 * completed packet with the barrier bit began only once every earlier packet
 * of its queue had completed: the queue's done_below moves up to it. */
static int settle(size_t i)
{
    pending *p = &pend[i];
    const rq_signal *s = (const rq_signal *)(uintptr_t)p->signal;
    if (p->own) {
        if (rt.signal_load_scacquire(p->signal) >= 1)
            return 0;
        record_from(p, p->signal, s->end_ts != 0);
        pool_put(p->signal);
    } else {
        int64_t v = rt.signal_load_scacquire(p->signal);
        uint64_t e = __atomic_load_n(&s->end_ts, __ATOMIC_ACQUIRE);
        if (v >= p->v0)
            return 0;
        record_from(p, p->signal, e != p->e0);
    }
    if (p->barrier && p->index > p->q->done_below)
        p->q->done_below = p->index;
    pend_remove(i);
    return 1;
}

/* Entry i waits on our signal, which has not completed, but a later barrier
 * packet of its queue has: the packet finished and the device never saw our
 * signal (it took the packet before our store). Counted lost; the signal,
 * which nothing will write now, goes back to the pool (under g_lock; its
 * signal is loaded once more first, after the later packet's completion was
 * seen). 1 if the entry went. */
static int missed(size_t i)
{
    pending *p = &pend[i];
    if (!p->own || p->index >= p->q->done_below)
        return 0;
    if (settle(i))
        return 1;
    record_untimed(p, WHY_MISSED);
    pool_put(p->signal);
    pend_remove(i);
    return 1;
}

/* Whether entry i (ours, not complete) has a later barrier packet of its
 * queue still waiting: its completion would tell (under g_lock). */
static int later_barrier_pending(size_t i)
{
    for (size_t j = 0; j < npend; j++)
        if (pend[j].q == pend[i].q && pend[j].barrier && pend[j].index > pend[i].index)
            return 1;
    return 0;
}

/* The app is about to reset, reuse or destroy signal s: entries waiting on it
 * are settled now, or counted lost (under g_lock). */
static void settle_app_signal(handle_t s)
{
    for (size_t i = 0; i < npend;) {
        if (pend[i].own || pend[i].signal != s) {
            i++;
            continue;
        }
        if (!settle(i)) {
            record_untimed(&pend[i], WHY_REUSED);
            pend_remove(i);
        }
    }
}

/* What a packet the device consumed before we saw it was, from what the
 * device left of it (all but its header, which it set to INVALID): a kernel
 * dispatch has its dimensions (1-3) in setup and a workgroup size; a
 * barrier-AND/OR has zeros there (reserved), as has AMD's barrier-value
 * packet but for its format (2) in place of setup. Anything else is not
 * told apart and is counted lost as unseen. */
enum { CONSUMED_DISPATCH, CONSUMED_OTHER, CONSUMED_UNKNOWN };
static int consumed_kind(const rq_dispatch *k)
{
    uint16_t setup = __atomic_load_n(&k->setup, __ATOMIC_RELAXED);
    uint16_t wg = __atomic_load_n(&k->workgroup_size[0], __ATOMIC_RELAXED);
    uint16_t w1 = __atomic_load_n(&k->workgroup_size[1], __ATOMIC_RELAXED);
    if (!wg && !w1 && (setup == 0 || setup == 2))
        return CONSUMED_OTHER;
    if (setup >= 1 && setup <= 3 && wg && __atomic_load_n(&k->kernel_object, __ATOMIC_RELAXED))
        return CONSUMED_DISPATCH;
    return CONSUMED_UNKNOWN;
}

/* Packets of queue q below its first index of ours, up to end: submitted
 * before the agent saw the queue. The kernel dispatches among them still in
 * the ring (not finished when we looked) or consumed since are the work in
 * flight at the attach: counted, neither recorded nor lost. A slot not
 * written yet is looked at again by a later doorbell (under q->lock). */
static void count_in_flight(aqueue *q, uint64_t end)
{
    if (end > q->first)
        end = q->first;
    const rq_hsa_queue *hq = (const rq_hsa_queue *)q->amd;
    uint64_t hole = UINT64_MAX;
    for (uint64_t i = q->pre; i < end; i++) {
        if (q->tags[i & q->mask].seen == i + 1)
            continue;
        rq_dispatch *k = (rq_dispatch *)hq->base_address + (i & q->mask);
        uint32_t type = __atomic_load_n(&k->header, __ATOMIC_ACQUIRE) & 0xff;
        if (type == PKT_INVALID && i >= amdq_u64(q, AMDQ_READ_DISPATCH_ID)) {
            if (hole == UINT64_MAX)
                hole = i;
            continue;
        }
        q->tags[i & q->mask].seen = i + 1;
        if (type == PKT_KERNEL_DISPATCH || (type == PKT_INVALID && consumed_kind(k) == CONSUMED_DISPATCH))
            __atomic_fetch_add(&in_flight_at_attach, 1, __ATOMIC_RELAXED);
    }
    q->pre = hole != UINT64_MAX ? hole : end > q->pre ? end : q->pre;
}

/* The doorbell of queue amdq announces packets up to index last (the value
 * stored): on the app's thread, before the real store. */
static void on_doorbell(void *amdq, int64_t last)
{
    if (!(rpg_domains & RPG_WATCH) || last < 0)
        return;
    aqueue *q = queue_get(amdq, 0, (uint64_t)last);
    if (!q || q->dead)
        return;
    pthread_mutex_lock(&q->lock);
    uint64_t end = (uint64_t)last + 1;
    uint64_t wdi = amdq_u64(q, AMDQ_WRITE_DISPATCH_ID);
    if (end > wdi)
        end = wdi;
    if (q->pre < q->first)
        count_in_flight(q, end);
    uint64_t size = (uint64_t)q->mask + 1;
    if (end > q->next + size) {
        /* More than a ring's worth since we last looked (the doorbell was
         * rung past us): the oldest slots hold newer packets now. */
        pthread_mutex_lock(&g_lock);
        lost_overrun += end - size - q->next;
        pthread_mutex_unlock(&g_lock);
        q->next = end - size;
    }
    const rq_hsa_queue *hq = amdq;
    uint64_t hole = UINT64_MAX; /* the first slot not written yet */
    for (uint64_t i = q->next; i < end; i++) {
        if (q->tags[i & q->mask].seen == i + 1)
            continue; /* looked at by an earlier doorbell, past a hole */
        rq_dispatch *k = (rq_dispatch *)hq->base_address + (i & q->mask);
        uint16_t header = __atomic_load_n(&k->header, __ATOMIC_ACQUIRE);
        uint32_t type = header & 0xff;
        uint64_t rd = amdq_u64(q, AMDQ_READ_DISPATCH_ID);
        int consumed = 0;
        if (type == PKT_INVALID && i >= rd) {
            /* Not written yet: another producer reserved it before the
             * packet whose doorbell this is and writes it still; its own
             * doorbell covers it, so the next look starts here. */
            if (hole == UINT64_MAX)
                hole = i;
            continue;
        }
        q->tags[i & q->mask].seen = i + 1;
        if (type == PKT_INVALID) {
            /* Consumed before we saw it: the device marks a packet INVALID
             * when done and leaves the rest. */
            int c = consumed_kind(k);
            if (amdq_u64(q, AMDQ_WRITE_DISPATCH_ID) - i >= size)
                c = CONSUMED_UNKNOWN; /* the slot may hold a newer packet now */
            if (c == CONSUMED_OTHER)
                continue;
            if (c == CONSUMED_UNKNOWN) {
                pthread_mutex_lock(&g_lock);
                lost_unseen++;
                pthread_mutex_unlock(&g_lock);
                continue;
            }
            consumed = 1; /* a dispatch: counted lost below */
        } else if (type != PKT_KERNEL_DISPATCH) {
            rpg_attach_pmc_move(amdq, q->agent, i, k);
            continue;
        }
        /* The device may take the packet any moment now (see the top): our
         * signal goes in first, from the queue's spare, before anything else
         * is done for the packet. */
        handle_t app = __atomic_load_n(&k->completion_signal, __ATOMIC_ACQUIRE);
        handle_t early = 0;
        if (!consumed && !app && q->spare && amdq_u64(q, AMDQ_READ_DISPATCH_ID) <= i) {
            early = q->spare;
            q->spare = 0;
            __atomic_store_n(&k->completion_signal, early, __ATOMIC_RELEASE);
        }
        pending p;
        memset(&p, 0, sizeof p);
        p.q = q;
        p.index = i;
        p.barrier = (header >> 8) & 1; /* HSA_PACKET_HEADER_BARRIER */
        rpg_kernel_dispatch_rec *r = &p.rec;
        tag g;
        if (slot_tag(q, i, &g)) {
            r->correlation_id = g.correlation_id ? g.correlation_id : rpg_correlation_next();
            r->stream_id = g.stream_id;
            r->tid = g.tid;
        } else {
            /* Reserved unseen: the thread ringing the doorbell is the best
             * account of it (as queue.cpp). */
            uint64_t c = rpg_correlation_current();
            r->correlation_id = c ? c : rpg_correlation_next();
            r->stream_id = rpg_hip_current_stream();
            r->tid = rpg_tid();
        }
        r->agent_node = q->node;
        r->queue_id = q->id;
        for (int d = 0; d < 3; d++) {
            r->grid[d] = k->grid_size[d];
            r->workgroup[d] = k->workgroup_size[d];
        }
        r->group_segment_size = k->group_segment_size;
        r->private_segment_size = k->private_segment_size;
        r->packet_index = (uint32_t)i;
        uint64_t ko = k->kernel_object;
        if (!consumed && rpg_attach_pmc_on()) {
            /* Counted: the packet moves to a queue of ours (its slot becomes
             * a barrier-AND with the app's signal); its times come from ours. */
            handle_t t = early;
            if (!t) {
                pthread_mutex_lock(&g_lock);
                t = pool_get();
                pthread_mutex_unlock(&g_lock);
            }
            handle_t ag = q->agent;
            if (!ag) {
                /* a queue from before the attach whose agent the runtime
                 * would not say: its kernel's (as below) */
                pthread_mutex_lock(&g_lock);
                const kinfo *ki = kmap_get(ko);
                ag = ki ? ki->agent : 0;
                pthread_mutex_unlock(&g_lock);
            }
            int slot = rpg_attach_pmc_redirect(amdq, ag, i, k, app, t);
            if (slot >= 0) {
                p.counted = slot + 1;
                early = t;
                app = 0;
            } else {
                if (t && t != early) {
                    pthread_mutex_lock(&g_lock);
                    pool_put(t);
                    pthread_mutex_unlock(&g_lock);
                }
                rpg_attach_pmc_seen(amdq, i, k);
            }
        }
        if (app) {
            const rq_signal *s = (const rq_signal *)(uintptr_t)app;
            p.signal = app;
            p.v0 = __atomic_load_n(&s->value, __ATOMIC_ACQUIRE);
            p.e0 = __atomic_load_n(&s->end_ts, __ATOMIC_ACQUIRE);
        }
        /* The read index after the snapshot: a packet not past it then
         * completed after the snapshot (the device completes a packet before
         * moving past it on the virtual GPU, launches it first on hardware). */
        rd = amdq_u64(q, AMDQ_READ_DISPATCH_ID);
        pthread_mutex_lock(&g_lock);
        r->dispatch_id = ++next_dispatch_id;
        if (p.counted)
            rpg_attach_pmc_bind(p.counted - 1, r->dispatch_id, q->node);
        const kinfo *ki = kmap_get(ko);
        if (ki) {
            r->kernel_id = ki->kernel_id;
            r->vgpr_count = ki->vgpr;
            r->agpr_count = ki->agpr;
            r->sgpr_count = ki->sgpr;
            if (!q->agent && ki->agent) {
                /* A queue made before the attach whose agent the runtime
                 * would not say: its kernels' code objects were loaded for
                 * it (a kernel object is an address in one agent's code). */
                q->agent = ki->agent;
                q->node = ki->node;
            }
            r->agent_node = q->node;
        }
        if (!p.counted)
            rpg__attach_pcs_dispatch(amdq, i, r->dispatch_id, q->node);
        if (early) {
            if (!grow((void **)&pend, &pend_cap, npend + 1, sizeof *pend)) {
                p.signal = early;
                p.own = 1;
                pend[npend++] = p;
            } else {
                pool_leak(early); /* in the packet: the device may complete it */
                record_untimed(&p, WHY_NOMEM);
            }
        } else if (consumed || i < rd) {
            record_untimed(&p, WHY_PAST); /* the device is past it */
        } else if (app) {
            settle_app_signal(app); /* an earlier packet with the same signal */
            if (!grow((void **)&pend, &pend_cap, npend + 1, sizeof *pend)) {
                pend[npend++] = p;
                app_pending++;
                __atomic_fetch_add(app_slot(app), 1, __ATOMIC_RELEASE);
            } else {
                record_untimed(&p, WHY_NOMEM);
            }
        } else {
            handle_t ours = grow((void **)&pend, &pend_cap, npend + 1, sizeof *pend) ? 0 : pool_get();
            if (ours) {
                p.signal = ours;
                p.own = 1;
                __atomic_store_n(&k->completion_signal, ours, __ATOMIC_RELEASE);
                pend[npend++] = p;
            } else {
                record_untimed(&p, WHY_NOMEM);
            }
        }
        if (!q->spare)
            q->spare = pool_get();
        pthread_mutex_unlock(&g_lock);
    }
    rpg_attach_pmc_rung(amdq, (uint64_t)last);
    if (hole != UINT64_MAX)
        q->next = hole;
    else if (end > q->next)
        q->next = end;
    pthread_mutex_unlock(&q->lock);
}

/* ---- code objects and kernel symbols (shim.go's executableFrozen) ---------------------- */

typedef struct co_ctx {
    handle_t exec;
    uint64_t now;
    size_t first; /* this executable's entries in cos */
} co_ctx;

static hstatus add_code_object(handle_t exec, handle_t lco, void *data)
{
    co_ctx *c = data;
    (void)exec;
    if (grow((void **)&cos, &cos_cap, ncos + 1, sizeof *cos))
        return ST_SUCCESS;
    rpg_code_object_rec r;
    memset(&r, 0, sizeof r);
    handle_t ag = 0;
    loader.loaded_code_object_get_info(lco, LCO_AGENT, &ag);
    const agent *a = find_agent(ag);
    r.agent_node = a ? a->node : 0;
    loader.loaded_code_object_get_info(lco, LCO_STORAGE_TYPE, &r.storage_type);
    loader.loaded_code_object_get_info(lco, LCO_LOAD_BASE, &r.load_base);
    loader.loaded_code_object_get_info(lco, LCO_LOAD_SIZE, &r.load_size);
    int64_t delta = 0;
    loader.loaded_code_object_get_info(lco, LCO_LOAD_DELTA, &delta);
    r.load_delta = (uint64_t)delta;
    r.code_object_id = ++next_code_object_id;
    r.operation = RPG_CODE_OBJECT_LOAD;
    r.timestamp_ns = c->now;
    uint32_t len = 0;
    char *uri = NULL;
    if (loader.loaded_code_object_get_info(lco, LCO_URI_LENGTH, &len) == ST_SUCCESS) {
        uri = calloc(1, (size_t)len + 1);
        if (uri && loader.loaded_code_object_get_info(lco, LCO_URI, uri) != ST_SUCCESS)
            len = 0;
    }
    rpg_record_code_object(&r, uri, uri ? len : 0);
    free(uri);
    cos[ncos++] = (exec_co){c->exec, r.code_object_id, r.agent_node};
    return ST_SUCCESS;
}

static uint64_t code_object_for(const co_ctx *c, uint32_t node)
{
    for (size_t i = c->first; i < ncos; i++)
        if (cos[i].node == node)
            return cos[i].id;
    return c->first < ncos ? cos[c->first].id : 0;
}

static hstatus add_symbol(handle_t exec, handle_t sym, void *data)
{
    co_ctx *c = data;
    (void)exec;
    uint32_t kind = 0;
    rt.sym_get_info(sym, SYM_TYPE, &kind);
    if (kind != SYM_KIND_KERNEL)
        return ST_SUCCESS;
    rpg_kernel_symbol_rec r;
    memset(&r, 0, sizeof r);
    rt.sym_get_info(sym, SYM_KERNEL_OBJECT, &r.kernel_object);
    rt.sym_get_info(sym, SYM_KERNARG_SIZE, &r.kernarg_size);
    rt.sym_get_info(sym, SYM_GROUP_SIZE, &r.group_segment_size);
    rt.sym_get_info(sym, SYM_PRIVATE_SIZE, &r.private_segment_size);
    handle_t ag = 0;
    rt.sym_get_info(sym, SYM_AGENT, &ag);
    const agent *a = find_agent(ag);
    uint32_t len = 0;
    rt.sym_get_info(sym, SYM_NAME_LENGTH, &len);
    char *name = calloc(1, (size_t)len + 1);
    if (name && rt.sym_get_info(sym, SYM_NAME, name) != ST_SUCCESS)
        len = 0;
    /* Register counts and the entry offset live only in the descriptor:
     * its host copy (symbols.cpp). */
    const void *host = NULL;
    if (a && r.kernel_object && loader.query_host_address &&
        loader.query_host_address((const void *)(uintptr_t)r.kernel_object, &host) == ST_SUCCESS &&
        host) {
        shim_decode_descriptor(host, a->gfx_major, a->gfx_minor, &r.vgpr_count, &r.agpr_count,
                               &r.sgpr_count);
        int64_t entry = 0;
        memcpy(&entry, (const char *)host + 16, sizeof entry);
        if (entry >= INT32_MIN && entry <= INT32_MAX)
            r.entry_offset = (int32_t)entry;
    }
    r.kernel_id = ++next_kernel_id;
    r.code_object_id = code_object_for(c, a ? a->node : 0);
    rpg_record_kernel_symbol(&r, name, name ? len : 0);
    free(name);
    kinfo k = {r.kernel_object, r.kernel_id, r.vgpr_count, r.agpr_count, r.sgpr_count,
               a ? a->node : 0, a ? a->handle : 0};
    kmap_put(&k);
    return ST_SUCCESS;
}

/* Records an executable's code objects and kernels once (under g_lock). */
static void executable_seen(handle_t exec)
{
    for (size_t i = 0; i < nexecs; i++)
        if (execs[i] == exec)
            return;
    if (grow((void **)&execs, &execs_cap, nexecs + 1, sizeof *execs))
        return;
    execs[nexecs++] = exec;
    co_ctx c = {exec, rpg_now(), ncos};
    if (loader_ok && loader.iterate_loaded_code_objects)
        loader.iterate_loaded_code_objects(exec, add_code_object, &c);
    if (rt.exec_iterate_symbols)
        rt.exec_iterate_symbols(exec, add_symbol, &c);
}

/* The executable walk only lists them: the runtime holds its loader's lock
 * during the walk, and the symbol and host-address queries take it again
 * (a deadlock, seen on ROCm 5.2). They are recorded after it returns, under
 * g_lock, which the executable-destroy hook waits for. */
typedef struct exec_list {
    handle_t *v;
    size_t n, cap;
} exec_list;

static hstatus walk_executable(handle_t exec, void *data)
{
    exec_list *l = data;
    if (!grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v))
        l->v[l->n++] = exec;
    return ST_SUCCESS;
}

static void executable_gone(handle_t exec)
{
    size_t k = 0;
    for (; k < nexecs && execs[k] != exec; k++)
        ;
    if (k == nexecs)
        return;
    execs[k] = execs[--nexecs];
    uint64_t now = rpg_now();
    for (size_t i = 0; i < ncos;) {
        if (cos[i].exec != exec) {
            i++;
            continue;
        }
        rpg_code_object_rec r;
        memset(&r, 0, sizeof r);
        r.code_object_id = cos[i].id;
        r.operation = RPG_CODE_OBJECT_UNLOAD;
        r.agent_node = cos[i].node;
        r.timestamp_ns = now;
        rpg_record_code_object(&r, NULL, 0);
        /* keeps the order of the rest: code_object_for reads a run */
        memmove(&cos[i], &cos[i + 1], (ncos - i - 1) * sizeof *cos);
        ncos--;
    }
}

/* ---- agents (agents.cpp; their records: agentinfo.c) ---------------------------------------- */

static hstatus add_isa(handle_t isa, void *data)
{
    uint32_t len = 0;
    if (rt.isa_get_info_alt(isa, ISA_NAME_LENGTH, &len) != ST_SUCCESS)
        return ST_SUCCESS;
    char name[256] = {0};
    if (len < sizeof name && rt.isa_get_info_alt(isa, ISA_NAME, name) == ST_SUCCESS) {
        agent *a = data;
        rpg_agent_parse_gfx(name, &a->gfx_major, &a->gfx_minor);
        return ST_INFO_BREAK;
    }
    return ST_SUCCESS;
}

static hstatus add_agent(handle_t h, void *data)
{
    (void)data;
    if (nagents >= MAX_AGENTS)
        return ST_INFO_BREAK;
    agent *a = &agents[nagents++];
    memset(a, 0, sizeof *a);
    a->handle = h;
    rt.agent_get_info(h, AI_DEVICE, &a->type);
    rt.agent_get_info(h, AI_DRIVER_NODE_ID, &a->node);
    if (a->type == DEVICE_GPU && rt.agent_iterate_isas && rt.isa_get_info_alt)
        rt.agent_iterate_isas(h, add_isa, a);
    return ST_SUCCESS;
}

static void record_agents(void)
{
    const rpg_agent_source src = {rt.agent_get_info, rt.iterate_pools, rt.pool_get_info,
                                  rpg_env(RPG_ENV_GO_KFD_TOPOLOGY)};
    uint64_t per_type[2] = {0, 0};
    for (int i = 0; i < nagents; i++) {
        const agent *s = &agents[i];
        int gpu = s->type == DEVICE_GPU;
        rpg_agent_desc d = {s->handle, gpu, s->node, s->gfx_major, s->gfx_minor, (uint64_t)i,
                            per_type[gpu]++};
        rpg_agent_info_rec r;
        rpg_agent_info_fill(&r, &src, &d);
        rpg_record_agent_info(&r);
    }
}

/* ---- the hooks -------------------------------------------------------------------------------- */

static void doorbell_or_reset(handle_t sig, int64_t value)
{
    const rq_signal *s = (const rq_signal *)(uintptr_t)sig;
    if (!sig || !started)
        return;
    if (s->kind < 0) { /* a doorbell: AMD_SIGNAL_KIND_(LEGACY_)DOORBELL */
        on_doorbell(s->queue_ptr, value);
        return;
    }
    rpg__attach_copy_signal_reset(sig);
    if (__atomic_load_n(app_slot(sig), __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&g_lock);
        settle_app_signal(sig);
        pthread_mutex_unlock(&g_lock);
    }
}

#define STORE_HOOK(name, real)                                                                 \
    static void hook_##name(handle_t sig, int64_t value)                                       \
    {                                                                                          \
        rpg_attach_enter();                                                                    \
        doorbell_or_reset(sig, value);                                                         \
        real(sig, value);                                                                      \
        rpg_attach_leave();                                                                    \
    }
STORE_HOOK(store_relaxed, real_store_relaxed)
STORE_HOOK(store_screlease, real_store_screlease)
STORE_HOOK(store_release, real_store_release)
STORE_HOOK(silent_relaxed, real_silent_relaxed)
STORE_HOOK(silent_screlease, real_silent_screlease)

static hstatus hook_signal_destroy(handle_t sig)
{
    rpg_attach_enter();
    rpg__attach_copy_signal_reset(sig);
    if (started && __atomic_load_n(app_slot(sig), __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&g_lock);
        settle_app_signal(sig);
        pthread_mutex_unlock(&g_lock);
    }
    hstatus s = real_signal_destroy(sig);
    rpg_attach_leave();
    return s;
}

#define ADD_HOOK(i, order)                                                                     \
    static uint64_t hook_add_##order(const void *hq, uint64_t n)                               \
    {                                                                                          \
        rpg_attach_enter();                                                                    \
        uint64_t first = real_add[i](hq, n);                                                   \
        tag_slots(hq, first, n);                                                               \
        rpg_attach_leave();                                                                    \
        return first;                                                                          \
    }
#define CAS_HOOK(i, order)                                                                     \
    static uint64_t hook_cas_##order(const void *hq, uint64_t expected, uint64_t value)        \
    {                                                                                          \
        rpg_attach_enter();                                                                    \
        uint64_t old = real_cas[i](hq, expected, value);                                       \
        if (old == expected && value > expected)                                               \
            tag_slots(hq, expected, value - expected);                                         \
        rpg_attach_leave();                                                                    \
        return old;                                                                            \
    }
/* A load sees the queue early (profiling on before its packets are written). */
#define LOAD_HOOK(i, order)                                                                    \
    static uint64_t hook_load_##order(const void *hq)                                          \
    {                                                                                          \
        rpg_attach_enter();                                                                    \
        uint64_t v = real_load[i](hq);                                                         \
        if (rpg_domains & RPG_WATCH)                                                           \
            (void)queue_get(hq, 0, v);                                                         \
        rpg_attach_leave();                                                                    \
        return v;                                                                              \
    }
/* A single producer reserving by load + store: slots [old, value). */
#define QSTORE_HOOK(i, order)                                                                  \
    static void hook_qstore_##order(const void *hq, uint64_t value)                            \
    {                                                                                          \
        rpg_attach_enter();                                                                    \
        uint64_t old = real_load[1] ? real_load[1](hq) : value;                                \
        real_qstore[i](hq, value);                                                             \
        if (value > old)                                                                       \
            tag_slots(hq, old, value - old);                                                   \
        rpg_attach_leave();                                                                    \
    }
ADD_HOOK(0, scacq_screl)
ADD_HOOK(1, scacquire)
ADD_HOOK(2, relaxed)
ADD_HOOK(3, screlease)
ADD_HOOK(4, acq_rel)
ADD_HOOK(5, acquire)
ADD_HOOK(6, release)
CAS_HOOK(0, scacq_screl)
CAS_HOOK(1, scacquire)
CAS_HOOK(2, relaxed)
CAS_HOOK(3, screlease)
CAS_HOOK(4, acq_rel)
CAS_HOOK(5, acquire)
CAS_HOOK(6, release)
LOAD_HOOK(0, scacquire)
LOAD_HOOK(1, relaxed)
LOAD_HOOK(2, acquire)
QSTORE_HOOK(0, relaxed)
QSTORE_HOOK(1, screlease)
QSTORE_HOOK(2, release)

static hstatus hook_queue_create(handle_t agent_h, uint32_t size, uint32_t type,
                                 void (*cb)(hstatus, void *, void *), void *data, uint32_t priv,
                                 uint32_t group, void **queue)
{
    rpg_attach_enter();
    hstatus s = real_queue_create(agent_h, size, type, cb, data, priv, group, queue);
    if (s == ST_SUCCESS && queue && *queue && (rpg_domains & RPG_WATCH))
        (void)queue_get(*queue, agent_h, 0);
    rpg_attach_leave();
    return s;
}

/* Before the real destroy: the queue's waiting dispatches are settled (or
 * counted lost) and it is forgotten; its profiling state goes with
 * it. */
static hstatus hook_queue_destroy(void *hq)
{
    rpg_attach_enter();
    aqueue *q = started ? queue_find(hq) : NULL;
    rpg_attach_pmc_queue_gone(hq);
    if (q) {
        pthread_mutex_lock(&q->lock);
        pthread_mutex_lock(&g_lock);
        q->dead = 1;
        if (q->spare)
            pool_put(q->spare);
        q->spare = 0;
        for (size_t i = 0; i < npend;) {
            if (pend[i].q != q) {
                i++;
                continue;
            }
            if (settle(i) || missed(i))
                continue;
            /* never completed through us: its signal may still be in the
             * ring; the queue's memory is going, so is the device's use */
            if (pend[i].own)
                pool_leak(pend[i].signal);
            record_untimed(&pend[i], WHY_DESTROYED);
            pend_remove(i);
        }
        uintptr_t k = (uintptr_t)hq;
        for (uint32_t i = hash64(k) & (QTAB - 1), n = 0; n < QTAB; i = (i + 1) & (QTAB - 1), n++)
            if (qtab_key[i] == k) {
                __atomic_store_n(&qtab_key[i], 1, __ATOMIC_RELEASE); /* a tombstone */
                break;
            }
        pthread_mutex_unlock(&g_lock);
        pthread_mutex_unlock(&q->lock);
    }
    hstatus s = real_queue_destroy(hq);
    rpg_attach_leave();
    return s;
}

static hstatus hook_freeze(handle_t exec, const char *options)
{
    rpg_attach_enter();
    hstatus s = real_freeze(exec, options);
    if (s == ST_SUCCESS && started) {
        pthread_mutex_lock(&g_lock);
        executable_seen(exec);
        pthread_mutex_unlock(&g_lock);
    }
    rpg_attach_leave();
    return s;
}

static hstatus hook_exec_destroy(handle_t exec)
{
    rpg_attach_enter();
    if (started) {
        pthread_mutex_lock(&g_lock);
        executable_gone(exec);
        pthread_mutex_unlock(&g_lock);
    }
    hstatus s = real_exec_destroy(exec);
    rpg_attach_leave();
    return s;
}

#define HOOK(n, w, r) {.name = (n), .wrapper = (void *)(w), .real = (void **)&(r)}
const rpg_hook rpg_attach_hsa_hooks[] = {
    HOOK("hsa_signal_store_relaxed", hook_store_relaxed, real_store_relaxed),
    HOOK("hsa_signal_store_screlease", hook_store_screlease, real_store_screlease),
    HOOK("hsa_signal_store_release", hook_store_release, real_store_release),
    HOOK("hsa_signal_silent_store_relaxed", hook_silent_relaxed, real_silent_relaxed),
    HOOK("hsa_signal_silent_store_screlease", hook_silent_screlease, real_silent_screlease),
    HOOK("hsa_signal_destroy", hook_signal_destroy, real_signal_destroy),
    HOOK("hsa_queue_add_write_index_scacq_screl", hook_add_scacq_screl, real_add[0]),
    HOOK("hsa_queue_add_write_index_scacquire", hook_add_scacquire, real_add[1]),
    HOOK("hsa_queue_add_write_index_relaxed", hook_add_relaxed, real_add[2]),
    HOOK("hsa_queue_add_write_index_screlease", hook_add_screlease, real_add[3]),
    HOOK("hsa_queue_add_write_index_acq_rel", hook_add_acq_rel, real_add[4]),
    HOOK("hsa_queue_add_write_index_acquire", hook_add_acquire, real_add[5]),
    HOOK("hsa_queue_add_write_index_release", hook_add_release, real_add[6]),
    HOOK("hsa_queue_cas_write_index_scacq_screl", hook_cas_scacq_screl, real_cas[0]),
    HOOK("hsa_queue_cas_write_index_scacquire", hook_cas_scacquire, real_cas[1]),
    HOOK("hsa_queue_cas_write_index_relaxed", hook_cas_relaxed, real_cas[2]),
    HOOK("hsa_queue_cas_write_index_screlease", hook_cas_screlease, real_cas[3]),
    HOOK("hsa_queue_cas_write_index_acq_rel", hook_cas_acq_rel, real_cas[4]),
    HOOK("hsa_queue_cas_write_index_acquire", hook_cas_acquire, real_cas[5]),
    HOOK("hsa_queue_cas_write_index_release", hook_cas_release, real_cas[6]),
    HOOK("hsa_queue_load_write_index_scacquire", hook_load_scacquire, real_load[0]),
    HOOK("hsa_queue_load_write_index_relaxed", hook_load_relaxed, real_load[1]),
    HOOK("hsa_queue_load_write_index_acquire", hook_load_acquire, real_load[2]),
    HOOK("hsa_queue_store_write_index_relaxed", hook_qstore_relaxed, real_qstore[0]),
    HOOK("hsa_queue_store_write_index_screlease", hook_qstore_screlease, real_qstore[1]),
    HOOK("hsa_queue_store_write_index_release", hook_qstore_release, real_qstore[2]),
    HOOK("hsa_queue_create", hook_queue_create, real_queue_create),
    HOOK("hsa_queue_destroy", hook_queue_destroy, real_queue_destroy),
    HOOK("hsa_executable_freeze", hook_freeze, real_freeze),
    HOOK("hsa_executable_destroy", hook_exec_destroy, real_exec_destroy),
};
const size_t rpg_attach_hsa_nhooks = sizeof rpg_attach_hsa_hooks / sizeof rpg_attach_hsa_hooks[0];

/* ---- start, poll, stop ------------------------------------------------------------------------- */

int rpg__attach_queue_identify(const void *queue, uint64_t *id, uint32_t *node)
{
    aqueue *q = started ? queue_find(queue) : NULL;
    if (!q)
        return 0;
    *id = q->id;
    *node = q->node;
    return 1;
}

/* A hook whose slot nobody has (an old alias the runtime no longer exports)
 * keeps *real NULL and is never called; the ones the hooks themselves call
 * are looked up here too, so that a hook on a slot of one name never calls
 * through a NULL pointer of another. */
static void *runtime;

static void *sym(const char *name)
{
    void *p = dlvsym(runtime, name, "ROCR_1");
    return p ? p : dlsym(runtime, name);
}

static void note_unavailable(uint32_t domain, const char *why)
{
    if (rpg_domains & domain)
        rpg_record_string(RPG_STRTAB_STATUS, RPG_STATUS_UNAVAILABLE | (uint64_t)__builtin_ctz(domain),
                          why, strlen(why));
}

static void fill_reals(void)
{
    const rpg_hook *h = rpg_attach_hsa_hooks;
    for (size_t i = 0; i < rpg_attach_hsa_nhooks; i++)
        if (!*h[i].real)
            *h[i].real = sym(h[i].name);
}

int rpg_attach_hsa_start(void)
{
    runtime = dlopen("libhsa-runtime64.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!runtime)
        return -ENOENT;
/* The table's own functions when attach_table.c wraps it: our calls unrecorded. */
#define LOOK(f, n) *(void **)&rt.f = rpg__table_original(n) ? rpg__table_original(n) : sym(n)
    LOOK(iterate_agents, "hsa_iterate_agents");
    LOOK(agent_get_info, "hsa_agent_get_info");
    LOOK(agent_iterate_isas, "hsa_agent_iterate_isas");
    LOOK(isa_get_info_alt, "hsa_isa_get_info_alt");
    LOOK(iterate_pools, "hsa_amd_agent_iterate_memory_pools");
    LOOK(pool_get_info, "hsa_amd_memory_pool_get_info");
    LOOK(signal_create, "hsa_signal_create");
    LOOK(amd_signal_create, "hsa_amd_signal_create");
    LOOK(signal_destroy, "hsa_signal_destroy");
    LOOK(signal_store_relaxed, "hsa_signal_store_relaxed");
    LOOK(signal_load_scacquire, "hsa_signal_load_scacquire");
    LOOK(set_profiler_enabled, "hsa_amd_profiling_set_profiler_enabled");
    LOOK(get_dispatch_time, "hsa_amd_profiling_get_dispatch_time");
    LOOK(queue_get_info, "hsa_amd_queue_get_info");
    LOOK(ext_table, "hsa_system_get_major_extension_table");
    LOOK(sym_get_info, "hsa_executable_symbol_get_info");
    LOOK(exec_iterate_symbols, "hsa_executable_iterate_symbols");
#undef LOOK
    if (!rt.iterate_agents || !rt.agent_get_info || !rt.signal_store_relaxed ||
        !rt.signal_load_scacquire || !rt.signal_destroy || !rt.sym_get_info) {
        dlclose(runtime);
        runtime = NULL;
        return -ENOSYS;
    }
    fill_reals();
    /* Counting first: every dispatch the hooks see once started is counted
     * or counted lost. A refusal is noted in the spool. */
    (void)rpg_attach_pmc_start();
    {
        /* PC sampling's sessions (a refusal is noted in the spool). */
        rpg_pcs_runtime pr = {runtime, (int (*)(int (*)(uint64_t, void *), void *))rt.iterate_agents,
                              rt.agent_get_info, rt.queue_get_info};
        (void)rpg__attach_pcs_start(&pr);
    }
    pthread_mutex_lock(&g_lock);
    nagents = 0;
    hstatus s = rt.iterate_agents(add_agent, NULL);
    if (s == ST_NOT_INITIALIZED) {
        pthread_mutex_unlock(&g_lock);
        dlclose(runtime);
        runtime = NULL;
        /* The app has not initialised HSA yet: the HSA side stays off, and
         * the kernel domain is noted unavailable for the CLI to report. */
        note_unavailable(RPG_DOMAIN_KERNEL, "the app had not initialised the HSA runtime when "
                                            "attached; attach again once it runs GPU work");
        return -ENOENT;
    }
    record_agents();
    /* The loader extension (1.03 has the executable walk; every runtime of
     * the matrix has it, 1.01 at least gives the code objects of executables
     * frozen while attached). */
    memset(&loader, 0, sizeof loader);
    if (rt.ext_table) {
        if (rt.ext_table(EXTENSION_AMD_LOADER, 1, sizeof loader, &loader) == ST_SUCCESS)
            loader_ok = 2;
        else if (rt.ext_table(EXTENSION_AMD_LOADER, 1, offsetof(__typeof__(loader), reader_create_from_file_with_offset_size),
                              &loader) == ST_SUCCESS)
            loader_ok = 1;
    }
    started = 1;
    if ((rpg_domains & RPG_WATCH) && loader_ok == 2 && loader.iterate_executables) {
        exec_list l = {NULL, 0, 0};
        loader.iterate_executables(walk_executable, &l);
        for (size_t i = 0; i < l.n; i++)
            executable_seen(l.v[i]);
        free(l.v);
    }
    pthread_mutex_unlock(&g_lock);
    if (loader_ok < 2 && (rpg_domains & RPG_WATCH)) {
        static const char why[] = "attach: the HSA runtime has no executable walk (AMD loader "
                                  "extension 1.03): kernels loaded before the attach are unnamed";
        rpg_record_string(RPG_STRTAB_STATUS, RPG_STATUS_SHIM_DECLINED, why, sizeof why - 1);
    }
    return 0;
}

void rpg_attach_hsa_poll(void)
{
    rpg_attach_pmc_poll();
    if (!started || !__atomic_load_n(&npend, __ATOMIC_RELAXED))
        return;
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < npend;)
        if (!settle(i))
            i++;
    for (size_t i = 0; i < npend;)
        if (!missed(i))
            i++;
    pthread_mutex_unlock(&g_lock);
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* How long the stop waits for dispatches in flight; and then, longer, for an
 * entry of ours whose fate a later barrier packet still running will tell. */
#define STOP_WAIT_MS 2000
#define STOP_EXTRA_MS 3000

/* Whether some entry of ours is still waiting on a later barrier packet. */
static int stop_waits_longer(void)
{
    int r = 0;
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < npend && !r; i++)
        r = pend[i].own && later_barrier_pending(i);
    pthread_mutex_unlock(&g_lock);
    return r;
}

uint64_t rpg_attach_hsa_stop(void)
{
    if (!started)
        return 0;
    /* The first dispatch of a queue in the window goes uncounted when the
     * packets before it, submitted before the attach, may still run: an
     * edge of the window, with those in flight at the attach. */
    uint64_t pmc_edge = 0;
    uint64_t uncounted = rpg_attach_pmc_stop(&pmc_edge);
    __atomic_fetch_add(&in_flight_at_attach, pmc_edge, __ATOMIC_RELAXED);
    uint64_t deadline = mono_ms() + STOP_WAIT_MS;
    for (;;) {
        rpg_attach_hsa_poll();
        if (!__atomic_load_n(&npend, __ATOMIC_RELAXED) || mono_ms() >= deadline)
            break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    deadline = mono_ms() + STOP_EXTRA_MS;
    while (__atomic_load_n(&npend, __ATOMIC_RELAXED) && mono_ms() < deadline && stop_waits_longer()) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        rpg_attach_hsa_poll();
    }
    rpg__attach_pcs_stop(); /* the window's dispatches settled: their last samples */
    pthread_mutex_lock(&g_lock);
    started = 0;
    for (size_t i = 0; i < npend; i++) {
        if (pend[i].own)
            pool_leak(pend[i].signal); /* the device may still hold it (see the top) */
        record_untimed(&pend[i], WHY_STOP);
    }
    npend = app_pending = 0;
    memset(app_hash, 0, sizeof app_hash);
    for (int i = 0; i < nqueues; i++) {
        aqueue *q = queues[i];
        if (q->prof_set && !q->dead && rt.set_profiler_enabled)
            rt.set_profiler_enabled(q->amd, 0);
        free(q->tags);
        pthread_mutex_destroy(&q->lock);
        free(q);
    }
    nqueues = 0;
    memset(qtab_key, 0, sizeof qtab_key);
    memset(qtab_q, 0, sizeof qtab_q);
    for (size_t i = 0; i < nall; i++)
        rt.signal_destroy(all_signals[i]);
    free(all_signals);
    free(pool);
    free(pend);
    free(kmap);
    free(cos);
    free(execs);
    all_signals = pool = NULL;
    pend = NULL;
    kmap = NULL;
    cos = NULL;
    execs = NULL;
    nall = all_cap = npool = pool_cap = pend_cap = ncos = cos_cap = nexecs = execs_cap = 0;
    kmap_mask = kmap_used = 0;
    next_kernel_id = next_code_object_id = next_dispatch_id = next_queue_id = 0;
    nagents = 0;
    loader_ok = 0;
    uint64_t n = lost_untimed + lost_unseen + lost_overrun + uncounted;
    /* "lost=N in_flight_at_attach=N running_at_detach=N" and the classes
     * of the lost that are not 0 (internal/attach reads it). */
    {
        static const char *const why_name[WHY_N] = {"past", "unstamped", "reused", "nomem",
                                                    "destroyed", NULL, "missed"};
        int len = snprintf(losses_line, sizeof losses_line,
                           "lost=%llu in_flight_at_attach=%llu running_at_detach=%llu",
                           (unsigned long long)n,
                           (unsigned long long)__atomic_load_n(&in_flight_at_attach, __ATOMIC_RELAXED),
                           (unsigned long long)untimed_why[WHY_STOP]);
        const uint64_t more[3] = {lost_unseen, lost_overrun, uncounted};
        static const char *const more_name[3] = {"unseen", "overwritten", "uncounted"};
        for (int w = 0; w < WHY_N + 3 && len > 0 && (size_t)len < sizeof losses_line; w++) {
            uint64_t v = w < WHY_N ? (why_name[w] ? untimed_why[w] : 0) : more[w - WHY_N];
            const char *name = w < WHY_N ? why_name[w] : more_name[w - WHY_N];
            if (v)
                len += snprintf(losses_line + len, sizeof losses_line - (size_t)len, " %s=%llu", name,
                                (unsigned long long)v);
        }
    }
    const char *dbg = rpg_env(RPG_ENV_GO_SHIM_DEBUG);
    if (dbg && dbg[0] && dbg[0] != '0')
        fprintf(stderr,
                "rocprof-go attach: %llu dispatches without times, %llu packets consumed unseen, "
                "%llu overwritten unseen; without times: %llu past the device at the doorbell, "
                "%llu unstamped, %llu signal reused, %llu out of memory, %llu queue destroyed, "
                "%llu not complete at the detach, %llu run without our signal; "
                "%llu signals left with the runtime\n",
                (unsigned long long)lost_untimed, (unsigned long long)lost_unseen,
                (unsigned long long)lost_overrun, (unsigned long long)untimed_why[WHY_PAST],
                (unsigned long long)untimed_why[WHY_UNSTAMPED], (unsigned long long)untimed_why[WHY_REUSED],
                (unsigned long long)untimed_why[WHY_NOMEM], (unsigned long long)untimed_why[WHY_DESTROYED],
                (unsigned long long)untimed_why[WHY_STOP], (unsigned long long)untimed_why[WHY_MISSED],
                (unsigned long long)signals_left);
    memset(untimed_why, 0, sizeof untimed_why);
    lost_untimed = lost_unseen = lost_overrun = signals_left = 0;
    __atomic_store_n(&in_flight_at_attach, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&g_lock);
    if (runtime) {
        dlclose(runtime); /* the RTLD_NOLOAD reference only */
        runtime = NULL;
    }
    return n;
}

const char *rpg_attach_hsa_losses(void)
{
    return losses_line[0] ? losses_line : "lost=0 in_flight_at_attach=0 running_at_detach=0";
}
