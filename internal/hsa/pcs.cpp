// pcs.cpp: PC sampling (host trap and stochastic) through ROCR's
// hsa_ven_amd_pcs extension (ROCR 6.4 and later; docs/pc-sampling.md).
//
// When the CLI asks for PC sampling (ROCPROF_PC_SAMPLING_METHOD=host_trap
// with _UNIT=time and _INTERVAL=N µs, or stochastic with _UNIT=cycles and
// _INTERVAL=N shader-clock cycles), OnLoad creates and starts one session
// per GPU agent that offers that method and unit. ROCR's sampling thread
// hands full buffers to
// data_ready, which copies them into the spool as they come
// (RPG_KIND_PC_SAMPLE records, ROCR's lost count with them). Each sample
// names its dispatch only by the trap handler's correlation id, (doorbell
// id << 32) | hardware queue slot: while sampling is on, the intercept
// callback puts an AMD_AQL_FORMAT_INTERCEPT_MARKER packet before each
// dispatch (queue.cpp), ROCR calls pcs_marker with the hardware queue and
// the slot the dispatch takes there, and that writes one
// RPG_KIND_PC_SAMPLE_DISPATCH record (dispatch id -> trap id). The CLI
// matches samples to dispatches from those records and the dispatches'
// times (a slot is reused only after its dispatch completed). Nothing here
// runs per dispatch when sampling is off.
//
// At exit (a destructor running after the queues' drain) or at
// hsa_shut_down, the sessions are stopped, flushed and destroyed, so the
// samples of the last dispatches reach the spool.
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim_internal.hpp"

bool shim_pcs_active;

namespace {

// hsa_ven_amd_pc_sampling.h 1.00 (ROCm 6.2+), declared here: the shim
// builds against ROCm 5.2's headers.
struct PcsHandle {
    uint64_t handle;
};
typedef hsa_status_t (*PcsCopy)(void *, size_t, void *);
typedef void (*PcsDataReady)(void *, size_t, size_t, PcsCopy, void *);
struct PcsConfig {
    int method; // 0 host trap, 1 stochastic
    int units;  // 0 µs, 1 cycles, 2 instructions
    size_t min_interval, max_interval;
    uint64_t flags;
};
typedef hsa_status_t (*PcsConfigCb)(const PcsConfig *, void *);
struct PcsFns {
    hsa_status_t (*iterate)(hsa_agent_t, PcsConfigCb, void *);
    hsa_status_t (*create)(hsa_agent_t, int, int, size_t, size_t, size_t, PcsDataReady, void *, PcsHandle *);
    hsa_status_t (*destroy)(PcsHandle);
    hsa_status_t (*start)(PcsHandle);
    hsa_status_t (*stop)(PcsHandle);
    hsa_status_t (*flush)(PcsHandle);
} g_fn;

// amd_aql_intercept_marker_t (hsa_api_trace.h, ROCm 6.2+).
const uint8_t kInterceptMarkerFormat = 0xFE;
struct InterceptMarker {
    uint16_t header;
    uint8_t format;
    uint8_t reserved[5];
    void (*callback)(const InterceptMarker *, hsa_queue_t *, uint64_t);
    uint64_t user_data[6];
};
static_assert(sizeof(InterceptMarker) == 64, "intercept marker size");

// The client buffer: 16,384 samples. ROCR's device buffers are half of it
// each; a dispatch that writes more samples than a device buffer holds
// before ROCR's thread switches buffers loses the rest (reported lost).
const size_t kBufferBytes = 1u << 20;
const size_t kLatencyNs = 1000;
// Samples per spool record (a record holds at most ~64 KiB).
const uint32_t kPerRecord = 1000;

struct Session {
    PcsHandle h;
    uint32_t node;
    bool started;
    char *buf; // data_ready's copy
    pthread_mutex_t lock;
};
const int kMaxSessions = 64;
Session g_sessions[kMaxSessions];
int g_nsessions;
pthread_mutex_t g_stop_lock = PTHREAD_MUTEX_INITIALIZER;
bool g_stopped;
int g_pid;
// The sessions' method and unit (hsa_ven_amd_pcs_method_kind_t /
// _units_t) and the spool's name of the method.
int g_method, g_units;
uint32_t g_rec_method;

hsa_status_t (*g_queue_get_info)(hsa_queue_t *, int, void *);

void record_batch(uint32_t node, const char *samples, uint32_t n, uint64_t lost)
{
    rpg_pc_sample_rec *r = (rpg_pc_sample_rec *)rpg_record_reserve(
        RPG_KIND_PC_SAMPLE, (uint32_t)(sizeof *r + (size_t)n * sizeof(rpg_pc_sample_hosttrap)));
    if (!r)
        return; // counted as dropped in the spool header
    r->h.version = 2; // with the method word (spool.h)
    r->agent_node = node;
    r->count = n;
    r->lost = lost;
    r->method = g_rec_method;
    r->reserved = 0;
    if (n)
        memcpy(r + 1, samples, (size_t)n * sizeof(rpg_pc_sample_hosttrap));
    rpg_record_publish(r);
}

void data_ready(void *data, size_t size, size_t lost, PcsCopy copy, void *h)
{
    Session *s = (Session *)data;
    pthread_mutex_lock(&s->lock);
    size_t n = size / sizeof(rpg_pc_sample_hosttrap);
    if (size > kBufferBytes || copy(h, size, s->buf) != HSA_STATUS_SUCCESS) {
        lost += n; // never silently
        n = 0;
    }
    uint64_t l = lost;
    size_t i = 0;
    do {
        uint32_t k = (uint32_t)(n - i < kPerRecord ? n - i : kPerRecord);
        record_batch(s->node, s->buf + i * sizeof(rpg_pc_sample_hosttrap), k, l);
        l = 0;
        i += k;
    } while (i < n);
    pthread_mutex_unlock(&s->lock);
}

struct Find {
    bool found;
};
hsa_status_t find_method(const PcsConfig *c, void *d)
{
    if (c->method == g_method && c->units == g_units)
        ((Find *)d)->found = true;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t each_gpu(hsa_agent_t agent, void *data)
{
    size_t interval = *(size_t *)data;
    const ShimAgent *a = shim_find_agent(agent);
    if (!a || a->type != HSA_DEVICE_TYPE_GPU || g_nsessions >= kMaxSessions)
        return HSA_STATUS_SUCCESS;
    Find f{false};
    if (g_fn.iterate(agent, find_method, &f) != HSA_STATUS_SUCCESS || !f.found)
        return HSA_STATUS_SUCCESS; // this GPU lacks the method (the CLI checked some GPU has it)
    Session *s = &g_sessions[g_nsessions];
    s->node = a->node;
    s->buf = (char *)malloc(kBufferBytes);
    pthread_mutex_init(&s->lock, nullptr);
    if (!s->buf)
        return HSA_STATUS_SUCCESS;
    hsa_status_t st = g_fn.create(agent, g_method, g_units, interval, kLatencyNs, kBufferBytes, data_ready, s, &s->h);
    if (st != HSA_STATUS_SUCCESS) {
        fprintf(stderr, "rocprof-go: PC sampling: hsa_ven_amd_pcs_create on agent %u failed (0x%x)\n", a->node,
                st);
        free(s->buf);
        return HSA_STATUS_SUCCESS;
    }
    st = g_fn.start(s->h);
    if (st != HSA_STATUS_SUCCESS) {
        fprintf(stderr, "rocprof-go: PC sampling: hsa_ven_amd_pcs_start on agent %u failed (0x%x)\n", a->node,
                st);
        g_fn.destroy(s->h);
        free(s->buf);
        return HSA_STATUS_SUCCESS;
    }
    s->started = true;
    g_nsessions++;
    return HSA_STATUS_SUCCESS;
}

} // namespace

// The marker's callback: ROCR is about to put the dispatch at packet_id of
// the hardware queue hq.
extern "C" void shim_pcs_marker(const void *pkt, hsa_queue_t *hq, uint64_t packet_id)
{
    const InterceptMarker *m = (const InterceptMarker *)pkt;
    uint64_t doorbell = 0;
    if (!g_queue_get_info || g_queue_get_info(hq, 1 /* HSA_AMD_QUEUE_INFO_DOORBELL_ID */, &doorbell) !=
                                 HSA_STATUS_SUCCESS)
        return;
    rpg_pc_sample_dispatch_rec *r =
        (rpg_pc_sample_dispatch_rec *)rpg_record_reserve(RPG_KIND_PC_SAMPLE_DISPATCH, sizeof *r);
    if (!r)
        return;
    uint64_t slot = hq->size ? packet_id % hq->size : packet_id;
    r->dispatch_id = m->user_data[0];
    r->trap_id = ((doorbell >> 3) & 0x3ff) << 32 | (slot & 0x1ffffff);
    r->agent_node = (uint32_t)m->user_data[1];
    r->reserved = 0;
    rpg_record_publish(r);
}

// Fills a marker packet for a dispatch (queue.cpp, while sampling is on).
void shim_pcs_fill_marker(void *pkt, uint64_t dispatch_id, uint32_t node)
{
    InterceptMarker *m = (InterceptMarker *)pkt;
    memset(m, 0, sizeof *m);
    m->header = HSA_PACKET_TYPE_VENDOR_SPECIFIC << HSA_PACKET_HEADER_TYPE;
    m->format = kInterceptMarkerFormat;
    m->callback = (void (*)(const InterceptMarker *, hsa_queue_t *, uint64_t))shim_pcs_marker;
    m->user_data[0] = dispatch_id;
    m->user_data[1] = node;
}

// Whether the runtime library holding fn has ROCR 7's stochastic sampling
// thread. ROCR 6.4 creates a stochastic session with the driver but gives
// the trap handler no buffers for it and faults when it stops
// (docs/pc-sampling.md, Limits); the CLI refuses that before the app starts
// (internal/pipeline/pcsampling.go, the same test), and this keeps an app
// started around the CLI from reaching the fault. True when the library
// cannot be read (nothing known).
static bool runtime_has_stochastic(void *fn)
{
    Dl_info info;
    if (!fn || !dladdr(fn, &info) || !info.dli_fname)
        return true;
    int fd = open(info.dli_fname, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return true;
    struct stat st;
    bool has = true;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        void *m = mmap(nullptr, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            static const char name[] = "PcSamplingStochasticThread";
            has = memmem(m, (size_t)st.st_size, name, sizeof name - 1) != nullptr;
            munmap(m, (size_t)st.st_size);
        }
    }
    close(fd);
    return has;
}

// From OnLoad, with the agents known: starts the sessions when the CLI
// asked for them. Returns false (with why) when it asked and nothing
// could be started.
bool shim_pcs_init(char *why, size_t whylen)
{
    const char *method = getenv(RPG_ENV_PC_SAMPLING_METHOD);
    const char *iv = getenv(RPG_ENV_PC_SAMPLING_INTERVAL);
    if (!method || !*method)
        return true;
    if (strcmp(method, "host_trap") == 0) {
        g_method = 0, g_units = 0, g_rec_method = RPG_PC_SAMPLING_METHOD_HOST_TRAP;
    } else if (strcmp(method, "stochastic") == 0) {
        g_method = 1, g_units = 1, g_rec_method = RPG_PC_SAMPLING_METHOD_STOCHASTIC;
    } else {
        snprintf(why, whylen, "PC sampling method %s is not collected by this build (host_trap and stochastic are)",
                 method);
        return false;
    }
    size_t interval = iv ? strtoull(iv, nullptr, 10) : 0;
    if (!interval) {
        snprintf(why, whylen, "PC sampling: no interval (%s)", RPG_ENV_PC_SAMPLING_INTERVAL);
        return false;
    }
    void *rt = dlopen("libhsa-runtime64.so.1", RTLD_LAZY | RTLD_NOLOAD);
    auto sym = [rt](const char *name) {
        void *f = rt ? dlsym(rt, name) : nullptr;
        return f ? f : dlsym(RTLD_DEFAULT, name);
    };
    *(void **)&g_fn.iterate = sym("hsa_ven_amd_pcs_iterate_configuration");
    *(void **)&g_fn.create = sym("hsa_ven_amd_pcs_create");
    *(void **)&g_fn.destroy = sym("hsa_ven_amd_pcs_destroy");
    *(void **)&g_fn.start = sym("hsa_ven_amd_pcs_start");
    *(void **)&g_fn.stop = sym("hsa_ven_amd_pcs_stop");
    *(void **)&g_fn.flush = sym("hsa_ven_amd_pcs_flush");
    *(void **)&g_queue_get_info = sym("hsa_amd_queue_get_info");
    if (!g_fn.iterate || !g_fn.create || !g_fn.destroy || !g_fn.start || !g_fn.stop || !g_fn.flush ||
        !g_queue_get_info) {
        snprintf(why, whylen, "PC sampling: the HSA runtime has no hsa_ven_amd_pcs_* (ROCm 6.4 or later has)");
        return false;
    }
    if (g_method == 1 && !runtime_has_stochastic((void *)g_fn.create)) {
        snprintf(why, whylen, "PC sampling: the HSA runtime has no stochastic sampling (ROCm 6.4's samples with host "
                              "trap only; ROCm 7.x offers stochastic on gfx942)");
        return false;
    }
    shim_core.hsa_iterate_agents_fn(each_gpu, &interval);
    if (g_nsessions == 0) {
        snprintf(why, whylen, "PC sampling: no GPU agent accepted a %s session at %zu %s", method, interval,
                 g_units ? "cycles" : "us");
        return false;
    }
    g_pid = getpid();
    shim_pcs_active = true;
    return true;
}

// Stops, flushes and destroys the sessions once (hsa_shut_down, or exit).
void shim_pcs_shutdown()
{
    if (!shim_pcs_active || getpid() != g_pid)
        return;
    pthread_mutex_lock(&g_stop_lock);
    if (!g_stopped) {
        g_stopped = true;
        for (int i = 0; i < g_nsessions; i++) {
            Session *s = &g_sessions[i];
            if (!s->started)
                continue;
            g_fn.stop(s->h);
            g_fn.flush(s->h);
            g_fn.destroy(s->h);
            s->started = false;
        }
        shim_pcs_active = false;
    }
    pthread_mutex_unlock(&g_stop_lock);
}

// After the queues' drain (unprioritised destructors run before this one):
// HIP 5 never calls hsa_shut_down (HIP 6 and 7 do, from their own exit-time
// destructors, which may run after this one).
__attribute__((destructor(200))) static void pcs_stop_at_exit()
{
    shim_pcs_shutdown();
}
