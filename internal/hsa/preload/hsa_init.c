/*
 * hsa_init.c: notes in the spool, once per process, that the HSA runtime
 * was initialised (RPG_STATUS_HSA_INIT), and whether that failed.
 *
 * The shim notes that it attached (or declined) from OnLoad, which the
 * runtime calls inside hsa_init. A process whose spool says hsa_init ran
 * but not that the shim attached lost every domain the shim collects
 * (kernels, copies, HSA calls, counters): the runtime did not load
 * HSA_TOOLS_LIB, or refused it. The CLI reports that instead of writing
 * files that look complete (docs/shim.md, "lost domains").
 *
 * A failed hsa_init is different: the GPU stack found no GPU (the thunk
 * could not read the KFD topology, /dev/kfd is missing, ...), so nothing
 * the app does reaches a GPU. The status is noted (RPG_STATUS_HSA_INIT_FAILED)
 * and, once, a forked probe runs hsa_init again with HSAKMT_DEBUG_LEVEL=3,
 * the level at which the thunk prints its errors (pr_err, silent by
 * default in ROCm 5.2 to 7.x), and the lines it printed are noted too
 * (RPG_STATUS_HSA_INIT_DIAGNOSIS): the CLI says why the GPU stack found no
 * GPU instead of blaming the app (docs/troubleshooting.md). An hsa_init
 * that succeeds without a GPU agent (ROCm 5.2's thunk when it cannot read
 * the CPU node's caches) is probed the same way, the child shutting the
 * runtime down first so that its hsa_init reads the topology again. The
 * shim, inside hsa_init, notes that case (RPG_STATUS_NO_GPU_AGENT, seen
 * here through rpg__status_seen); without the shim this file walks the
 * agents itself (a walk the shim would have traced as the app's call).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rpg_internal.h"

/* hsa_status_t is an enum: an int in the ABI. */
typedef int (*hsa_init_fn)(void);
/* hsa.h: hsa_agent_t is a struct of one uint64; HSA_AGENT_INFO_DEVICE is 17
 * and HSA_DEVICE_TYPE_GPU 1; HSA_STATUS_INFO_BREAK (0x1) stops a walk. */
typedef struct {
    uint64_t handle;
} agent_t;
typedef int (*iterate_agents_fn)(int (*cb)(agent_t, void *), void *data);
typedef int (*agent_get_info_fn)(agent_t, int attribute, void *value);
enum { AGENT_INFO_DEVICE = 17, DEVICE_TYPE_GPU = 1, STATUS_INFO_BREAK = 1 };
static agent_get_info_fn agent_get_info;

static int noted;  /* atomic; a fork child keeps the parent's spool name, not its notes */
/* seen reports whether this process recorded status string id (the shim's
 * notes, made inside hsa_init). */
static int seen(uint32_t id)
{
    return (__atomic_load_n(&rpg__status_seen, __ATOMIC_ACQUIRE) >> id) & 1u;
}
static int failed; /* atomic: the failure was noted (and probed) */

static void forget(void)
{
    __atomic_store_n(&noted, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&failed, 0, __ATOMIC_RELAXED);
}

/* hsa_status_t names of the errors hsa_init returns (hsa.h's values). */
static const char *status_name(int s)
{
    switch (s) {
    case 0x1000: return "HSA_STATUS_ERROR";
    case 0x1001: return "HSA_STATUS_ERROR_INVALID_ARGUMENT";
    case 0x1008: return "HSA_STATUS_ERROR_OUT_OF_RESOURCES";
    case 0x100b: return "HSA_STATUS_ERROR_NOT_INITIALIZED";
    case 0x100c: return "HSA_STATUS_ERROR_REFCOUNT_OVERFLOW";
    case 0x100f: return "HSA_STATUS_ERROR_INVALID_RUNTIME_STATE";
    case 0x1017: return "HSA_STATUS_ERROR_FATAL";
    default: return "HSA_STATUS_ERROR";
    }
}

/* probe_ms bounds the probe: a child stuck in the runtime is killed. */
enum { PROBE_MS = 5000, PROBE_MAX = 2048 };

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* probe runs real hsa_init in a forked child with HSAKMT_DEBUG_LEVEL=3 and
 * its stdout and stderr on a pipe, and returns what it printed (at most
 * PROBE_MAX bytes), or 0 bytes when it printed nothing or could not run.
 * The thunk reads HSAKMT_DEBUG_LEVEL whenever it opens the KFD with nothing
 * open, which a failed hsa_init leaves; the child runs no atexit handler. */
static size_t probe(hsa_init_fn f, hsa_init_fn shut_down, char *out, size_t cap)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC))
        return 0;
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return 0;
    }
    if (pid == 0) {
        dup2(p[1], 1);
        dup2(p[1], 2);
        setenv("HSAKMT_DEBUG_LEVEL", "3", 1);
        unsetenv("HSA_TOOLS_LIB"); /* the shim has nothing to do here */
        if (shut_down)
            shut_down(); /* an initialised runtime: the next hsa_init starts afresh */
        _exit(f() ? 1 : 0);
    }
    close(p[1]);
    size_t len = 0;
    int64_t deadline = now_ms() + PROBE_MS;
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0)
            break;
        struct pollfd pfd = {.fd = p[0], .events = POLLIN};
        int r = poll(&pfd, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        char buf[512];
        ssize_t n = read(p[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n && len < cap; i++)
            out[len++] = buf[i];
    }
    close(p[0]);
    kill(pid, SIGKILL); /* gone already, or stuck: either way done */
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    return len;
}

/* note_diagnosis probes and records what the thunk printed, if anything. */
static void note_diagnosis(hsa_init_fn f, hsa_init_fn shut_down)
{
    static char out[PROBE_MAX];
    size_t len = probe(f, shut_down, out, sizeof out);
    if (len)
        rpg_record_string(RPG_STRTAB_STATUS, RPG_STATUS_HSA_INIT_DIAGNOSIS, out, len);
}

/* note_failure records hsa_init's failed status, then the probe's lines. */
static void note_failure(hsa_init_fn f, int s)
{
    char text[96];
    int n = snprintf(text, sizeof text, "%s (0x%x)", status_name(s), (unsigned)s);
    rpg_record_string(RPG_STRTAB_STATUS, RPG_STATUS_HSA_INIT_FAILED, text, n > 0 ? (size_t)n : 0);
    note_diagnosis(f, NULL);
}

static int find_gpu(agent_t a, void *found)
{
    int type = 0;
    if (agent_get_info(a, AGENT_INFO_DEVICE, &type) == 0 && type == DEVICE_TYPE_GPU) {
        *(int *)found = 1;
        return STATUS_INFO_BREAK;
    }
    return 0;
}

/* no_gpu_agent reports whether an initialised runtime lists no GPU agent
 * (0 when it cannot tell). */
static int no_gpu_agent(void)
{
    iterate_agents_fn iterate = (iterate_agents_fn)dlsym(RTLD_NEXT, "hsa_iterate_agents");
    agent_get_info = (agent_get_info_fn)dlsym(RTLD_NEXT, "hsa_agent_get_info");
    if (!iterate || !agent_get_info)
        return 0;
    int found = 0;
    int s = iterate(find_gpu, &found);
    return (s == 0 || s == STATUS_INFO_BREAK) && !found;
}

/* hsa_init@ROCR_1 (rocr_exports.map): applications and HIP reference the
 * versioned symbol. */
RPG_API int hsa_init(void)
{
    static hsa_init_fn real;
    hsa_init_fn f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (hsa_init_fn)dlvsym(RTLD_NEXT, "hsa_init", "ROCR_1");
        if (!f)
            f = (hsa_init_fn)dlsym(RTLD_NEXT, "hsa_init");
        if (!f) {
            static const char msg[] = "rocprof-go: hsa_init called but no HSA runtime is loaded\n";
            (void)!write(2, msg, sizeof msg - 1);
            return 0x1000; /* HSA_STATUS_ERROR */
        }
        __atomic_store_n(&real, f, __ATOMIC_RELEASE);
    }
    if (rpg_domains && !__atomic_exchange_n(&noted, 1, __ATOMIC_ACQ_REL)) {
        static int once;
        if (!__atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL))
            pthread_atfork(NULL, NULL, forget);
        char pid[32];
        int n = snprintf(pid, sizeof pid, "pid %d", (int)getpid());
        rpg_record_string(RPG_STRTAB_STATUS, RPG_STATUS_HSA_INIT, pid, n > 0 ? (size_t)n : 0);
    }
    int s = f();
    if (rpg_domains && !__atomic_load_n(&failed, __ATOMIC_ACQUIRE)) {
        if (s != 0) {
            if (!__atomic_exchange_n(&failed, 1, __ATOMIC_ACQ_REL))
                note_failure(f, s);
        } else if ((seen(RPG_STATUS_NO_GPU_AGENT) || (!seen(RPG_STATUS_SHIM_ATTACHED) && no_gpu_agent())) &&
                   !__atomic_exchange_n(&failed, 1, __ATOMIC_ACQ_REL)) {
            hsa_init_fn shut_down = (hsa_init_fn)dlsym(RTLD_NEXT, "hsa_shut_down");
            if (shut_down)
                note_diagnosis(f, shut_down);
        }
    }
    return s;
}
