/*
 * attach.c: attach mode's control thread (docs/attach.md).
 *
 * The CLI loads the library into a running process (dlopen through ptrace,
 * internal/inject) and calls rpg_attach_start on a hijacked thread, which
 * only reads the configuration file and starts the control thread. That
 * thread does the rest:
 *
 *   1. the recorder's set-up from the configuration (rpg_env answers from it
 *      instead of the environment), the spool as in launch mode;
 *   2. the hooks: the GOT slots of every loaded module importing a HIP
 *      function the library wraps (by name and the version the module
 *      requires), a ROCTx function (under marker tracing) or an HSA function
 *      of attach_hsa.c, redirected to the wrappers (attach_got.c);
 *   3. the HSA side (attach_hsa.c);
 *   4. "ready <pid>\n" (or "error <one line>\n") on the CLI's unix socket;
 *   5. a loop: the socket, the HSA side's poll every millisecond, a rescan
 *      for modules the app loaded since (dl_iterate_phdr's dlpi_adds);
 *   6. on "detach\n" or EOF (the CLI is gone): every slot restored, a wait
 *      (at most 10 s) until no thread is inside a wrapper, the HSA side
 *      stopped, the spool finished and closed, "detached <pid> <restored>
 *      <lost-dispatches> <lost-copies>\n", the socket closed, and the
 *      library unloaded.
 *
 * The unload: the thread's start routine is a few lines of assembly that
 * call the C body and, when it says so, jump to dlclose with the stack as
 * the thread started, so dlclose returns straight into libc's start_thread,
 * which ends the thread. No instruction of the library runs after the unmap.
 *
 * In flight: every wrapper reached through a redirected slot counts itself
 * (rpg_attach_enter/leave, on 64 cache-line shards indexed by thread id) so
 * that the detach knows when no thread runs the library's code. A thread
 * that has loaded a slot's old value but not yet counted itself (a few
 * instructions; the untraced path's tail jump to the real function is the
 * same few instructions) is covered by a grace period: the count must be 0
 * again 50 ms (GRACE_MS) after it was first seen 0. A thread preempted inside those instructions for
 * longer than that is the one case this does not cover (nothing in /proc
 * tells a preempted thread's instruction pointer).
 * Threads still inside after 10 s (a wrapper blocked in the real call) leave
 * the library mapped and inert (nothing recorded, every slot restored, the
 * spool's file finished; its pages stay mapped for the late wrapper):
 * "busy <n>\n" precedes the "detached" line, and the control thread stays
 * until the last of those calls has returned, then unmaps the spool and
 * unloads the library as usual. Meanwhile a new attach is refused (-EBUSY).
 *
 * fork while attached: the child gets the patched slots and no control
 * thread. A pthread_atfork child handler (registered once per load of the
 * library, removed by dlclose with the library's other handlers) runs in the
 * child, single-threaded, right after fork: recording off, the child's
 * copies of the slots restored, the spool, socket and notes descriptors
 * closed. The library stays mapped in the child, inert, until the child
 * execs or exits, or until the CLI attaches it (--attach-children): the
 * injector's dlopen then returns this image and rpg_attach_start starts a
 * fresh attach on it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "attach_internal.h"
#include "attach_pcs.h"
#include "hip_trace.h"

/* ---- state ---------------------------------------------------------------- */

int rpg_attach_active;
extern int rpg__attach_active __attribute__((alias("rpg_attach_active"), visibility("hidden")));

enum attach_state { ST_IDLE = 0, ST_ATTACHED = 1, ST_DETACHING = 2, ST_INERT = 3 };
static int g_state;      /* atomic */
static pid_t g_attach_pid;
static int g_sock = -1;
static dev_t g_sock_dev;
static ino_t g_sock_ino;
/* dlopen references this image holds that the unload gives back: one per
 * rpg_attach_start that succeeded (the injector's dlopen) and the self
 * handle's. */
static int g_refs;
/* Orders a failed start's hand-over of its reference (g_refs) against the
 * control thread's last look at g_refs and the state. */
static pthread_mutex_t g_refs_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_atfork_registered;

/* The configuration: NAME=VALUE lines, parsed in place in one mapping,
 * published as rpg__env_table (env.c). */
typedef rpg_env_table conf;
#define g_conf rpg__env_table

static rpg_hook *g_hooks;
static size_t g_nhooks, g_hooks_len;

#define SHARDS 64
#define GRACE_MS 50u
typedef struct shard {
    int64_t n;
    char pad[56];
} shard;
static shard g_inflight[SHARDS] __attribute__((aligned(64)));

/* ---- small helpers ---------------------------------------------------------- */

static int64_t inflight(void)
{
    int64_t sum = 0;
    for (int i = 0; i < SHARDS; i++)
        sum += __atomic_load_n(&g_inflight[i].n, __ATOMIC_ACQUIRE);
    return sum;
}

static inline uint32_t shard_of(void)
{
    uint32_t t = RPG_T.tid;
    if (__builtin_expect(t == 0, 0))
        t = rpg_tid();
    return t & (SHARDS - 1);
}

void rpg_attach_enter(void)
{
    __atomic_fetch_add(&g_inflight[shard_of()].n, 1, __ATOMIC_SEQ_CST);
}

void rpg_attach_leave(void)
{
    __atomic_fetch_sub(&g_inflight[shard_of()].n, 1, __ATOMIC_RELEASE);
}

static uintptr_t g_self_lo, g_self_hi;

typedef struct module_range {
    uintptr_t addr, lo, hi;
} module_range;

static int module_range_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    module_range *r = data;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    int holds = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
        lo = a < lo ? a : lo;
        hi = b > hi ? b : hi;
        holds |= r->addr >= a && r->addr < b;
    }
    if (!holds)
        return 0;
    r->lo = lo;
    r->hi = hi;
    return 1;
}

int rpg__module_range(const void *p, uintptr_t *lo, uintptr_t *hi)
{
    module_range r = {(uintptr_t)p, 0, 0};
    if (!dl_iterate_phdr(module_range_cb, &r))
        return 0;
    *lo = r.lo;
    *hi = r.hi;
    return 1;
}

int rpg__in_self(const void *p)
{
    if (!__atomic_load_n(&g_self_hi, __ATOMIC_ACQUIRE)) {
        uintptr_t lo, hi;
        if (rpg__module_range((const void *)rpg__in_self, &lo, &hi)) {
            g_self_lo = lo;
            __atomic_store_n(&g_self_hi, hi, __ATOMIC_RELEASE);
        }
    }
    return (uintptr_t)p >= g_self_lo && (uintptr_t)p < g_self_hi;
}

static void *g_self;

void *rpg__self_handle(void)
{
    void *h = __atomic_load_n(&g_self, __ATOMIC_ACQUIRE);
    if (h)
        return h;
    Dl_info info;
    if (!dladdr((void *)rpg__self_handle, &info) || !info.dli_fname)
        return NULL;
    h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return NULL;
    void *none = NULL;
    if (__atomic_compare_exchange_n(&g_self, &none, h, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        __atomic_fetch_add(&g_refs, 1, __ATOMIC_RELAXED);
        return h;
    }
    dlclose(h);
    return none;
}

/* ---- the configuration ------------------------------------------------------ */

static void conf_free(conf *c)
{
    if (c)
        munmap(c, c->map_len);
}

/* Reads NAME=VALUE lines (blank lines and '#' comments skipped) into one
 * anonymous mapping: the header, the text, the two pointer arrays. No
 * malloc: the hijacked thread may have been stopped inside it. */
static int conf_read(const char *path, conf **out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (1 << 24)) {
        int e = errno ? errno : EINVAL;
        close(fd);
        return -e;
    }
    size_t len = (size_t)st.st_size;
    size_t lines = 1;
    size_t text = (len + 1 + 7) & ~(size_t)7;
    /* At most one entry per byte + 1: sized after the count below. */
    size_t head = (sizeof(conf) + 7) & ~(size_t)7;
    size_t first = head + text;
    char *m = mmap(NULL, first, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        close(fd);
        return -ENOMEM;
    }
    char *buf = m + head;
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, buf + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = 0;
    for (size_t i = 0; i < got; i++)
        lines += buf[i] == '\n';
    size_t total = first + 2 * lines * sizeof(char *);
    char *grown = mremap(m, first, total, MREMAP_MAYMOVE);
    if (grown == MAP_FAILED) {
        munmap(m, first);
        return -ENOMEM;
    }
    m = grown;
    buf = m + head;
    conf *c = (conf *)m;
    c->map_len = total;
    c->names = (const char **)(m + first);
    c->values = c->names + lines;
    c->n = 0;
    for (char *s = buf; *s;) {
        char *nl = strchr(s, '\n');
        char *next = nl ? nl + 1 : s + strlen(s);
        if (nl)
            *nl = 0;
        char *eq = strchr(s, '=');
        if (s[0] && s[0] != '#' && eq && eq != s) {
            *eq = 0;
            c->names[c->n] = s;
            c->values[c->n] = eq + 1;
            c->n++;
        } else if (s[0] && s[0] != '#') {
            munmap(m, total);
            return -EINVAL; /* not NAME=VALUE: a configuration this library cannot trust */
        }
        s = next;
    }
    *out = c;
    return 0;
}

/* ---- the socket ----------------------------------------------------------- */

static int sock_connect(const char *path)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    if (!path || !path[0])
        return -EINVAL;
    if (strlen(path) >= sizeof a.sun_path)
        return -ENAMETOOLONG;
    strcpy(a.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int rc;
    do
        rc = connect(fd, (struct sockaddr *)&a, sizeof a);
    while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    /* Out of the low numbers an app tends to reuse and close. */
    int hi = fcntl(fd, F_DUPFD_CLOEXEC, 512);
    if (hi >= 0) {
        close(fd);
        fd = hi;
    }
    struct stat st;
    if (fstat(fd, &st) == 0) {
        g_sock_dev = st.st_dev;
        g_sock_ino = st.st_ino;
    }
    return fd;
}

static int sock_is_ours(int fd)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == g_sock_dev && st.st_ino == g_sock_ino;
}

static void say(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int fd, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    if ((size_t)n >= sizeof line) {
        n = (int)sizeof line - 1;
        line[n - 1] = '\n';
    }
    for (int off = 0; off < n;) {
        ssize_t w = send(fd, line + off, (size_t)(n - off), MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        off += (int)w;
    }
}

/* ---- the hooks ------------------------------------------------------------ */

static int hooks_build(void)
{
    size_t cap = rpg_hip_function_count + 128 + rpg_attach_hsa_nhooks;
    size_t len = cap * sizeof(rpg_hook);
    rpg_hook *h = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (h == MAP_FAILED)
        return -ENOMEM;
    size_t n = 0;
    if (rpg_domains & RPG_HIP_DOMAINS)
        n += rpg__hip_hooks(h + n, cap - n);
    if (rpg_domains & RPG_DOMAIN_MARKER)
        n += rpg__roctx_hooks(h + n, cap - n);
    if (rpg_domains & RPG_DOMAIN_RCCL)
        n += rpg__rccl_hooks(h + n, cap - n);
    for (size_t i = 0; i < rpg_attach_hsa_nhooks && n < cap; i++)
        h[n++] = rpg_attach_hsa_hooks[i];
    n += rpg__attach_copy_hooks(h + n, cap - n);
    g_hooks = h;
    g_nhooks = n;
    g_hooks_len = len;
    return 0;
}

static void hooks_free(void)
{
    if (g_hooks)
        munmap(g_hooks, g_hooks_len);
    g_hooks = NULL;
    g_nhooks = 0;
}

/* ---- fork ------------------------------------------------------------------- */

/* In the child, single-threaded, right after fork: the child is not
 * attached (the CLI may attach it on its own). */
static void attach_after_fork_child(void)
{
    if (__atomic_load_n(&g_state, __ATOMIC_RELAXED) == ST_IDLE)
        return;
    rpg__recorder_child_off();
    rpg__got_after_fork();
    rpg_got_restore();
    rpg__table_restore();
    if (g_sock >= 0 && sock_is_ours(g_sock))
        close(g_sock);
    g_sock = -1;
    rpg__notes_finish();
    conf *c = g_conf;
    __atomic_store_n(&g_conf, NULL, __ATOMIC_RELEASE);
    conf_free(c);
    memset(g_inflight, 0, sizeof g_inflight);
    hooks_free();
    __atomic_store_n(&rpg__attach_active, 0, __ATOMIC_RELEASE);
    g_attach_pid = 0;
    __atomic_store_n(&g_state, ST_IDLE, __ATOMIC_RELEASE);
}

/* ---- the control thread ----------------------------------------------------- */

static int install(char *err, size_t errlen)
{
    int rc = rpg__recorder_setup(1);
    if (rc != 0) {
        snprintf(err, errlen,
                 "the attach configuration names no usable spool directory (%s); "
                 "run rocprof-go --attach again",
                 RPG_ENV_GO_SPOOL_DIR);
        return rc;
    }
    rpg__hip_args_setup();
    rpg__roctx_setup();
    rc = rpg__regions_setup(1);
    if (rc != 0) {
        snprintf(err, errlen,
                 "--collection-period is not available while attached; use "
                 "--attach-duration-msec to bound the attach instead");
        return rc;
    }
    if (!g_atfork_registered) {
        /* Registered under this library's __dso_handle: dlclose removes it. */
        pthread_atfork(NULL, NULL, attach_after_fork_child);
        g_atfork_registered = 1;
    }
    if (!rpg__self_handle()) {
        snprintf(err, errlen, "the profiler library cannot find its own handle: %s", dlerror());
        return -ENOENT;
    }
    rc = hooks_build();
    if (rc != 0) {
        snprintf(err, errlen, "out of memory for the hook table");
        return rc;
    }
    /* Before the HSA modules start: their own calls then go to the table's
     * original functions, unrecorded. */
    rc = rpg__table_start(err, errlen);
    if (rc < 0)
        return rc;
    /* Before the slots: copies are traced from their first hook on (a
     * refusal is noted in the spool). */
    (void)rpg__attach_copy_start();
    __atomic_store_n(&rpg__attach_active, 1, __ATOMIC_SEQ_CST);
    rc = rpg_got_patch(g_hooks, g_nhooks);
    if (rc < 0) {
        snprintf(err, errlen, "redirecting the process's GOT slots failed: %s", strerror(-rc));
        return rc;
    }
    rc = rpg_attach_hsa_start();
    if (rc < 0 && rc != -ENOENT) {
        /* -ENOENT: no HSA runtime in the process: the HSA side stays off. */
        snprintf(err, errlen, "the HSA side could not start: %s", strerror(-rc));
        return rc;
    }
    return 0;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Until "detach\n" or EOF (or a socket error: the CLI is gone all the same). */
static void serve(int fd)
{
    char line[128];
    size_t have = 0;
    unsigned long long adds = rpg__got_adds();
    uint64_t next_scan = now_ms() + 10;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        int n = poll(&p, 1, 1);
        rpg_attach_hsa_poll();
        rpg__attach_copy_poll();
        uint64_t t = now_ms();
        if (t >= next_scan) {
            next_scan = t + 10;
            unsigned long long a = rpg__got_adds();
            if (a != adds) {
                adds = a;
                rpg_got_patch(g_hooks, g_nhooks);
            }
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return;
        if (n == 0)
            continue;
        ssize_t r = recv(fd, line + have, sizeof line - 1 - have, 0);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0)
            return;
        have += (size_t)r;
        line[have] = 0;
        char *nl;
        while ((nl = strchr(line, '\n')) != NULL) {
            *nl = 0;
            if (strcmp(line, "detach") == 0)
                return;
            size_t rest = have - (size_t)(nl + 1 - line);
            memmove(line, nl + 1, rest + 1);
            have = rest;
        }
        if (have == sizeof line - 1)
            have = 0; /* a line too long for any command */
    }
}

/* Until no thread is inside a wrapper (with a grace period for one between
 * loading a slot and counting itself), at most 10 s (tests set less); 1 when
 * drained. Called while the configuration is still there. */
static int drain(void)
{
    uint64_t bound = 10000;
    const char *v = rpg_env(RPG_ENV_GO_TEST_ATTACH_DRAIN_MS);
    if (v && *v) {
        char *end;
        unsigned long long ms = strtoull(v, &end, 10);
        if (!*end && ms > 0 && ms <= 600000)
            bound = ms;
    }
    uint64_t deadline = now_ms() + bound;
    for (;;) {
        if (inflight() <= 0) {
            sleep_ms(GRACE_MS);
            if (inflight() <= 0)
                return 1;
        }
        if (now_ms() >= deadline)
            return 0;
        sleep_ms(1);
    }
}

typedef struct exit_plan {
    void *handle;
    int (*close)(void *);
} exit_plan;

RPG_ATTACH_HIDDEN exit_plan rpg__control_main(void *arg);

#define UNLOAD_ONLY ((void *)1)

exit_plan rpg__control_main(void *arg)
{
    if (arg == UNLOAD_ONLY) {
        /* A refused start with no attach in this image: the caller's
         * reference, given back from a thread of our own (the hijacked
         * thread runs our code until it returns). A reference of ours
         * keeps the library until the tail call. */
        Dl_info info;
        void *h = dladdr((void *)rpg__control_main, &info) && info.dli_fname
                      ? dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)
                      : NULL;
        if (!h)
            return (exit_plan){NULL, NULL};
        dlclose(h);
        return (exit_plan){h, dlclose};
    }
    pthread_setname_np(pthread_self(), "rpg-attach");
    pid_t pid = getpid();
    char err[200] = "";
    int fd = sock_connect(rpg_env(RPG_ENV_GO_ATTACH_SOCKET));
    int ok = 0;
    if (fd >= 0) {
        g_sock = fd;
        ok = install(err, sizeof err) == 0;
        if (ok)
            say(fd, "ready %d\n", (int)pid);
        else
            say(fd, "error %s\n", err);
        if (ok)
            serve(fd);
    }
    __atomic_store_n(&g_state, ST_DETACHING, __ATOMIC_SEQ_CST);
    rpg__attach_copy_detaching();
    rpg__attach_pcs_detaching(); /* attach_pcs.c: sampling ends with the hooks */
    int restored = rpg_got_restore();
    restored += rpg__table_restore();
    int drained = drain();
    uint64_t copies_lost = rpg__attach_copy_stop(); /* 0 when it never started */
    uint64_t lost = ok ? rpg_attach_hsa_stop() : 0;
    __atomic_store_n(&rpg_domains, 0, __ATOMIC_SEQ_CST);
    rpg__recorder_finish(drained);
    rpg__notes_finish();
    if (fd >= 0) {
        if (!drained)
            say(fd, "busy %lld\n", (long long)inflight());
        if (ok)
            say(fd, "dispatches %d %s\n", (int)pid, rpg_attach_hsa_losses());
        if (*rpg__attach_copy_account())
            say(fd, "copies %d %s\n", (int)pid, rpg__attach_copy_account());
        say(fd, "detached %d %d %llu %llu\n", (int)pid, restored, (unsigned long long)lost,
            (unsigned long long)copies_lost);
        if (sock_is_ours(fd))
            close(fd);
    }
    g_sock = -1;
    conf *c = g_conf;
    __atomic_store_n(&g_conf, NULL, __ATOMIC_RELEASE);
    conf_free(c);
    if (!drained) {
        /* Inert: a thread still runs our code (blocked in a real call).
         * Nothing is recorded any more and every slot is restored; this
         * thread waits, as long as it takes, for the last such call to
         * return through its wrapper, then finishes the unload. Until then
         * a new attach is refused (-EBUSY). */
        __atomic_store_n(&g_state, ST_INERT, __ATOMIC_RELEASE);
        while (!(inflight() <= 0 && (sleep_ms(GRACE_MS), inflight() <= 0)))
            sleep_ms(10);
        rpg__recorder_finish(1);
    }
    hooks_free();
    g_attach_pid = 0;
    __atomic_store_n(&rpg__attach_active, 0, __ATOMIC_SEQ_CST);
    /* Every reference but the last now; the last as the thread's tail call.
     * Starts refused meanwhile handed theirs over (give_back). */
    pthread_mutex_lock(&g_refs_lock);
    void *self = rpg__self_handle(); /* opened now if the set-up failed first */
    int refs = __atomic_exchange_n(&g_refs, 0, __ATOMIC_ACQ_REL);
    g_self = NULL;
    __atomic_store_n(&g_state, ST_IDLE, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&g_refs_lock);
    if (!self || refs <= 0)
        return (exit_plan){NULL, NULL};
    for (int i = 1; i < refs; i++)
        dlclose(self);
    return (exit_plan){self, dlclose};
}

#if defined(__x86_64__)
/* The control thread's start routine: calls rpg__control_main with the
 * stack aligned, then, with the stack exactly as start_thread called us
 * (its return address on top), jumps to plan.close(plan.handle): dlclose
 * unmaps the library and returns to start_thread, which ends the thread. */
__asm__(".text\n"
        ".p2align 4\n"
        ".type rpg__control_entry,@function\n"
        "rpg__control_entry:\n"
        "    .cfi_startproc\n"
        "    subq $8, %rsp\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    call rpg__control_main\n"
        "    addq $8, %rsp\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    testq %rdx, %rdx\n"
        "    jz 1f\n"
        "    movq %rax, %rdi\n"
        "    jmp *%rdx\n"
        "1:  xorl %eax, %eax\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size rpg__control_entry, .-rpg__control_entry\n");
void *rpg__control_entry(void *arg) __attribute__((visibility("hidden")));
#else
static void *rpg__control_entry(void *arg)
{
    (void)rpg__control_main(arg); /* no self-unload here: the library stays mapped */
    return NULL;
}
#endif

/* ---- the entry point ------------------------------------------------------- */

static int spawn(void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 256 * 1024);
    pthread_t th;
    int rc = pthread_create(&th, &a, rpg__control_entry, arg);
    pthread_attr_destroy(&a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* A refused start keeps the caller's dlopen reference all the same (the
 * injector never closes what it loaded): the attach in progress gives it
 * back at its unload, or, with none, a thread of ours does now. */
static int give_back(int rc)
{
    pthread_mutex_lock(&g_refs_lock);
    int busy = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != ST_IDLE;
    if (busy)
        __atomic_fetch_add(&g_refs, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&g_refs_lock);
    /* In launch mode too: LD_PRELOAD's copy is never unloaded (dlclose only
     * drops the reference), a second copy from another path goes. */
    if (!busy)
        (void)spawn(UNLOAD_ONLY);
    return rc;
}

/* The one symbol of attach mode the library exports: the injector finds it
 * with dlsym on the handle its dlopen returned. */
__attribute__((visibility("default"))) int rpg_attach_start(const char *conf_path)
{
    if (rpg__recorder_launch_mode())
        return give_back(-EALREADY); /* LD_PRELOAD's profiling already runs here */
    if (!conf_path)
        return give_back(-EINVAL);
    int st = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
    if (st == ST_INERT || st == ST_DETACHING)
        return give_back(-EBUSY);
    if (st != ST_IDLE)
        return give_back(g_attach_pid == getpid() ? -EALREADY : -EBUSY);
    if (!__atomic_compare_exchange_n(&g_state, &st, ST_ATTACHED, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return give_back(-EALREADY);
    conf *c = NULL;
    int rc = conf_read(conf_path, &c);
    if (rc != 0) {
        __atomic_store_n(&g_state, ST_IDLE, __ATOMIC_RELEASE);
        return give_back(rc);
    }
    g_attach_pid = getpid();
    __atomic_store_n(&g_conf, c, __ATOMIC_RELEASE);
    (void)rpg__in_self((const void *)rpg_attach_start); /* the range, before any scan */
    /* The injector's dlopen: given back at the unload. */
    __atomic_fetch_add(&g_refs, 1, __ATOMIC_RELAXED);
    rc = spawn(NULL);
    if (rc != 0) {
        __atomic_fetch_sub(&g_refs, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&g_conf, NULL, __ATOMIC_RELEASE);
        conf_free(c);
        g_attach_pid = 0;
        __atomic_store_n(&g_state, ST_IDLE, __ATOMIC_RELEASE);
        return give_back(-rc);
    }
    return 0;
}
