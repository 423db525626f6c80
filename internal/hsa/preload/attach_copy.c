/*
 * attach_copy.c: memory copies while attached (--memory-copy-trace;
 * docs/attach.md, "Memory copies").
 *
 * In launch mode the shim (activity.cpp) runs each traced copy on a
 * completion signal of its own and completes the app's signal itself once
 * it has read the times. Attached, nothing of ours may stand between a copy
 * and the app's signal: a copy still running at the detach would leave the
 * app waiting for ever on a signal nobody completes once the library is
 * unloaded. So, as attach_hsa.c does for dispatches that carry the app's
 * signal, the copy runs exactly as the app asked and its times are read from
 * the app's own signal:
 *
 *  - At the start the runtime's async-copy profiling is switched on
 *    (hsa_amd_profiling_async_copy_enable(1)): every copy then has its start
 *    and end stamped before its completion signal is decremented, where
 *    hsa_amd_profiling_get_async_copy_time of that signal finds them (not
 *    in amd_signal_t's start_ts/end_ts, which ROCr's SDMA copies leave
 *    alone: the runtime keeps them beside the signal).
 *  - The hooks of hsa_amd_memory_async_copy, _on_engine (ROCm 6 and later)
 *    and _rect (attach_got.c points every module's GOT slot of these names
 *    here) fill the record as the shim does (agents, direction, bytes,
 *    addresses, the calling thread's HIP correlation id, stream and tid),
 *    note the app's signal value and the end time of the signal's last copy,
 *    and keep the copy pending before calling the real function.
 *  - The control thread polls the pending copies (rpg__attach_copy_poll,
 *    next to rpg_attach_hsa_poll): a signal below its value at the call has
 *    completed; the copy's times are hsa_amd_profiling_get_async_copy_time of
 *    that signal (the system domain, as in launch mode) and it is recorded;
 *    times unchanged since the call mean none were stamped (lost).
 *  - The app resets a signal with a store before reusing it, and may destroy
 *    it: attach_hsa.c's signal-store and destroy hooks call
 *    rpg__attach_copy_signal_reset first, which settles a copy waiting on
 *    that signal (or counts it lost when it has not completed). A new copy
 *    on a signal a pending copy still holds settles that one first too.
 *
 * The detach. Right before the slots are restored (rpg__attach_copy_detaching)
 * the copies completed so far are read, while the store hooks still guard
 * their signals; copies are traced up to the restore. The stop, after it,
 * polls the rest (and the dispatches: attach_hsa.c's stop comes next) for at
 * most STOP_WAIT_MS; what has not completed then is counted lost. Once the
 * slots are restored the app's stores no longer reach us: a pending copy's
 * signal the app reset and reused for a copy of its own before the next poll
 * (a millisecond) would be read with that copy's times. HIP takes a stream's
 * signals from a ring of many, so a signal is not reused that soon.
 *
 * A copy that cannot be timed exactly is never recorded with made-up times:
 * it is counted, by class (why[]), and the control thread reports the
 * stop's account to the CLI ("copies <pid> lost=N running_at_detach=N
 * CLASS=N...", rpg__attach_copy_account): a copy of the window not timed is
 * lost (run.json's copies_lost, which fails the run); one still running
 * when the detach's wait ends is the window's edge, counted apart.
 *
 * The profiling switch. The runtime has no call that reads it (ROCr's
 * hsa_amd_profiling_async_copy_enable sets a flag per agent; nothing
 * returns it), so the state before the attach is unknown. The hook of
 * hsa_amd_profiling_async_copy_enable keeps it on while attached and
 * remembers what the app asked last; at the detach the app's last wish is
 * put back (HIP's ROCclr switches it per command when it times copies, and
 * keeps its own idea of the state). When the app asked nothing while
 * attached, the switch is left on: switching it off could take the times
 * from an app (or a HIP stream) that had switched it on before the attach,
 * while leaving it on only has the runtime write two timestamps into each
 * copy's signal, which nothing else reads.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attach_internal.h"
#include "hip_stream.h"
#include "rpg_internal.h"

/* ---- the runtime's ABI (hsa.h, hsa_ext_amd.h, amd_hsa_signal.h) --------- */

typedef int hstatus;   /* hsa_status_t */
typedef uint64_t hdl;  /* hsa_agent_t, hsa_signal_t: one uint64 */
enum {
    ST_SUCCESS = 0,
    ST_NOT_INITIALIZED = 0x100b,
    AI_DEVICE = 17,            /* HSA_AGENT_INFO_DEVICE */
    AI_DRIVER_NODE_ID = 0xA004, /* HSA_AMD_AGENT_INFO_DRIVER_NODE_ID */
    DEVICE_CPU = 0,
    DEVICE_GPU = 1,
};

typedef struct copy_time {
    uint64_t start, end;
} copy_time; /* hsa_amd_profiling_async_copy_time_t */

typedef struct pitched_ptr {
    void *base;
    size_t pitch, slice;
} pitched_ptr; /* hsa_pitched_ptr_t */

typedef struct dim3 {
    uint32_t x, y, z;
} dim3; /* hsa_dim3_t */

typedef hstatus (*copy_fn)(void *, hdl, const void *, hdl, size_t, uint32_t, const hdl *, hdl);
/* ROCm 6's copy on an engine: the engine id (an enum) and force-SDMA flag. */
typedef hstatus (*copy_engine_fn)(void *, hdl, const void *, hdl, size_t, uint32_t, const hdl *, hdl,
                                  uint32_t, bool);
typedef hstatus (*copy_rect_fn)(const pitched_ptr *, const dim3 *, const pitched_ptr *, const dim3 *,
                                const dim3 *, hdl, int, uint32_t, const hdl *, hdl);
typedef hstatus (*copy_enable_fn)(bool);

/* Set by attach_got.c before any slot points at a hook. */
static copy_fn real_copy;
static copy_engine_fn real_copy_engine;
static copy_rect_fn real_copy_rect;
static copy_enable_fn real_copy_enable;

/* Looked up in the loaded runtime at the start. */
static struct {
    hstatus (*iterate_agents)(hstatus (*)(hdl, void *), void *);
    hstatus (*agent_get_info)(hdl, int, void *);
    int64_t (*signal_load)(hdl);
    hstatus (*copy_time)(hdl, copy_time *);
    copy_enable_fn copy_enable;
} rt;
static void *runtime;

/* ---- agents -------------------------------------------------------------- */

#define MAX_AGENTS 64
static struct {
    hdl handle;
    int type;
    uint32_t node;
} agents[MAX_AGENTS];
static int nagents;
static uint32_t host_node; /* the first CPU agent's node (rect copies) */
static int have_host;

static hstatus add_agent(hdl h, void *data)
{
    (void)data;
    if (nagents >= MAX_AGENTS)
        return ST_SUCCESS;
    int type = DEVICE_CPU;
    uint32_t node = 0;
    rt.agent_get_info(h, AI_DEVICE, &type);
    rt.agent_get_info(h, AI_DRIVER_NODE_ID, &node);
    if (type == DEVICE_CPU && !have_host) {
        host_node = node;
        have_host = 1;
    }
    agents[nagents].handle = h;
    agents[nagents].type = type;
    agents[nagents].node = node;
    nagents++;
    return ST_SUCCESS;
}

static int agent_of(hdl h, uint32_t *node)
{
    for (int i = 0; i < nagents; i++)
        if (agents[i].handle == h) {
            *node = agents[i].node;
            return agents[i].type == DEVICE_GPU;
        }
    *node = 0;
    return 0;
}

/* ---- pending copies ------------------------------------------------------ */

typedef struct cpend {
    hdl signal;  /* the app's completion signal */
    int64_t v0;  /* its value at the call */
    uint64_t e0; /* the end of its last copy then (0: none) */
    uint64_t seq;
    rpg_memory_copy_rec rec;
} cpend;

static pthread_mutex_t c_lock = PTHREAD_MUTEX_INITIALIZER; /* everything below */
static cpend *pend;
static size_t npend, pend_cap;
static uint64_t next_seq;
/* How many pending copies wait on a signal of each hash: the store hooks,
 * on every signal the app stores to, take the lock only on a hit. */
#define SIG_HASH 256
static uint32_t sig_hash[SIG_HASH];
static int started;  /* between start and stop */
static int closing;  /* copy profiling is off again (the detach): new copies are lost */
static int detach_begun; /* rpg__attach_copy_detaching ran */
static int app_wish = -1; /* the app's last hsa_amd_profiling_async_copy_enable while attached */

/* Why copies went without a record (ROCPROF_GO_SHIM_DEBUG prints them). */
enum { WHY_UNSTAMPED, WHY_REUSED, WHY_NOSIGNAL, WHY_NOMEM, WHY_STOP, WHY_CLOSING, WHY_N };
static uint64_t why[WHY_N];
static uint64_t lost, recorded;
/* The stop's account for the CLI (rpg__attach_copy_account). */
static char account[256];

static uint32_t *slot_of(hdl s)
{
    uint64_t k = s;
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return &sig_hash[k & (SIG_HASH - 1)];
}

static void count_lost(int w)
{
    why[w]++;
    lost++;
}

static void pend_remove(size_t i)
{
    __atomic_fetch_sub(slot_of(pend[i].signal), 1, __ATOMIC_RELEASE);
    pend[i] = pend[--npend];
}

/* Settles entry i if its signal completed (under c_lock): records it with
 * the times the copy engine stamped into the app's signal, or counts it lost
 * when it stamped none. 1 if settled. */
static int settle(size_t i)
{
    cpend *p = &pend[i];
    if (rt.signal_load(p->signal) >= p->v0)
        return 0;
    copy_time t = {0, 0};
    if (rt.copy_time(p->signal, &t) != ST_SUCCESS || !t.start || t.end < t.start || t.end == p->e0) {
        count_lost(WHY_UNSTAMPED);
    } else {
        p->rec.start_ns = t.start;
        p->rec.end_ns = t.end;
        rpg_record_memory_copy(&p->rec);
        recorded++;
    }
    pend_remove(i);
    return 1;
}

/* The app is about to reset, reuse or destroy signal s: copies waiting on
 * it are settled now, or counted lost (under c_lock). */
static void settle_signal(hdl s)
{
    for (size_t i = 0; i < npend;) {
        if (pend[i].signal != s) {
            i++;
            continue;
        }
        if (!settle(i)) {
            count_lost(WHY_REUSED);
            pend_remove(i);
        }
    }
}

static int grow(void)
{
    if (npend < pend_cap)
        return 0;
    size_t c = pend_cap ? pend_cap * 2 : 64;
    cpend *n = realloc(pend, c * sizeof *n);
    if (!n)
        return -1;
    pend = n;
    pend_cap = c;
    return 0;
}

/* On the app's thread, before the real copy: the record's caller side, and
 * the copy kept pending on the app's signal. Returns its sequence number (0:
 * not traced). */
static uint64_t copy_begin(hdl completion, const rpg_memory_copy_rec *rec)
{
    if (!__atomic_load_n(&started, __ATOMIC_ACQUIRE) || !(rpg_domains & RPG_DOMAIN_MEMORY_COPY))
        return 0;
    pthread_mutex_lock(&c_lock);
    uint64_t seq = 0;
    if (!started) {
        pthread_mutex_unlock(&c_lock);
        return 0;
    }
    if (closing) {
        count_lost(WHY_CLOSING);
    } else if (!completion) {
        /* The runtime refuses a copy without a signal; were one to run,
         * nothing could time it. */
        count_lost(WHY_NOSIGNAL);
    } else if (grow()) {
        count_lost(WHY_NOMEM);
    } else {
        settle_signal(completion); /* an earlier copy on the same signal */
        cpend *p = &pend[npend++];
        p->signal = completion;
        p->v0 = rt.signal_load(completion);
        copy_time t0 = {0, 0};
        p->e0 = rt.copy_time(completion, &t0) == ST_SUCCESS ? t0.end : 0;
        p->seq = seq = ++next_seq;
        p->rec = *rec;
        p->rec.tid = rpg_tid();
        p->rec.correlation_id = rpg_correlation_current();
        p->rec.stream_id = rpg_hip_current_stream();
        __atomic_fetch_add(slot_of(completion), 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&c_lock);
    return seq;
}

/* After the real copy: a copy the runtime refused is no copy. */
static void copy_end(uint64_t seq, hstatus st)
{
    if (!seq || st == ST_SUCCESS)
        return;
    pthread_mutex_lock(&c_lock);
    for (size_t i = 0; i < npend; i++)
        if (pend[i].seq == seq) {
            pend_remove(i);
            break;
        }
    pthread_mutex_unlock(&c_lock);
}

static void linear(rpg_memory_copy_rec *r, void *dst, hdl dst_agent, const void *src, hdl src_agent,
                   size_t size)
{
    memset(r, 0, sizeof *r);
    uint32_t sn, dn;
    int sg = agent_of(src_agent, &sn), dg = agent_of(dst_agent, &dn);
    r->direction = sg ? (dg ? RPG_COPY_DEVICE_TO_DEVICE : RPG_COPY_DEVICE_TO_HOST)
                      : (dg ? RPG_COPY_HOST_TO_DEVICE : RPG_COPY_HOST_TO_HOST);
    r->src_agent_node = sn;
    r->dst_agent_node = dn;
    r->bytes = size;
    r->src_address = (uint64_t)(uintptr_t)src;
    r->dst_address = (uint64_t)(uintptr_t)dst;
}

/* ---- the hooks ----------------------------------------------------------- */

static hstatus hook_copy(void *dst, hdl dst_agent, const void *src, hdl src_agent, size_t size,
                         uint32_t ndep, const hdl *deps, hdl completion)
{
    rpg_attach_enter();
    rpg_memory_copy_rec r;
    linear(&r, dst, dst_agent, src, src_agent, size);
    uint64_t seq = copy_begin(completion, &r);
    hstatus st = real_copy(dst, dst_agent, src, src_agent, size, ndep, deps, completion);
    copy_end(seq, st);
    rpg_attach_leave();
    return st;
}

static hstatus hook_copy_engine(void *dst, hdl dst_agent, const void *src, hdl src_agent, size_t size,
                                uint32_t ndep, const hdl *deps, hdl completion, uint32_t engine,
                                bool force_sdma)
{
    rpg_attach_enter();
    rpg_memory_copy_rec r;
    linear(&r, dst, dst_agent, src, src_agent, size);
    uint64_t seq = copy_begin(completion, &r);
    hstatus st = real_copy_engine(dst, dst_agent, src, src_agent, size, ndep, deps, completion, engine,
                                  force_sdma);
    copy_end(seq, st);
    rpg_attach_leave();
    return st;
}

static hstatus hook_copy_rect(const pitched_ptr *dst, const dim3 *dst_off, const pitched_ptr *src,
                              const dim3 *src_off, const dim3 *range, hdl copy_agent, int dir,
                              uint32_t ndep, const hdl *deps, hdl completion)
{
    rpg_attach_enter();
    /* hsa_amd_copy_direction_t: host to host, host to device, device to
     * host, device to device; the device is copy_agent (as the shim). */
    static const uint32_t dirs[] = {RPG_COPY_HOST_TO_HOST, RPG_COPY_HOST_TO_DEVICE,
                                    RPG_COPY_DEVICE_TO_HOST, RPG_COPY_DEVICE_TO_DEVICE};
    rpg_memory_copy_rec r;
    memset(&r, 0, sizeof r);
    r.direction = (unsigned)dir < 4 ? dirs[dir] : RPG_COPY_DEVICE_TO_DEVICE;
    uint32_t g;
    (void)agent_of(copy_agent, &g);
    int src_gpu = r.direction == RPG_COPY_DEVICE_TO_HOST || r.direction == RPG_COPY_DEVICE_TO_DEVICE;
    int dst_gpu = r.direction == RPG_COPY_HOST_TO_DEVICE || r.direction == RPG_COPY_DEVICE_TO_DEVICE;
    r.src_agent_node = src_gpu ? g : host_node;
    r.dst_agent_node = dst_gpu ? g : host_node;
    if (range)
        r.bytes = (uint64_t)range->x * range->y * range->z;
    r.src_address = src ? (uint64_t)(uintptr_t)src->base : 0;
    r.dst_address = dst ? (uint64_t)(uintptr_t)dst->base : 0;
    uint64_t seq = copy_begin(completion, &r);
    hstatus st = real_copy_rect(dst, dst_off, src, src_off, range, copy_agent, dir, ndep, deps, completion);
    copy_end(seq, st);
    rpg_attach_leave();
    return st;
}

/* Copy timestamps stay on while attached, whatever the app asks; its last
 * wish is what the detach puts back. */
static hstatus hook_copy_enable(bool enable)
{
    rpg_attach_enter();
    hstatus st;
    if (__atomic_load_n(&detach_begun, __ATOMIC_ACQUIRE)) {
        /* Past the point where the detach puts the app's wish back: its
         * call goes through; switched off, later copies cannot be timed. */
        if (!enable)
            __atomic_store_n(&closing, 1, __ATOMIC_RELEASE);
        st = real_copy_enable(enable);
    } else {
        __atomic_store_n(&app_wish, enable ? 1 : 0, __ATOMIC_RELEASE);
        st = real_copy_enable(true);
    }
    rpg_attach_leave();
    return st;
}

#define HOOK(n, w, r) {.name = (n), .wrapper = (void *)(w), .real = (void **)&(r)}
static const rpg_hook copy_hooks[] = {
    HOOK("hsa_amd_memory_async_copy", hook_copy, real_copy),
    HOOK("hsa_amd_memory_async_copy_on_engine", hook_copy_engine, real_copy_engine),
    HOOK("hsa_amd_memory_async_copy_rect", hook_copy_rect, real_copy_rect),
    HOOK("hsa_amd_profiling_async_copy_enable", hook_copy_enable, real_copy_enable),
};

size_t rpg__attach_copy_hooks(rpg_hook *out, size_t cap)
{
    size_t n = 0;
    if (!(rpg_domains & RPG_DOMAIN_MEMORY_COPY))
        return 0;
    for (size_t i = 0; i < sizeof copy_hooks / sizeof copy_hooks[0] && n < cap; i++)
        out[n++] = copy_hooks[i];
    return n;
}

/* ---- start, poll, stop ------------------------------------------------------ */

static void *look(const char *name)
{
    void *o = rpg__table_original(name); /* attach_table.c wraps the table: ours unrecorded */
    if (o)
        return o;
    void *p = dlvsym(runtime, name, "ROCR_1");
    return p ? p : dlsym(runtime, name);
}

static void unavailable(const char *w)
{
    rpg_record_string(RPG_STRTAB_STATUS, RPG_STATUS_UNAVAILABLE | (uint64_t)__builtin_ctz(RPG_DOMAIN_MEMORY_COPY),
                      w, strlen(w));
}

const char *rpg__attach_copy_account(void)
{
    return account;
}

int rpg__attach_copy_start(void)
{
    account[0] = 0;
    if (!(rpg_domains & RPG_DOMAIN_MEMORY_COPY))
        return 0;
    runtime = dlopen("libhsa-runtime64.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!runtime)
        return -ENOENT;
    *(void **)&rt.iterate_agents = look("hsa_iterate_agents");
    *(void **)&rt.agent_get_info = look("hsa_agent_get_info");
    *(void **)&rt.signal_load = look("hsa_signal_load_scacquire");
    *(void **)&rt.copy_time = look("hsa_amd_profiling_get_async_copy_time");
    *(void **)&rt.copy_enable = look("hsa_amd_profiling_async_copy_enable");
    const char *w = NULL;
    hstatus st = ST_SUCCESS;
    pthread_mutex_lock(&c_lock);
    nagents = 0;
    host_node = 0;
    have_host = 0;
    if (!rt.iterate_agents || !rt.agent_get_info || !rt.signal_load || !rt.copy_time || !rt.copy_enable)
        w = "attach: the HSA runtime lacks the async-copy profiling functions";
    else if ((st = rt.iterate_agents(add_agent, NULL)) == ST_NOT_INITIALIZED)
        w = "the app had not initialised the HSA runtime when attached; attach again once it runs "
            "GPU work";
    else if (rt.copy_enable(true) != ST_SUCCESS)
        w = "attach: the HSA runtime refused to switch async-copy profiling on";
    if (w) {
        pthread_mutex_unlock(&c_lock);
        unavailable(w);
        dlclose(runtime);
        runtime = NULL;
        return -ENOSYS;
    }
    if (!real_copy_enable)
        real_copy_enable = rt.copy_enable;
    __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&c_lock);
    return 0;
}

void rpg__attach_copy_poll(void)
{
    if (!__atomic_load_n(&started, __ATOMIC_ACQUIRE) || !__atomic_load_n(&npend, __ATOMIC_RELAXED))
        return;
    pthread_mutex_lock(&c_lock);
    for (size_t i = 0; i < npend;)
        if (!settle(i))
            i++;
    pthread_mutex_unlock(&c_lock);
}

void rpg__attach_copy_signal_reset(uint64_t sig)
{
    if (!sig || !__atomic_load_n(&started, __ATOMIC_ACQUIRE) ||
        !__atomic_load_n(slot_of(sig), __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&c_lock);
    if (started)
        settle_signal(sig);
    pthread_mutex_unlock(&c_lock);
}

void rpg__attach_copy_detaching(void)
{
    if (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
        return;
    /* Copies completed so far are read while the store hooks still guard
     * their signals. */
    __atomic_store_n(&detach_begun, 1, __ATOMIC_RELEASE);
    rpg__attach_copy_poll();
    /* The app switched copy profiling off while attached: off again now,
     * while its calls still come here (after the restore a call of its own
     * would be undone). The copies it submits from here on until the slots
     * are restored cannot be timed: counted lost, not traced. */
    if (__atomic_load_n(&app_wish, __ATOMIC_ACQUIRE) == 0) {
        __atomic_store_n(&closing, 1, __ATOMIC_RELEASE);
        rt.copy_enable(false);
    }
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

#define STOP_WAIT_MS 2000

uint64_t rpg__attach_copy_stop(void)
{
    if (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
        return 0;
    uint64_t deadline = mono_ms() + STOP_WAIT_MS;
    for (;;) {
        rpg__attach_copy_poll();
        rpg_attach_hsa_poll(); /* the dispatches' stop comes after this one */
        if (!__atomic_load_n(&npend, __ATOMIC_RELAXED) || mono_ms() >= deadline)
            break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    pthread_mutex_lock(&c_lock);
    __atomic_store_n(&started, 0, __ATOMIC_RELEASE);
    for (size_t i = 0; i < npend; i++)
        count_lost(WHY_STOP);
    npend = 0;
    /* Still running at the end of the wait: the window's edge, not a loss
     * (as the dispatches'); the rest are copies of the window. */
    uint64_t n = lost - why[WHY_STOP];
    static const char *const names[WHY_N] = {"unstamped", "reused", "nosignal", "nomem", NULL,
                                              "after_switch_off"};
    int len = snprintf(account, sizeof account, "lost=%llu running_at_detach=%llu", (unsigned long long)n,
                       (unsigned long long)why[WHY_STOP]);
    for (int w = 0; w < WHY_N && len > 0 && (size_t)len < sizeof account; w++)
        if (names[w] && why[w])
            len += snprintf(account + len, sizeof account - (size_t)len, " %s=%llu", names[w],
                            (unsigned long long)why[w]);
    memset(sig_hash, 0, sizeof sig_hash);
    free(pend);
    pend = NULL;
    pend_cap = 0;
    const char *dbg = rpg_env(RPG_ENV_GO_SHIM_DEBUG);
    if (dbg && dbg[0] && dbg[0] != '0')
        fprintf(stderr,
                "rocprof-go attach: %llu copies recorded, %llu lost: %llu unstamped, %llu signal reused, "
                "%llu without a signal, %llu out of memory, %llu not complete at the detach, "
                "%llu submitted after the app's profiling switch was put back; "
                "async-copy profiling %s at the detach\n",
                (unsigned long long)recorded, (unsigned long long)lost,
                (unsigned long long)why[WHY_UNSTAMPED], (unsigned long long)why[WHY_REUSED],
                (unsigned long long)why[WHY_NOSIGNAL], (unsigned long long)why[WHY_NOMEM],
                (unsigned long long)why[WHY_STOP], (unsigned long long)why[WHY_CLOSING],
                app_wish == 0 ? "off (the app's last call)"
                              : app_wish == 1 ? "on (the app's last call)" : "left on (the app made no call)");
    memset(why, 0, sizeof why);
    lost = recorded = next_seq = 0;
    closing = detach_begun = 0;
    app_wish = -1;
    nagents = 0;
    pthread_mutex_unlock(&c_lock);
    dlclose(runtime); /* the RTLD_NOLOAD reference only */
    runtime = NULL;
    return n;
}
