/*
 * roctx_interpose.c: the ROCTx interposers. Under LD_PRELOAD these
 * definitions come before any ROCTx library in symbol lookup, so calls from
 * applications linked against rocprof-go's librocprofiler-sdk-roctx, AMD's,
 * or roctracer's legacy libroctx64 all land here.
 *
 * Marker tracing off: forward to the next definition (the application's
 * library), so its behaviour is unchanged. On: the calls are served here
 * (the library would only count nesting levels and range ids, which this
 * file does too) and recorded as rocprofv3 reports them: a mark is one
 * record with start == end; a push and its pop become one thread-range
 * record spanning both, with the push's message and correlation id; a start
 * and its stop become one process-range record (on the stopping thread);
 * the control and naming calls are one record each. A thread range's
 * range_id holds the correlation id drawn at its pop (see roctxRangePop).
 *
 * roctxProfilerResume(0)/roctxProfilerPause(0) also switch recording for
 * --selected-regions (roctx_regions.c), traced or not. Under marker tracing
 * any Pause stops all recording until the next Resume, as in rocprofv3:
 * calls made in between are not recorded (a range counts as made when it
 * was pushed or started, and is dropped if its pop or stop falls in a pause
 * too), only the Pause and Resume themselves.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "attach_internal.h"
#include "hip_stream.h"
#include "roctx_range.h"
#include "roctx_regions.h"

#define ROCTX_EXPORT __attribute__((visibility("default")))

/* The ROCTx types, declared here rather than taken from
 * internal/roctx/include: that header marks message pointers nonnull, and
 * an interposer must survive an application that passes NULL anyway. */
typedef uint64_t roctx_range_id_t;
typedef uint64_t roctx_thread_id_t;
struct hsa_agent_s;
struct ihipStream_t;

/* ---- forwarding when tracing is off ------------------------------------ */

enum roctx_fn {
    FN_MARK,
    FN_PUSH,
    FN_POP,
    FN_START,
    FN_STOP,
    FN_PAUSE,
    FN_RESUME,
    FN_NAME_THREAD,
    FN_NAME_AGENT,
    FN_NAME_DEVICE,
    FN_NAME_STREAM,
    FN_GET_TID,
    FN_COUNT
};

static const char *const fn_names[FN_COUNT] = {
    "roctxMarkA",          "roctxRangePushA",     "roctxRangePop",      "roctxRangeStartA",
    "roctxRangeStop",      "roctxProfilerPause",  "roctxProfilerResume", "roctxNameOsThread",
    "roctxNameHsaAgent",   "roctxNameHipDevice",  "roctxNameHipStream", "roctxGetThreadId"};

/* (void *)1 marks "looked up, nobody else defines it". In attach mode
 * attach_got.c sets each to the definition the app's slots were bound to. */
static void *g_next[FN_COUNT];

static void *next_fn(enum roctx_fn f)
{
    void *p = __atomic_load_n(&g_next[f], __ATOMIC_RELAXED);
    if (__builtin_expect(p == NULL, 0)) {
        /* Attach mode: loaded RTLD_LOCAL, where RTLD_NEXT means nothing. */
        p = rpg__attach_mode() ? rpg__attach_lookup(fn_names[f], NULL)
                               : dlsym(RTLD_NEXT, fn_names[f]);
        if (!p)
            p = (void *)1;
        __atomic_store_n(&g_next[f], p, __ATOMIC_RELAXED);
    }
    return p == (void *)1 ? NULL : p;
}

/* ---- state kept here ---------------------------------------------------- */

typedef struct pushed {
    uint64_t t0;
    uint64_t corr;
    char *msg;
    size_t len;
    int paused; /* pushed during a Pause: never recorded */
} pushed;

/* The calling thread's open push ranges, innermost last. `level` counts
 * pushes when tracing is off and no library answers (nothing to record). */
static __thread struct {
    pushed *v;
    uint32_t n, cap;
    int level;
} t_stack;

typedef struct started {
    uint64_t id;
    uint64_t t0;
    uint64_t corr;
    char *msg;
    size_t len;
    int paused; /* started during a Pause: never recorded */
} started;

static struct {
    pthread_mutex_t lock;
    started *v;
    size_t n, cap;
} g_started = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

static uint64_t g_range_id; /* atomic */

/* Set before this process first takes g_started.lock: until then a fork
 * child has nothing to reset, and its handler only reads (no copy-on-write
 * fault per fork in shells). */
static int g_started_used;

static void lock_started(void)
{
    if (__builtin_expect(!__atomic_load_n(&g_started_used, __ATOMIC_RELAXED), 0))
        __atomic_store_n(&g_started_used, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_lock(&g_started.lock);
}

static int tracing(void) { return (rpg_domains & RPG_DOMAIN_MARKER) != 0; }

static char *copy_msg(const char *msg, size_t *len)
{
    size_t l = msg ? strlen(msg) : 0;
    char *p = malloc(l + 1);
    if (p) {
        memcpy(p, msg ? msg : "", l);
        p[l] = 0;
    } else {
        l = 0;
    }
    *len = l;
    return p;
}

static void record(uint32_t domain, uint32_t fn, uint64_t corr, uint64_t t0, uint64_t t1,
                   uint64_t id, const char *msg)
{
    rpg_record_marker(domain, fn, corr, t0, t1, id, msg, msg ? strlen(msg) : 0);
}

const char *rpg_roctx_thread_range(size_t *len)
{
    if (t_stack.n == 0)
        return NULL;
    if (len)
        *len = t_stack.v[t_stack.n - 1].len;
    return t_stack.v[t_stack.n - 1].msg;
}

/* ---- the API -------------------------------------------------------------- */

static void served_roctxMarkA(const char *message)
{
    if (!tracing()) {
        void (*f)(const char *) = next_fn(FN_MARK);
        if (f)
            f(message);
        return;
    }
    if (rpg_regions_paused())
        return;
    uint64_t corr = rpg_correlation_next();
    uint64_t t = rpg_now();
    record(RPG_API_MARKER_CORE_RANGE, RPG_MARKER_MARK, corr, t, t, 0, message);
}

static int served_roctxRangePushA(const char *message)
{
    if (!tracing()) {
        int (*f)(const char *) = next_fn(FN_PUSH);
        return f ? f(message) : t_stack.level++;
    }
    int paused = rpg_regions_paused();
    uint64_t corr = paused ? 0 : rpg_correlation_next();
    if (t_stack.n == t_stack.cap) {
        uint32_t cap = t_stack.cap ? t_stack.cap * 2 : 16;
        pushed *v = realloc(t_stack.v, cap * sizeof *v);
        if (!v)
            return -1;
        t_stack.v = v;
        t_stack.cap = cap;
    }
    pushed *p = &t_stack.v[t_stack.n];
    p->corr = corr;
    p->paused = paused;
    p->msg = copy_msg(message, &p->len);
    p->t0 = rpg_now();
    return (int)t_stack.n++;
}

static int served_roctxRangePop(void)
{
    if (!tracing()) {
        int (*f)(void) = next_fn(FN_POP);
        if (f)
            return f();
        return t_stack.level == 0 ? -1 : --t_stack.level;
    }
    uint64_t t1 = rpg_now();
    if (t_stack.n == 0)
        return -1; /* an unmatched pop has no range to report */
    pushed *p = &t_stack.v[--t_stack.n];
    /* The pop draws an id too, kept in range_id: correlation ids grow on
     * each thread, so whatever this thread did inside the range (HIP calls,
     * the dispatches and copies under them) has an id between the push's
     * and the pop's. That is all --kernel-rename needs to find a kernel's
     * innermost range, on the output side. */
    if (!p->paused && !rpg_regions_paused()) {
        uint64_t end_corr = rpg_correlation_next();
        rpg_record_marker(RPG_API_MARKER_CORE_RANGE, RPG_MARKER_THREAD_RANGE, p->corr, p->t0, t1,
                          end_corr, p->msg, p->len);
    }
    free(p->msg);
    p->msg = NULL;
    return (int)t_stack.n;
}

/* id 0: a new one of ours. */
static roctx_range_id_t start_range(const char *message, roctx_range_id_t id)
{
    started s;
    s.id = id ? id : __atomic_add_fetch(&g_range_id, 1, __ATOMIC_RELAXED);
    s.paused = rpg_regions_paused();
    s.corr = s.paused ? 0 : rpg_correlation_next();
    s.msg = copy_msg(message, &s.len);
    s.t0 = rpg_now();
    lock_started();
    if (g_started.n == g_started.cap) {
        size_t cap = g_started.cap ? g_started.cap * 2 : 16;
        started *v = realloc(g_started.v, cap * sizeof *v);
        if (!v) {
            pthread_mutex_unlock(&g_started.lock);
            free(s.msg);
            return s.id;
        }
        g_started.v = v;
        g_started.cap = cap;
    }
    g_started.v[g_started.n++] = s;
    pthread_mutex_unlock(&g_started.lock);
    return s.id;
}

static roctx_range_id_t served_roctxRangeStartA(const char *message)
{
    if (!tracing()) {
        roctx_range_id_t (*f)(const char *) = next_fn(FN_START);
        return f ? f(message) : __atomic_add_fetch(&g_range_id, 1, __ATOMIC_RELAXED);
    }
    return start_range(message, 0);
}

static void served_roctxRangeStop(roctx_range_id_t id)
{
    if (!tracing()) {
        void (*f)(roctx_range_id_t) = next_fn(FN_STOP);
        if (f)
            f(id);
        return;
    }
    uint64_t t1 = rpg_now();
    started s = {0, 0, 0, NULL, 0, 0};
    lock_started();
    /* Ranges usually stop in the order they started: search from the end. */
    for (size_t i = g_started.n; i-- > 0;) {
        if (g_started.v[i].id == id) {
            s = g_started.v[i];
            g_started.v[i] = g_started.v[--g_started.n];
            break;
        }
    }
    pthread_mutex_unlock(&g_started.lock);
    if (s.id == 0)
        return; /* unknown id: nothing to report */
    if (!s.paused && !rpg_regions_paused())
        rpg_record_marker(RPG_API_MARKER_CORE_RANGE, RPG_MARKER_PROCESS_RANGE, s.corr, s.t0, t1,
                          s.id, s.msg, s.len);
    free(s.msg);
}

static int control(enum roctx_fn fn, uint32_t op, roctx_thread_id_t tid, int on)
{
    if (!tracing()) {
        rpg_regions_select(tid, on);
        int (*f)(roctx_thread_id_t) = next_fn(fn);
        return f ? f(tid) : 0;
    }
    uint64_t corr = rpg_correlation_next();
    uint64_t t0 = rpg_now();
    rpg_regions_select(tid, on);
    record(RPG_API_MARKER_CONTROL, op, corr, t0, rpg_now(), tid, NULL);
    return 0;
}

static int served_roctxProfilerPause(roctx_thread_id_t tid)
{
    return control(FN_PAUSE, RPG_MARKER_PROFILER_PAUSE, tid, 0);
}

static int served_roctxProfilerResume(roctx_thread_id_t tid)
{
    return control(FN_RESUME, RPG_MARKER_PROFILER_RESUME, tid, 1);
}

/* The naming calls record the name as the message and the named object
 * (agent handle, device ordinal, stream id as in hip_stream.h; 0 for the
 * thread) in range_id. */
static int name_call(uint32_t op, const char *name, uint64_t object)
{
    if (rpg_regions_paused())
        return 0;
    uint64_t corr = rpg_correlation_next();
    uint64_t t0 = rpg_now();
    record(RPG_API_MARKER_NAME, op, corr, t0, rpg_now(), object, name);
    return 0;
}

static int served_roctxNameOsThread(const char *name)
{
    if (!tracing()) {
        int (*f)(const char *) = next_fn(FN_NAME_THREAD);
        return f ? f(name) : 0;
    }
    return name_call(RPG_MARKER_NAME_OS_THREAD, name, 0);
}

static int served_roctxNameHsaAgent(const char *name, const struct hsa_agent_s *agent)
{
    if (!tracing()) {
        int (*f)(const char *, const struct hsa_agent_s *) = next_fn(FN_NAME_AGENT);
        return f ? f(name, agent) : 0;
    }
    /* hsa_agent_t is { uint64_t handle }. */
    uint64_t handle = 0;
    if (agent)
        memcpy(&handle, agent, sizeof handle);
    return name_call(RPG_MARKER_NAME_HSA_AGENT, name, handle);
}

static int served_roctxNameHipDevice(const char *name, int device_id)
{
    if (!tracing()) {
        int (*f)(const char *, int) = next_fn(FN_NAME_DEVICE);
        return f ? f(name, device_id) : 0;
    }
    return name_call(RPG_MARKER_NAME_HIP_DEVICE, name, (uint64_t)(int64_t)device_id);
}

static int served_roctxNameHipStream(const char *name, const struct ihipStream_t *stream)
{
    if (!tracing()) {
        int (*f)(const char *, const struct ihipStream_t *) = next_fn(FN_NAME_STREAM);
        return f ? f(name, stream) : 0;
    }
    return name_call(RPG_MARKER_NAME_HIP_STREAM, name, rpg_hip_stream_id((uint64_t)(uintptr_t)stream));
}

static int served_roctxGetThreadId(roctx_thread_id_t *tid)
{
    if (!tracing()) {
        int (*f)(roctx_thread_id_t *) = next_fn(FN_GET_TID);
        if (f)
            return f(tid);
        if (tid)
            *tid = rpg_tid();
        return 0;
    }
    if (rpg_regions_paused()) {
        if (tid)
            *tid = rpg_tid();
        return 0;
    }
    uint64_t corr = rpg_correlation_next();
    uint64_t t0 = rpg_now();
    if (tid)
        *tid = rpg_tid();
    record(RPG_API_MARKER_CORE, RPG_MARKER_GET_THREAD_ID, corr, t0, rpg_now(), 0, NULL);
    return 0;
}


/* ---- the exported functions ---------------------------------------------- */

/* Attached, each call counts itself in flight (the detach waits for it), and
 * a call served here (marker tracing) is forwarded to the app's own ROCTx
 * library too, whose answer it returns: its nesting levels and range ids
 * stay its own, so the app sees the same values before, during and after an
 * attach. Launch mode serves the call alone, as before. */
ROCTX_EXPORT void roctxMarkA(const char *message)
{
    if (__builtin_expect(!rpg__attach_active, 1))
        served_roctxMarkA(message);
    else {
        rpg_attach_enter();
        int traced = tracing();
        served_roctxMarkA(message);
        void (*f)(const char *message) = traced ? next_fn(FN_MARK) : NULL;
        if (f)
            f(message);
        rpg_attach_leave();
    }
}

ROCTX_EXPORT int roctxRangePushA(const char *message)
{
    if (__builtin_expect(!rpg__attach_active, 1))
        return served_roctxRangePushA(message);
    rpg_attach_enter();
    int traced = tracing();
    int r = served_roctxRangePushA(message);
    int (*f)(const char *message) = traced ? next_fn(FN_PUSH) : NULL;
    if (f)
        r = f(message);
    rpg_attach_leave();
    return r;
}

ROCTX_EXPORT int roctxRangePop(void)
{
    if (__builtin_expect(!rpg__attach_active, 1))
        return served_roctxRangePop();
    rpg_attach_enter();
    int traced = tracing();
    int r = served_roctxRangePop();
    int (*f)(void) = traced ? next_fn(FN_POP) : NULL;
    if (f)
        r = f();
    rpg_attach_leave();
    return r;
}

ROCTX_EXPORT roctx_range_id_t roctxRangeStartA(const char *message)
{
    if (__builtin_expect(!rpg__attach_active, 1))
        return served_roctxRangeStartA(message);
    rpg_attach_enter();
    /* The app's library hands out the id, which its stop will name. */
    roctx_range_id_t (*f)(const char *message) = next_fn(FN_START);
    roctx_range_id_t r;
    if (tracing() && f)
        r = start_range(message, f(message));
    else
        r = served_roctxRangeStartA(message);
    rpg_attach_leave();
    return r;
}

ROCTX_EXPORT void roctxRangeStop(roctx_range_id_t id)
{
    if (__builtin_expect(!rpg__attach_active, 1))
        served_roctxRangeStop(id);
    else {
        rpg_attach_enter();
        int traced = tracing();
        served_roctxRangeStop(id);
        void (*f)(roctx_range_id_t id) = traced ? next_fn(FN_STOP) : NULL;
        if (f)
            f(id);
        rpg_attach_leave();
    }
}

ROCTX_EXPORT int roctxProfilerPause(roctx_thread_id_t tid)
{
    if (__builtin_expect(!rpg__attach_active, 1))
        return served_roctxProfilerPause(tid);
    rpg_attach_enter();
    int traced = tracing();
    int r = served_roctxProfilerPause(tid);
    int (*f)(roctx_thread_id_t tid) = traced ? next_fn(FN_PAUSE) : NULL;
    if (f)
        r = f(tid);
    rpg_attach_leave();
    return r;
}

ROCTX_EXPORT int roctxProfilerResume(roctx_thread_id_t tid)
{
    if (__builtin_expect(!rpg__attach_active, 1))
        return served_roctxProfilerResume(tid);
    rpg_attach_enter();
    int traced = tracing();
    int r = served_roctxProfilerResume(tid);
    int (*f)(roctx_thread_id_t tid) = traced ? next_fn(FN_RESUME) : NULL;
    if (f)
        r = f(tid);
    rpg_attach_leave();
    return r;
}

ROCTX_EXPORT int roctxNameOsThread(const char *name)
{
    if (__builtin_expect(!rpg__attach_active, 1))
        return served_roctxNameOsThread(name);
    rpg_attach_enter();
    int traced = tracing();
    int r = served_roctxNameOsThread(name);
    int (*f)(const char *name) = traced ? next_fn(FN_NAME_THREAD) : NULL;
    if (f)
        r = f(name);
    rpg_attach_leave();
    return r;
}

ROCTX_EXPORT int roctxNameHsaAgent(const char *name, const struct hsa_agent_s *agent)
{
    if (__builtin_expect(!rpg__attach_active, 1))
        return served_roctxNameHsaAgent(name, agent);
    rpg_attach_enter();
    int traced = tracing();
    int r = served_roctxNameHsaAgent(name, agent);
    int (*f)(const char *name, const struct hsa_agent_s *agent) = traced ? next_fn(FN_NAME_AGENT) : NULL;
    if (f)
        r = f(name, agent);
    rpg_attach_leave();
    return r;
}

ROCTX_EXPORT int roctxNameHipDevice(const char *name, int device_id)
{
    if (__builtin_expect(!rpg__attach_active, 1))
        return served_roctxNameHipDevice(name, device_id);
    rpg_attach_enter();
    int traced = tracing();
    int r = served_roctxNameHipDevice(name, device_id);
    int (*f)(const char *name, int device_id) = traced ? next_fn(FN_NAME_DEVICE) : NULL;
    if (f)
        r = f(name, device_id);
    rpg_attach_leave();
    return r;
}

ROCTX_EXPORT int roctxNameHipStream(const char *name, const struct ihipStream_t *stream)
{
    if (__builtin_expect(!rpg__attach_active, 1))
        return served_roctxNameHipStream(name, stream);
    rpg_attach_enter();
    int traced = tracing();
    int r = served_roctxNameHipStream(name, stream);
    int (*f)(const char *name, const struct ihipStream_t *stream) = traced ? next_fn(FN_NAME_STREAM) : NULL;
    if (f)
        r = f(name, stream);
    rpg_attach_leave();
    return r;
}

ROCTX_EXPORT int roctxGetThreadId(roctx_thread_id_t *tid)
{
    if (__builtin_expect(!rpg__attach_active, 1))
        return served_roctxGetThreadId(tid);
    rpg_attach_enter();
    int traced = tracing();
    int r = served_roctxGetThreadId(tid);
    int (*f)(roctx_thread_id_t *tid) = traced ? next_fn(FN_GET_TID) : NULL;
    if (f)
        r = f(tid);
    rpg_attach_leave();
    return r;
}

size_t rpg__roctx_hooks(rpg_hook *out, size_t cap)
{
    void *self = rpg__self_handle();
    size_t n = 0;
    for (int f = 0; self && f < FN_COUNT && n < cap; f++) {
        /* By our own handle: a global ROCTx library would win a plain
         * reference to the name. */
        void *w = dlsym(self, fn_names[f]);
        if (w && rpg__in_self(w))
            out[n++] = (rpg_hook){fn_names[f], w, &g_next[f], NULL};
    }
    return n;
}
/* A fork child owns only the forking thread: the others' open ranges and the
 * lock are not its own. */
static void after_fork_child(void)
{
    if (!__atomic_load_n(&g_started_used, __ATOMIC_RELAXED))
        return;
    pthread_mutex_init(&g_started.lock, NULL);
    g_started.n = 0;
}

/* Runs after recorder.c's set-up (later in link order, or called after it
 * by the attach's control thread): rpg_domains is final, and processes that
 * do not trace markers register nothing. */
void rpg__roctx_setup(void)
{
    static int registered;
    if ((rpg_domains & RPG_DOMAIN_MARKER) && !registered) {
        pthread_atfork(NULL, NULL, after_fork_child);
        registered = 1;
    }
}

__attribute__((constructor)) static void roctx_init(void) { rpg__roctx_setup(); }
