/*
 * attach_pmc.c: counters while attached (attach_pmc.h, docs/attach.md).
 *
 * In launch mode the shim's intercept queue wraps each counted dispatch in
 * the counters' start, stop and read packets (pmc.cpp) and Go decodes and
 * evaluates the output buffer. In a process we attach to, the queues are
 * the app's own, each slot holds one packet, and no Go may run. So:
 *
 *  - The CLI builds everything Go would (internal/attach/pmc.go): for each
 *    GPU, the packets of the set's one pass at made-up addresses with the
 *    places those addresses went (relocations), and each counter's records
 *    as an affine function of the output buffer's 64-bit samples. It leaves
 *    that program beside the attach socket, in the run's private directory
 *    (checked here: a regular file of ours, no access for others).
 *  - At the start, per GPU: a queue of ours (the real hsa_queue_create,
 *    profiling on) and SLOTS counting slots, each an output and a command
 *    buffer in fine-grained system memory (allocated with the runtime's
 *    functions), its packets relocated to them, and a signal its read
 *    packet completes.
 *  - In the doorbell hook, before the real doorbell store announces it, a
 *    kernel dispatch packet of the app is moved: our queue gets
 *        start, the dispatch (its completion signal ours, for its times),
 *        stop, read (completing the slot's signal)
 *    and the app's slot becomes a barrier-AND packet that waits for the
 *    slot's signal and carries the app's completion signal, its barrier bit
 *    set. So the app's queue goes on only once the dispatch ran and its
 *    counters were read, and the app's signal completes as before. Our
 *    queue runs one counted dispatch at a time (every packet has the
 *    barrier bit), so their counters do not mix.
 *  - The dispatch must not start before the app's earlier packets
 *    complete, as in its own queue. Our queue never waits on the app's
 *    (a wait there could close a cycle), so a dispatch is moved only when
 *    the packet before it in the app's queue was moved too (our queue keeps
 *    their order, and that packet's barrier waited for everything before
 *    it) or had the barrier bit and is known complete (its completion
 *    signal dropped below the value it had when we looked). Otherwise, and
 *    when no slot frees up in time, the dispatch runs as it is and is
 *    counted lost (uncounted): the first dispatch of a queue in the window,
 *    one submitted behind a dispatch still running that we did not move.
 *  - A packet is rewritten only when no doorbell of its queue announced it
 *    yet (the packet processor fetches up to the doorbell), otherwise it is
 *    left alone.
 *  - The control thread (and an app thread waiting for a free slot) reads
 *    a completed slot's output buffer, records the samples with the
 *    dispatch's id, and frees the slot.
 *  - At the detach, after the GOT slots are restored: the counted
 *    dispatches in flight complete (bounded wait), their samples are
 *    recorded, and the buffers, signals and queues go back; an app's
 *    barrier still waiting for a slot of ours keeps the slot (and our
 *    queue) alive rather than hanging the app: counted in leaked.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attach_internal.h"
#include "attach_pmc.h"
#include "rpg_attach.h"
#include "rpg_internal.h"

typedef uint64_t handle_t;
typedef int hstatus;

enum {
    ST_SUCCESS = 0,
    ST_INFO_BREAK = 1,
    PKT_INVALID = 1,
    PKT_KERNEL_DISPATCH = 2,
    PKT_BARRIER_AND = 3,
    PKT_BARRIER_OR = 5,
    HDR_BARRIER = 1 << 8,
    AI_DEVICE = 17,
    AI_DRIVER_NODE_ID = 0xA004,
    DEVICE_CPU = 0,
    DEVICE_GPU = 1,
    POOL_SEGMENT = 0,
    POOL_GLOBAL_FLAGS = 1,
    POOL_ALLOC_ALLOWED = 5,
    SEGMENT_GLOBAL = 0,
    FLAG_FINE_GRAINED = 2,
    QUEUE_TYPE_MULTI = 0,
    AMD_SIGNAL_GPU_ONLY = 1,
};

/* Counting slots per GPU: counted dispatches in flight at once. */
#define SLOTS 16
/* Our queue's packets (a counted dispatch takes 4). */
#define OUR_QUEUE_SIZE 256
/* How long an app thread waits for a free slot before its dispatch runs
 * uncounted. */
#define SLOT_WAIT_MS 2000
#define STOP_WAIT_MS 3000
#define MAX_PMC_AGENTS 16
#define MAX_PROG (64u << 20)

typedef struct rq_queue {
    uint32_t type;
    uint32_t features;
    void *base_address;
    uint64_t doorbell_signal;
    uint32_t size;
    uint32_t reserved1;
    uint64_t id;
} rq_queue;

typedef struct rq_sig {
    int64_t kind;
    volatile int64_t value;
} rq_sig;

static struct {
    hstatus (*iterate_agents)(hstatus (*)(handle_t, void *), void *);
    hstatus (*agent_get_info)(handle_t, int, void *);
    hstatus (*iterate_pools)(handle_t, hstatus (*)(handle_t, void *), void *);
    hstatus (*pool_get_info)(handle_t, int, void *);
    hstatus (*pool_allocate)(handle_t, size_t, uint32_t, void **);
    hstatus (*pool_free)(void *);
    hstatus (*allow_access)(uint32_t, const handle_t *, const uint32_t *, const void *);
    hstatus (*amd_signal_create)(int64_t, uint32_t, const handle_t *, uint64_t, handle_t *);
    hstatus (*signal_create)(int64_t, uint32_t, const handle_t *, handle_t *);
    hstatus (*signal_destroy)(handle_t);
    void (*signal_store_relaxed)(handle_t, int64_t);
    void (*signal_store_screlease)(handle_t, int64_t);
    int64_t (*signal_load)(handle_t);
    hstatus (*queue_create)(handle_t, uint32_t, uint32_t, void (*)(hstatus, void *, void *), void *,
                            uint32_t, uint32_t, void **);
    hstatus (*queue_destroy)(void *);
    uint64_t (*add_write_index)(const void *, uint64_t);
    uint64_t (*load_read_index)(const void *);
    hstatus (*set_profiler_enabled)(void *, int);
} f;

typedef struct rec {
    uint64_t counter_id;
    char *name;
    size_t name_len;
    double k;
    uint32_t ndims;
    rpg_counter_dim dims[8];
    uint32_t nterms;
    uint32_t *sample;
    double *coef;
} rec;

typedef struct reloc {
    int section; /* 0 cmd, 1 start, 2 stop, 3 read */
    uint32_t word;
    int shift; /* the address's bits from here, 32 of them */
    int cmd;   /* the command buffer's address, else the output buffer's */
} reloc;

enum { SLOT_FREE, SLOT_BUSY };

typedef struct slot {
    void *out, *cmd;
    uint8_t pkt[3][64]; /* start, stop, read */
    handle_t sig;
    int state;
    int bound;
    int nocount; /* a barrier packet of the app's moved along: nothing to record */
    uint64_t dispatch_id;
    uint32_t node;
} slot;

typedef struct pagent {
    uint32_t node;
    handle_t agent;
    uint64_t out_size, cmd_size;
    uint8_t *cmd_t;
    uint8_t pkt_t[3][64];
    uint64_t base_out, base_cmd;
    reloc *relocs;
    size_t nrelocs;
    rec *recs;
    size_t nrecs;
    rq_queue *queue;
    slot slots[SLOTS];
    int ready;
} pagent;

static pagent pagents[MAX_PMC_AGENTS];
static int npagents;
static int on;
static void *runtime;
static handle_t host_pool;
static pthread_mutex_t p_lock = PTHREAD_MUTEX_INITIALIZER; /* slots, our queues, qstate */
/* Dispatches run uncounted; slots whose app barrier we could not see
 * through (left with the runtime at the detach). */
static uint64_t uncounted, leaked, edge;
static uint64_t counted;

/* ---- the app's queues: what came before each packet -------------------------- */

typedef struct qstate {
    const void *amdq;
    uint64_t rung;      /* packets below this were announced by a doorbell */
    uint64_t prev;      /* index + 1 of the last packet looked at */
    int prev_moved;     /* it went to our queue */
    int moved;          /* some packet of the queue went to our queue */
    int prev_barrier;   /* it had the barrier bit */
    handle_t prev_sig;  /* its completion signal when left in place */
    int64_t prev_v0;    /* that signal's value when we looked */
} qstate;
#define QS 1024
static qstate qs[QS];

static uint32_t hash_ptr(const void *p)
{
    uint64_t k = (uintptr_t)p;
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (uint32_t)k;
}

/* Under p_lock. */
static qstate *qstate_get(const void *amdq, int make)
{
    for (uint32_t i = hash_ptr(amdq) & (QS - 1), n = 0; n < QS; i = (i + 1) & (QS - 1), n++) {
        if (qs[i].amdq == amdq)
            return &qs[i];
        if (!qs[i].amdq) {
            if (!make)
                return NULL;
            memset(&qs[i], 0, sizeof qs[i]);
            qs[i].amdq = amdq;
            return &qs[i];
        }
    }
    return NULL;
}

/* ---- the program ------------------------------------------------------------ */

static int unhex(const char *s, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (uint8_t)v;
    }
    return s[2 * n] == 0 || s[2 * n] == '\n' ? 0 : -1;
}

static int section_of(const char *s)
{
    static const char *names[] = {"cmd", "start", "stop", "read"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

static int parse_rec(pagent *a, char *line)
{
    rec r;
    memset(&r, 0, sizeof r);
    char *save = NULL, *t = strtok_r(line, " \n", &save); /* "rec" */
    char *id = strtok_r(NULL, " \n", &save), *name = strtok_r(NULL, " \n", &save);
    char *k = strtok_r(NULL, " \n", &save), *nd = strtok_r(NULL, " \n", &save);
    if (!t || !id || !name || !k || !nd)
        return -1;
    r.counter_id = strtoull(id, NULL, 10);
    r.k = strtod(k, NULL);
    r.ndims = (uint32_t)strtoul(nd, NULL, 10);
    if (r.ndims > 8)
        return -1;
    for (uint32_t i = 0; i < r.ndims; i++) {
        char *d = strtok_r(NULL, " \n", &save), *x = strtok_r(NULL, " \n", &save);
        if (!d || !x)
            return -1;
        r.dims[i].dimension_id = (uint32_t)strtoul(d, NULL, 10);
        r.dims[i].index = (uint32_t)strtoul(x, NULL, 10);
    }
    char *nt = strtok_r(NULL, " \n", &save);
    if (!nt)
        return -1;
    r.nterms = (uint32_t)strtoul(nt, NULL, 10);
    if (r.nterms > (1u << 20))
        return -1;
    r.sample = calloc(r.nterms + 1, sizeof *r.sample);
    r.coef = calloc(r.nterms + 1, sizeof *r.coef);
    r.name = strdup(name);
    if (!r.sample || !r.coef || !r.name)
        goto bad;
    r.name_len = strlen(name);
    for (uint32_t i = 0; i < r.nterms; i++) {
        char *s = strtok_r(NULL, " \n", &save), *c = strtok_r(NULL, " \n", &save);
        if (!s || !c)
            goto bad;
        r.sample[i] = (uint32_t)strtoul(s, NULL, 10);
        r.coef[i] = strtod(c, NULL);
        if ((uint64_t)r.sample[i] * 8 + 8 > a->out_size)
            goto bad;
    }
    rec *n = realloc(a->recs, (a->nrecs + 1) * sizeof *n);
    if (!n)
        goto bad;
    a->recs = n;
    a->recs[a->nrecs++] = r;
    return 0;
bad:
    free(r.sample);
    free(r.coef);
    free(r.name);
    return -1;
}

/* The program beside the socket: ours, private, bounded. */
static int read_program(char *why, size_t whylen)
{
    const char *sock = rpg_env(RPG_ENV_GO_ATTACH_SOCKET);
    const char *slash = sock ? strrchr(sock, '/') : NULL;
    if (!slash) {
        snprintf(why, whylen, "no attach directory to read the counter program from");
        return -ENOENT;
    }
    char path[4096];
    snprintf(path, sizeof path, "%.*s/attach.pmc", (int)(slash - sock), sock);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0) {
        snprintf(why, whylen, "the counter program %.300s cannot be opened: %s", path, strerror(errno));
        return -errno;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 077) || st.st_size > MAX_PROG) {
        close(fd);
        snprintf(why, whylen, "the counter program %.300s is not a private file of this user", path);
        return -EPERM;
    }
    FILE *in = fdopen(fd, "r");
    if (!in) {
        close(fd);
        return -ENOMEM;
    }
    char *line = NULL;
    size_t cap = 0;
    int rc = -EINVAL, done = 0, first = 1;
    pagent *a = NULL;
    while (getline(&line, &cap, in) > 0) {
        char word[16] = {0};
        sscanf(line, "%15s", word);
        if (first) {
            first = 0;
            if (strcmp(line, "rpg-attach-pmc 1\n"))
                break;
            continue;
        }
        if (!strcmp(word, "end")) {
            done = 1;
            break;
        }
        if (!strcmp(word, "agent")) {
            if (npagents == MAX_PMC_AGENTS)
                break;
            a = &pagents[npagents++];
            memset(a, 0, sizeof *a);
            unsigned long long out, cmd;
            unsigned node, idx;
            char arch[32];
            if (sscanf(line, "agent %u %u %31s %llu %llu", &node, &idx, arch, &out, &cmd) != 5 || !out ||
                !cmd || out > (1u << 30) || cmd > (1u << 30) || cmd % 4)
                break;
            a->node = node;
            a->out_size = out;
            a->cmd_size = cmd;
            continue;
        }
        if (!a)
            break;
        if (!strcmp(word, "base")) {
            char which[8];
            unsigned long long v;
            if (sscanf(line, "base %7s %llx", which, &v) != 2)
                break;
            if (!strcmp(which, "out"))
                a->base_out = v;
            else
                a->base_cmd = v;
            continue;
        }
        if (!strcmp(word, "reloc")) {
            char sec[8], enc[8], tgt[8];
            unsigned w;
            if (sscanf(line, "reloc %7s %u %7s %7s", sec, &w, enc, tgt) != 4)
                break;
            reloc r = {section_of(sec), w, -1, !strcmp(tgt, "cmd")};
            r.shift = !strcmp(enc, "lo") ? 0 : !strcmp(enc, "hi") ? 32 : !strcmp(enc, "lo8") ? 8
                                                                    : !strcmp(enc, "hi8") ? 40 : -1;
            if (r.section < 0 || r.shift < 0 ||
                (uint64_t)w * 4 + 4 > (r.section ? 64 : a->cmd_size) || (r.section && w == 0))
                break;
            reloc *n = realloc(a->relocs, (a->nrelocs + 1) * sizeof *n);
            if (!n)
                break;
            a->relocs = n;
            a->relocs[a->nrelocs++] = r;
            continue;
        }
        if (!strcmp(word, "rec")) {
            if (parse_rec(a, line))
                break;
            continue;
        }
        int s = section_of(word);
        if (s == 0) {
            a->cmd_t = malloc(a->cmd_size);
            if (!a->cmd_t || unhex(line + 4, a->cmd_t, a->cmd_size))
                break;
            continue;
        }
        if (s > 0) {
            if (unhex(line + strlen(word) + 1, a->pkt_t[s - 1], 64))
                break;
            continue;
        }
        break;
    }
    free(line);
    fclose(in);
    if (done) {
        rc = 0;
        for (int i = 0; i < npagents; i++)
            if (!pagents[i].cmd_t)
                rc = -EINVAL;
    }
    if (rc)
        snprintf(why, whylen, "the counter program %.300s is malformed", path);
    return rc;
}

/* ---- set-up ---------------------------------------------------------------- */

static hstatus find_pool(handle_t pool, void *data)
{
    uint32_t seg = 99, flags = 0;
    uint8_t alloc = 0;
    if (f.pool_get_info(pool, POOL_SEGMENT, &seg) != ST_SUCCESS || seg != SEGMENT_GLOBAL)
        return ST_SUCCESS;
    f.pool_get_info(pool, POOL_GLOBAL_FLAGS, &flags);
    f.pool_get_info(pool, POOL_ALLOC_ALLOWED, &alloc);
    if (alloc && (flags & FLAG_FINE_GRAINED)) {
        *(handle_t *)data = pool;
        return ST_INFO_BREAK;
    }
    return ST_SUCCESS;
}

static hstatus find_agents(handle_t h, void *data)
{
    (void)data;
    int type = -1;
    uint32_t node = 0;
    f.agent_get_info(h, AI_DEVICE, &type);
    f.agent_get_info(h, AI_DRIVER_NODE_ID, &node);
    if (type == DEVICE_CPU && !host_pool)
        f.iterate_pools(h, find_pool, &host_pool);
    if (type == DEVICE_GPU)
        for (int i = 0; i < npagents; i++)
            if (pagents[i].node == node)
                pagents[i].agent = h;
    return ST_SUCCESS;
}

/* GPU-visible host memory that does not cross a 4 GiB line (the packets'
 * low address words must not carry). */
static void *alloc_for(handle_t agent, uint64_t size)
{
    void *p = NULL;
    for (int tries = 0; tries < 2; tries++) {
        if (f.pool_allocate(host_pool, size, 0, &p) != ST_SUCCESS)
            return NULL;
        uintptr_t a = (uintptr_t)p;
        if ((a >> 32) == ((a + size - 1) >> 32))
            break;
        f.pool_free(p);
        p = NULL;
        size = (size + 4095) & ~(uint64_t)4095;
    }
    if (!p)
        return NULL;
    f.allow_access(1, &agent, NULL, p);
    memset(p, 0, size);
    return p;
}

static void put32(uint8_t *b, uint32_t w, uint32_t v) { memcpy(b + 4 * w, &v, 4); }
static uint32_t get32(const uint8_t *b, uint32_t w)
{
    uint32_t v;
    memcpy(&v, b + 4 * w, 4);
    return v;
}

static int slot_setup(pagent *a, slot *s)
{
    s->out = alloc_for(a->agent, a->out_size);
    s->cmd = alloc_for(a->agent, a->cmd_size);
    if (!s->out || !s->cmd)
        return -ENOMEM;
    memcpy(s->cmd, a->cmd_t, a->cmd_size);
    memcpy(s->pkt, a->pkt_t, sizeof s->pkt);
    for (size_t i = 0; i < a->nrelocs; i++) {
        const reloc *r = &a->relocs[i];
        uint64_t base = r->cmd ? a->base_cmd : a->base_out;
        uint64_t real = (uint64_t)(uintptr_t)(r->cmd ? s->cmd : s->out);
        uint8_t *b = r->section ? s->pkt[r->section - 1] : (uint8_t *)s->cmd;
        put32(b, r->word, get32(b, r->word) + (uint32_t)(real >> r->shift) - (uint32_t)(base >> r->shift));
    }
    if (!(f.amd_signal_create && f.amd_signal_create(0, 0, NULL, AMD_SIGNAL_GPU_ONLY, &s->sig) == ST_SUCCESS) &&
        !(f.signal_create && f.signal_create(0, 0, NULL, &s->sig) == ST_SUCCESS))
        return -ENOMEM;
    s->state = SLOT_FREE;
    return 0;
}

static void *look(const char *name)
{
    void *o = rpg__table_original(name); /* attach_table.c wraps the table: ours unrecorded */
    if (o)
        return o;
    void *p = dlvsym(runtime, name, "ROCR_1");
    return p ? p : dlsym(runtime, name);
}

static void teardown(void);

int rpg_attach_pmc_start(void)
{
    if (!(rpg_domains & RPG_DOMAIN_COUNTER))
        return 0;
    char why[512] = "";
    int rc = read_program(why, sizeof why);
    if (!rc) {
        runtime = dlopen("libhsa-runtime64.so.1", RTLD_NOW | RTLD_NOLOAD);
        rc = runtime ? 0 : -ENOENT;
        if (rc)
            snprintf(why, sizeof why, "the HSA runtime is not loaded");
    }
    if (!rc) {
#define LOOK(x, n) *(void **)&f.x = look(n)
        LOOK(iterate_agents, "hsa_iterate_agents");
        LOOK(agent_get_info, "hsa_agent_get_info");
        LOOK(iterate_pools, "hsa_amd_agent_iterate_memory_pools");
        LOOK(pool_get_info, "hsa_amd_memory_pool_get_info");
        LOOK(pool_allocate, "hsa_amd_memory_pool_allocate");
        LOOK(pool_free, "hsa_amd_memory_pool_free");
        LOOK(allow_access, "hsa_amd_agents_allow_access");
        LOOK(amd_signal_create, "hsa_amd_signal_create");
        LOOK(signal_create, "hsa_signal_create");
        LOOK(signal_destroy, "hsa_signal_destroy");
        LOOK(signal_store_relaxed, "hsa_signal_store_relaxed");
        LOOK(signal_store_screlease, "hsa_signal_store_screlease");
        LOOK(signal_load, "hsa_signal_load_scacquire");
        LOOK(queue_create, "hsa_queue_create");
        LOOK(queue_destroy, "hsa_queue_destroy");
        LOOK(add_write_index, "hsa_queue_add_write_index_screlease");
        LOOK(load_read_index, "hsa_queue_load_read_index_scacquire");
        LOOK(set_profiler_enabled, "hsa_amd_profiling_set_profiler_enabled");
#undef LOOK
        if (!f.iterate_agents || !f.agent_get_info || !f.iterate_pools || !f.pool_get_info ||
            !f.pool_allocate || !f.pool_free || !f.allow_access || !f.signal_destroy ||
            !f.signal_store_relaxed || !f.signal_store_screlease || !f.signal_load ||
            !f.queue_create || !f.queue_destroy || !f.add_write_index || !f.load_read_index) {
            rc = -ENOSYS;
            snprintf(why, sizeof why, "the HSA runtime lacks a function counting needs");
        }
    }
    if (!rc) {
        host_pool = 0;
        f.iterate_agents(find_agents, NULL);
        if (!host_pool) {
            rc = -ENOMEM;
            snprintf(why, sizeof why, "no fine-grained system memory for the counter buffers");
        }
    }
    int found = 0;
    for (int i = 0; !rc && i < npagents; i++)
        found += pagents[i].agent != 0;
    if (!rc && !found) {
        rc = -ENODEV;
        snprintf(why, sizeof why,
                 "the process has none of the GPUs (KFD nodes) the counters were planned for: plan "
                 "them for its GPUs (the KFD topology, or --virtual-gpu with the architecture and "
                 "ROCPROF_VGPU_COUNT the process runs with)");
    }
    for (int i = 0; !rc && i < npagents; i++) {
        pagent *a = &pagents[i];
        if (!a->agent)
            continue; /* a GPU the process does not have: no dispatch goes there */
        for (int k = 0; !rc && k < SLOTS; k++)
            rc = slot_setup(a, &a->slots[k]);
        void *q = NULL;
        if (!rc && f.queue_create(a->agent, OUR_QUEUE_SIZE, QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX,
                                  UINT32_MAX, &q) != ST_SUCCESS)
            rc = -ENOMEM;
        a->queue = q;
        if (rc) {
            snprintf(why, sizeof why, "out of memory, signals or queues for the counters of GPU node %u",
                     a->node);
            break;
        }
        if (f.set_profiler_enabled)
            f.set_profiler_enabled(q, 1);
        a->ready = 1;
    }
    if (rc) {
        teardown();
        rpg_record_string(RPG_STRTAB_STATUS,
                          RPG_STATUS_UNAVAILABLE | (uint64_t)__builtin_ctz(RPG_DOMAIN_COUNTER), why,
                          strlen(why));
        return rc;
    }
    uncounted = leaked = counted = edge = 0;
    memset(qs, 0, sizeof qs);
    __atomic_store_n(&on, 1, __ATOMIC_RELEASE);
    return 0;
}

int rpg_attach_pmc_on(void) { return __atomic_load_n(&on, __ATOMIC_ACQUIRE); }

static pagent *agent_of(handle_t h)
{
    for (int i = 0; i < npagents; i++)
        if (pagents[i].agent == h && pagents[i].ready)
            return &pagents[i];
    return NULL;
}

/* Whether GPU agent h is one the program counts on (under p_lock). */
static int in_program(handle_t h)
{
    for (int i = 0; i < npagents; i++)
        if (pagents[i].agent == h)
            return 1;
    return 0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Records slot s's samples if its read completed (under p_lock). */
static int collect(pagent *a, slot *s)
{
    if (s->state != SLOT_BUSY || !s->bound || f.signal_load(s->sig) != 0)
        return 0;
    const uint64_t *out = s->out;
    for (size_t i = 0; i < a->nrecs && !s->nocount; i++) {
        const rec *r = &a->recs[i];
        double v = r->k;
        for (uint32_t t = 0; t < r->nterms; t++)
            v += r->coef[t] * (double)out[r->sample[t]];
        rpg_counter_sample_rec c;
        memset(&c, 0, sizeof c);
        c.dispatch_id = s->dispatch_id;
        c.counter_id = r->counter_id;
        c.value = v;
        c.agent_node = s->node;
        c.dim_count = r->ndims;
        rpg_record_counter_sample(&c, r->dims, r->name, r->name_len);
    }
    s->state = SLOT_FREE;
    s->bound = 0;
    counted += !s->nocount;
    s->nocount = 0;
    return 1;
}

/* A free slot of a (under p_lock, which it may drop while it waits). */
static slot *free_slot(pagent *a)
{
    double deadline = 0;
    for (;;) {
        for (int k = 0; k < SLOTS; k++) {
            slot *s = &a->slots[k];
            if (s->state == SLOT_FREE || collect(a, s))
                return s;
        }
        double t = now_ms();
        if (!deadline)
            deadline = t + SLOT_WAIT_MS;
        else if (t >= deadline)
            return NULL;
        pthread_mutex_unlock(&p_lock);
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&p_lock);
    }
}

static void write_packet(uint8_t *ring, uint32_t mask, uint64_t idx, const uint8_t *pkt)
{
    uint8_t *d = ring + (idx & mask) * 64;
    memcpy(d + 4, pkt + 4, 60);
    uint32_t h;
    memcpy(&h, pkt, 4);
    __atomic_store_n((uint32_t *)d, h, __ATOMIC_RELEASE);
}

/* Whether the packet before `index` in the app's queue lets a moved
 * dispatch start at once in ours (see the top). Under p_lock. */
static int prev_done(const qstate *st, uint64_t index)
{
    if (st->prev != index) /* index - 1 + 1: the packet just before */
        return 0;
    if (st->prev_moved)
        return 1;
    if (!st->prev_barrier || !st->prev_sig)
        return 0;
    return f.signal_load(st->prev_sig) < st->prev_v0;
}

/* The app's slot: a barrier-AND on our signal sig, with the app's signal
 * and the moved packet's fences. */
static void wait_in_place(void *pkt, uint16_t fences, handle_t sig, handle_t app_signal)
{
    uint8_t b[64];
    memset(b, 0, sizeof b);
    uint32_t bh = (uint32_t)(PKT_BARRIER_AND | HDR_BARRIER | fences);
    memcpy(b, &bh, 4);
    memcpy(b + 8, &sig, 8);
    memcpy(b + 56, &app_signal, 8);
    uint8_t *slotp = pkt;
    memcpy(slotp + 4, b + 4, 60);
    __atomic_store_n((uint32_t *)slotp, bh, __ATOMIC_RELEASE);
}

int rpg_attach_pmc_redirect(void *amdq, uint64_t agent_h, uint64_t index, void *pkt,
                            uint64_t app_signal, uint64_t timing)
{
    if (!rpg_attach_pmc_on())
        return -1;
    pthread_mutex_lock(&p_lock);
    qstate *st = qstate_get(amdq, 1);
    pagent *a = agent_of(agent_h);
    slot *s = NULL;
    if (!a && agent_h && !in_program(agent_h)) {
        /* a GPU none of the counters is planned for: nothing to count */
        pthread_mutex_unlock(&p_lock);
        return -1;
    }
    /* Held back first: a device that takes a valid packet no doorbell
     * announced (the virtual GPU does after a while) must not start it while
     * it is moved, or while this thread waits for a slot. */
    uint32_t h0 = __atomic_load_n((uint32_t *)pkt, __ATOMIC_ACQUIRE);
    int held = index >= (st ? st->rung : UINT64_MAX) && (h0 & 0xff) == PKT_KERNEL_DISPATCH &&
               __atomic_compare_exchange_n((uint32_t *)pkt, &h0, (h0 & ~0xffu) | PKT_INVALID, 0,
                                           __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    if (!held || !a || !timing || !prev_done(st, index) || !(s = free_slot(a))) {
        if (held) /* runs as it is */
            __atomic_store_n((uint32_t *)pkt, h0, __ATOMIC_RELEASE);
        if (held && !st->moved && a && timing)
            edge++; /* no packet of this queue moved yet: it follows work from before the attach */
        else
            uncounted++;
        if (st) {
            st->prev = index + 1;
            st->prev_moved = 0;
            st->prev_sig = 0; /* a dispatch left in place: seen() tells its signal */
        }
        pthread_mutex_unlock(&p_lock);
        return -1;
    }
    rq_queue *q = a->queue;
    uint32_t mask = q->size - 1;
    uint64_t w = f.add_write_index(q, 4);
    while (w + 4 - f.load_read_index(q) > q->size) {
        /* bounded by the slots: never more than SLOTS x 4 packets */
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
    /* The dispatch, copied before its slot is rewritten. */
    uint8_t d[64];
    memcpy(d, pkt, 64);
    memcpy(d, &h0, 4);
    uint16_t hdr;
    memcpy(&hdr, d, 2);
    uint16_t fences = hdr & 0xfe00;
    hdr |= HDR_BARRIER;
    memcpy(d, &hdr, 2);
    memcpy(d + 56, &timing, 8);
    s->state = SLOT_BUSY;
    s->bound = 0;
    f.signal_store_relaxed(s->sig, 1);
    uint8_t *ring = q->base_address;
    uint8_t rd[64];
    memcpy(rd, s->pkt[2], 64);
    memcpy(rd + 56, &s->sig, 8);
    write_packet(ring, mask, w, s->pkt[0]);
    write_packet(ring, mask, w + 1, d);
    write_packet(ring, mask, w + 2, s->pkt[1]);
    write_packet(ring, mask, w + 3, rd);
    f.signal_store_screlease(q->doorbell_signal, (int64_t)(w + 3));
    wait_in_place(pkt, fences, s->sig, app_signal);
    st->prev = index + 1;
    st->prev_moved = 1;
    st->moved = 1;
    int k = (int)(s - a->slots) + (int)(a - pagents) * SLOTS;
    pthread_mutex_unlock(&p_lock);
    return k;
}

/* A barrier packet between counted dispatches goes along to our queue (its
 * completion signal ours), the app's slot waiting for it as for a moved
 * dispatch: the next dispatch's packet before it is then one of ours. Left
 * in place (seen) when the packet before it was not moved nor is done. */
void rpg_attach_pmc_move(void *amdq, uint64_t agent_h, uint64_t index, void *pkt)
{
    if (!rpg_attach_pmc_on())
        return;
    uint16_t h = __atomic_load_n((const uint16_t *)pkt, __ATOMIC_ACQUIRE);
    uint32_t type = h & 0xff;
    pthread_mutex_lock(&p_lock);
    qstate *st = qstate_get(amdq, 1);
    pagent *a = agent_of(agent_h);
    slot *s = NULL;
    if ((type != PKT_BARRIER_AND && type != PKT_BARRIER_OR) || !st || !a || index < st->rung ||
        !prev_done(st, index)) {
        pthread_mutex_unlock(&p_lock);
        rpg_attach_pmc_seen(amdq, index, pkt);
        return;
    }
    for (int k = 0; k < SLOTS && !s; k++)
        if (a->slots[k].state == SLOT_FREE || collect(a, &a->slots[k]))
            s = &a->slots[k];
    if (!s) {
        pthread_mutex_unlock(&p_lock);
        rpg_attach_pmc_seen(amdq, index, pkt);
        return;
    }
    rq_queue *q = a->queue;
    uint64_t w = f.add_write_index(q, 1);
    while (w + 1 - f.load_read_index(q) > q->size) {
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
    uint8_t d[64];
    memcpy(d, pkt, 64);
    handle_t app_signal;
    memcpy(&app_signal, d + 56, 8);
    uint16_t hdr = h | HDR_BARRIER;
    memcpy(d, &hdr, 2);
    memcpy(d + 56, &s->sig, 8);
    s->state = SLOT_BUSY;
    s->nocount = 1;
    s->bound = 1;
    f.signal_store_relaxed(s->sig, 1);
    write_packet(q->base_address, q->size - 1, w, d);
    f.signal_store_screlease(q->doorbell_signal, (int64_t)w);
    wait_in_place(pkt, h & 0xfe00, s->sig, app_signal);
    st->prev = index + 1;
    st->prev_moved = 1;
    st->moved = 1;
    pthread_mutex_unlock(&p_lock);
}

void rpg_attach_pmc_bind(int k, uint64_t dispatch_id, uint32_t node)
{
    if (k < 0 || k >= npagents * SLOTS)
        return;
    pthread_mutex_lock(&p_lock);
    slot *s = &pagents[k / SLOTS].slots[k % SLOTS];
    s->dispatch_id = dispatch_id;
    s->node = node;
    s->bound = 1;
    pthread_mutex_unlock(&p_lock);
}

void rpg_attach_pmc_seen(void *amdq, uint64_t index, const void *pkt)
{
    if (!rpg_attach_pmc_on())
        return;
    pthread_mutex_lock(&p_lock);
    qstate *st = qstate_get(amdq, 1);
    if (st) {
        uint16_t h = __atomic_load_n((const uint16_t *)pkt, __ATOMIC_ACQUIRE);
        handle_t sig;
        memcpy(&sig, (const uint8_t *)pkt + 56, 8);
        st->prev = index + 1;
        st->prev_moved = 0;
        st->prev_barrier = (h & 0xff) != PKT_INVALID && (h & HDR_BARRIER);
        st->prev_sig = (h & 0xff) != PKT_INVALID ? sig : 0;
        st->prev_v0 = sig ? ((const rq_sig *)(uintptr_t)sig)->value : 0;
    }
    pthread_mutex_unlock(&p_lock);
}

void rpg_attach_pmc_rung(void *amdq, uint64_t last)
{
    if (!rpg_attach_pmc_on())
        return;
    pthread_mutex_lock(&p_lock);
    qstate *st = qstate_get(amdq, 1);
    if (st && last + 1 > st->rung)
        st->rung = last + 1;
    pthread_mutex_unlock(&p_lock);
}

void rpg_attach_pmc_queue_gone(void *amdq)
{
    if (!rpg_attach_pmc_on())
        return;
    pthread_mutex_lock(&p_lock);
    qstate *st = qstate_get(amdq, 0);
    if (st) {
        /* a tombstone keeps the probe chains: an address no queue has */
        st->amdq = (const void *)1;
        st->prev = 0;
    }
    pthread_mutex_unlock(&p_lock);
}

void rpg_attach_pmc_poll(void)
{
    if (!rpg_attach_pmc_on())
        return;
    pthread_mutex_lock(&p_lock);
    for (int i = 0; i < npagents; i++)
        for (int k = 0; k < SLOTS; k++)
            collect(&pagents[i], &pagents[i].slots[k]);
    pthread_mutex_unlock(&p_lock);
}

static void teardown(void)
{
    for (int i = 0; i < npagents; i++) {
        pagent *a = &pagents[i];
        int busy = 0;
        for (int k = 0; k < SLOTS; k++)
            busy += a->slots[k].state == SLOT_BUSY;
        if (!busy) {
            for (int k = 0; k < SLOTS; k++) {
                slot *s = &a->slots[k];
                if (s->sig)
                    f.signal_destroy(s->sig);
                if (s->out)
                    f.pool_free(s->out);
                if (s->cmd)
                    f.pool_free(s->cmd);
            }
            if (a->queue)
                f.queue_destroy(a->queue);
        } else {
            leaked += (uint64_t)busy; /* the app's barrier may still wait for them */
        }
        for (size_t r = 0; r < a->nrecs; r++) {
            free(a->recs[r].name);
            free(a->recs[r].sample);
            free(a->recs[r].coef);
        }
        free(a->recs);
        free(a->relocs);
        free(a->cmd_t);
        memset(a, 0, sizeof *a);
    }
    npagents = 0;
    if (runtime) {
        dlclose(runtime);
        runtime = NULL;
    }
}

uint64_t rpg_attach_pmc_stop(uint64_t *edges)
{
    *edges = 0;
    if (!rpg_attach_pmc_on())
        return 0;
    double deadline = now_ms() + STOP_WAIT_MS;
    for (;;) {
        int busy = 0;
        pthread_mutex_lock(&p_lock);
        for (int i = 0; i < npagents; i++)
            for (int k = 0; k < SLOTS; k++) {
                slot *s = &pagents[i].slots[k];
                collect(&pagents[i], s);
                /* bound or not: its dispatch id comes under the queue lock */
                busy += s->state == SLOT_BUSY;
            }
        pthread_mutex_unlock(&p_lock);
        if (!busy || now_ms() >= deadline)
            break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    pthread_mutex_lock(&p_lock);
    __atomic_store_n(&on, 0, __ATOMIC_RELEASE);
    teardown();
    uint64_t lost = uncounted + leaked;
    *edges = edge;
    const char *dbg = rpg_env(RPG_ENV_GO_SHIM_DEBUG);
    if (dbg && dbg[0] && dbg[0] != '0')
        fprintf(stderr, "rocprof-go attach: counters: %llu dispatches counted, %llu uncounted, %llu "
                        "uncounted first of their queue, %llu slots left\n",
                (unsigned long long)counted, (unsigned long long)uncounted, (unsigned long long)edge,
                (unsigned long long)leaked);
    uncounted = leaked = counted = edge = 0;
    memset(qs, 0, sizeof qs);
    pthread_mutex_unlock(&p_lock);
    return lost;
}
