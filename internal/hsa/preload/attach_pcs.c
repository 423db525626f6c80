/*
 * attach_pcs.c: PC sampling while attached (attach_pcs.h, docs/attach.md).
 *
 * The same sessions as launch mode's shim (pcs.cpp), in plain C: ROCR's
 * hsa_ven_amd_pcs extension (ROCR 6.4 and later) in the runtime the
 * process loaded, one session per GPU agent offering the method and unit
 * asked for; ROCR's sampling thread hands full buffers to data_ready, which
 * copies them into the spool as RPG_KIND_PC_SAMPLE records with ROCR's lost
 * count.
 *
 * A sample names its dispatch only by the trap handler's correlation id,
 * ((doorbell >> 3) & 0x3ff) << 32 | slot, of the hardware queue the
 * dispatch ran on. In launch mode the intercept queue's marker packet
 * gives ROCR's hardware queue and slot; attached, the app's queues are
 * ROCR's hardware AQL queues themselves (no tool loaded an intercept
 * queue), so the doorbell hook knows both: the queue's doorbell address
 * (hsa_amd_queue_get_info's HSA_AMD_QUEUE_INFO_DOORBELL_ID, the address of
 * its 64-bit hardware doorbell, as the marker path asks it) and the
 * packet's index modulo the queue's size. It writes the same
 * RPG_KIND_PC_SAMPLE_DISPATCH record (dispatch id -> trap id), and the CLI
 * matches them as for a launched run.
 *
 * The sessions stop at the detach, before the hooks go (a dispatch the
 * hook no longer sees is not sampled, so no sample names a slot without
 * its dispatch); once the window's dispatches settled they are flushed
 * (their last samples reach the spool) and destroyed, before the library
 * unloads: ROCR's thread never calls into an unmapped data_ready. A
 * dispatch submitted before the attach and still running when the
 * sessions start is sampled under a slot no record names: the CLI leaves
 * those samples out and says how many (the window's edge).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach_internal.h"
#include "attach_pcs.h"
#include "rpg_attach.h"
#include "rpg_internal.h"

/* hsa_ven_amd_pc_sampling.h 1.00 (ROCm 6.2+): declared here, the library
 * builds against no ROCm header. */
typedef struct pcs_handle {
    uint64_t handle;
} pcs_handle;
typedef int (*pcs_copy_fn)(void *, size_t, void *);
typedef void (*pcs_ready_fn)(void *, size_t, size_t, pcs_copy_fn, void *);
typedef struct pcs_config {
    int method; /* 0 host trap, 1 stochastic */
    int units;  /* 0 us, 1 cycles, 2 instructions */
    size_t min_interval, max_interval;
    uint64_t flags;
} pcs_config;
typedef int (*pcs_config_cb)(const pcs_config *, void *);

static struct {
    int (*iterate)(uint64_t, pcs_config_cb, void *);
    int (*create)(uint64_t, int, int, size_t, size_t, size_t, pcs_ready_fn, void *, pcs_handle *);
    int (*destroy)(pcs_handle);
    int (*start)(pcs_handle);
    int (*stop)(pcs_handle);
    int (*flush)(pcs_handle);
} fn;

enum { ST_SUCCESS = 0, AI_DEVICE = 17, AI_DRIVER_NODE_ID = 0xA004, DEVICE_GPU = 1, QI_DOORBELL_ID = 1 };

#define BUFFER_BYTES ((size_t)1 << 20) /* the client buffer: 16,384 samples (pcs.cpp) */
#define LATENCY_NS 1000
#define PER_RECORD 1000u /* samples per spool record */
#define MAX_SESSIONS 64

typedef struct session {
    pcs_handle h;
    uint32_t node;
    int started;
    char *buf;
    pthread_mutex_t lock;
} session;
static session sessions[MAX_SESSIONS];
static int nsessions;
static int on;
static int method, units;
static uint32_t rec_method;
static size_t interval;
static int (*queue_get_info)(void *, int, void *);
static int (*agent_get_info)(uint64_t, int, void *);

static void record_batch(uint32_t node, const char *samples, uint32_t n, uint64_t lost)
{
    rpg_pc_sample_rec *r = (rpg_pc_sample_rec *)rpg_record_reserve(
        RPG_KIND_PC_SAMPLE, (uint32_t)(sizeof *r + (size_t)n * sizeof(rpg_pc_sample_hosttrap)));
    if (!r)
        return; /* counted as dropped in the spool header */
    r->h.version = 2;
    r->agent_node = node;
    r->count = n;
    r->lost = lost;
    r->method = rec_method;
    r->reserved = 0;
    if (n)
        memcpy(r + 1, samples, (size_t)n * sizeof(rpg_pc_sample_hosttrap));
    rpg_record_publish(r);
}

static void data_ready(void *data, size_t size, size_t lost, pcs_copy_fn copy, void *h)
{
    session *s = data;
    pthread_mutex_lock(&s->lock);
    size_t n = size / sizeof(rpg_pc_sample_hosttrap);
    if (size > BUFFER_BYTES || copy(h, size, s->buf) != ST_SUCCESS) {
        lost += n; /* never silently */
        n = 0;
    }
    uint64_t l = lost;
    size_t i = 0;
    do {
        uint32_t k = (uint32_t)(n - i < PER_RECORD ? n - i : PER_RECORD);
        record_batch(s->node, s->buf + i * sizeof(rpg_pc_sample_hosttrap), k, l);
        l = 0;
        i += k;
    } while (i < n);
    pthread_mutex_unlock(&s->lock);
}

static int find_method(const pcs_config *c, void *d)
{
    if (c->method == method && c->units == units)
        *(int *)d = 1;
    return ST_SUCCESS;
}

static int each_gpu(uint64_t agent, void *data)
{
    (void)data;
    int type = 0;
    uint32_t node = 0;
    if (agent_get_info(agent, AI_DEVICE, &type) != ST_SUCCESS || type != DEVICE_GPU || nsessions >= MAX_SESSIONS)
        return ST_SUCCESS;
    agent_get_info(agent, AI_DRIVER_NODE_ID, &node);
    int found = 0;
    if (fn.iterate(agent, find_method, &found) != ST_SUCCESS || !found)
        return ST_SUCCESS;
    session *s = &sessions[nsessions];
    memset(s, 0, sizeof *s);
    s->node = node;
    s->buf = malloc(BUFFER_BYTES);
    if (!s->buf)
        return ST_SUCCESS;
    pthread_mutex_init(&s->lock, NULL);
    if (fn.create(agent, method, units, interval, LATENCY_NS, BUFFER_BYTES, data_ready, s, &s->h) != ST_SUCCESS) {
        pthread_mutex_destroy(&s->lock);
        free(s->buf);
        return ST_SUCCESS;
    }
    if (fn.start(s->h) != ST_SUCCESS) {
        fn.destroy(s->h);
        pthread_mutex_destroy(&s->lock);
        free(s->buf);
        return ST_SUCCESS;
    }
    s->started = 1;
    nsessions++;
    return ST_SUCCESS;
}

/* Whether the runtime holding f has ROCR 7's stochastic sampling thread
 * (pcs.cpp's runtime_has_stochastic: ROCR 6.4 faults stopping a
 * stochastic session). True when the library cannot be read. */
static int has_stochastic(void *f)
{
    Dl_info info;
    if (!f || !dladdr(f, &info) || !info.dli_fname)
        return 1;
    int fd = open(info.dli_fname, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 1;
    struct stat st;
    int has = 1;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            static const char name[] = "PcSamplingStochasticThread";
            has = memmem(m, (size_t)st.st_size, name, sizeof name - 1) != NULL;
            munmap(m, (size_t)st.st_size);
        }
    }
    close(fd);
    return has;
}

static int refuse(const char *why)
{
    rpg_record_string(RPG_STRTAB_STATUS, RPG_STATUS_UNAVAILABLE | RPG_STATUS_PC_SAMPLING_BIT, why, strlen(why));
    return -ENOTSUP;
}

int rpg__attach_pcs_start(const rpg_pcs_runtime *rt)
{
    const char *m = rpg_env(RPG_ENV_PC_SAMPLING_METHOD);
    const char *iv = rpg_env(RPG_ENV_PC_SAMPLING_INTERVAL);
    nsessions = 0;
    on = 0;
    if (!m || !*m)
        return 0;
    char why[256];
    if (strcmp(m, "host_trap") == 0) {
        method = 0, units = 0, rec_method = RPG_PC_SAMPLING_METHOD_HOST_TRAP;
    } else if (strcmp(m, "stochastic") == 0) {
        method = 1, units = 1, rec_method = RPG_PC_SAMPLING_METHOD_STOCHASTIC;
    } else {
        snprintf(why, sizeof why,
                 "PC sampling method %s is not collected by this build (host_trap and stochastic are)", m);
        return refuse(why);
    }
    interval = iv ? strtoull(iv, NULL, 10) : 0;
    if (!interval) {
        snprintf(why, sizeof why, "PC sampling: no interval (%s)", RPG_ENV_PC_SAMPLING_INTERVAL);
        return refuse(why);
    }
#define PCS_SYM(f, n)                                                                                  \
    do {                                                                                               \
        void *p_ = rt->runtime ? dlsym(rt->runtime, n) : NULL;                                         \
        memcpy(&fn.f, &p_, sizeof p_);                                                                 \
    } while (0)
    PCS_SYM(iterate, "hsa_ven_amd_pcs_iterate_configuration");
    PCS_SYM(create, "hsa_ven_amd_pcs_create");
    PCS_SYM(destroy, "hsa_ven_amd_pcs_destroy");
    PCS_SYM(start, "hsa_ven_amd_pcs_start");
    PCS_SYM(stop, "hsa_ven_amd_pcs_stop");
    PCS_SYM(flush, "hsa_ven_amd_pcs_flush");
#undef PCS_SYM
    queue_get_info = rt->queue_get_info;
    agent_get_info = rt->agent_get_info;
    if (!fn.iterate || !fn.create || !fn.destroy || !fn.start || !fn.stop || !fn.flush || !queue_get_info ||
        !agent_get_info || !rt->iterate_agents)
        return refuse("PC sampling: the HSA runtime has no hsa_ven_amd_pcs_* (ROCm 6.4 or later has)");
    void *create_addr;
    memcpy(&create_addr, &fn.create, sizeof create_addr);
    if (method == 1 && !has_stochastic(create_addr))
        return refuse("PC sampling: the HSA runtime has no stochastic sampling (ROCm 6.4's samples with host "
                      "trap only; ROCm 7.x offers stochastic on gfx942)");
    /* The samples are matched to the dispatches: those are recorded, with
     * their slots, from before the first session starts (a dispatch the
     * hooks saw is never sampled unnamed). */
    __atomic_fetch_or(&rpg_domains, RPG_DOMAIN_KERNEL, __ATOMIC_SEQ_CST);
    __atomic_store_n(&on, 1, __ATOMIC_RELEASE);
    rt->iterate_agents(each_gpu, NULL);
    if (nsessions == 0) {
        __atomic_store_n(&on, 0, __ATOMIC_RELEASE);
        snprintf(why, sizeof why, "PC sampling: no GPU agent accepted a %s session at %zu %s", m, interval,
                 units ? "cycles" : "us");
        return refuse(why);
    }
    return 0;
}

int rpg__attach_pcs_on(void)
{
    return __atomic_load_n(&on, __ATOMIC_ACQUIRE);
}

void rpg__attach_pcs_dispatch(void *amdq, uint64_t index, uint64_t dispatch_id, uint32_t node)
{
    if (!rpg__attach_pcs_on())
        return;
    uint64_t doorbell = 0;
    if (queue_get_info(amdq, QI_DOORBELL_ID, &doorbell) != ST_SUCCESS)
        return;
    uint32_t size = *(const uint32_t *)((const char *)amdq + 24); /* hsa_queue_t.size */
    uint64_t slot = size ? index % size : index;
    rpg_pc_sample_dispatch_rec *r =
        (rpg_pc_sample_dispatch_rec *)rpg_record_reserve(RPG_KIND_PC_SAMPLE_DISPATCH, sizeof *r);
    if (!r)
        return; /* counted as dropped in the spool header */
    r->dispatch_id = dispatch_id;
    r->trap_id = ((doorbell >> 3) & 0x3ff) << 32 | (slot & 0x1ffffff);
    r->agent_node = node;
    r->reserved = 0;
    rpg_record_publish(r);
}

void rpg__attach_pcs_detaching(void)
{
    if (!rpg__attach_pcs_on())
        return;
    /* Stopped first, then no more dispatch records: a dispatch between the
     * two is sampled with its slot known; after them the hooks go, and a
     * dispatch they do not see is not sampled. */
    for (int i = 0; i < nsessions; i++)
        if (sessions[i].started)
            fn.stop(sessions[i].h);
    __atomic_store_n(&on, 0, __ATOMIC_RELEASE);
}

void rpg__attach_pcs_stop(void)
{
    rpg__attach_pcs_detaching();
    for (int i = 0; i < nsessions; i++) {
        session *s = &sessions[i];
        if (!s->started)
            continue;
        fn.flush(s->h);
        fn.destroy(s->h);
        s->started = 0;
        pthread_mutex_destroy(&s->lock);
        free(s->buf);
        s->buf = NULL;
    }
    nsessions = 0;
}
