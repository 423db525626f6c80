/*
 * hip_trace.c: the run-time half of the HIP wrappers: lazy resolution of the
 * real functions, the function-name string table, whether to record
 * arguments.
 */
#include "hip_trace.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach_internal.h"

/* 0: not yet in this spool, 2: being written, 1: written. */
int rpg_hip_names_recorded;

int rpg_hip_args_on;

/* Arguments cost a copy per call; only the outputs that show them (JSON,
 * Perfetto, ROCpd) ask for them. ROCPROF_GO_HIP_ARGS=0/1 overrides. */
void rpg__hip_args_setup(void)
{
    const char *v = rpg_env(RPG_ENV_GO_HIP_ARGS);
    if (v && (v[0] == '0' || v[0] == '1') && v[1] == 0) {
        rpg_hip_args_on = v[0] == '1';
        return;
    }
    const char *f = rpg_env(RPG_ENV_OUTPUT_FORMAT);
    rpg_hip_args_on = f && (strstr(f, "json") || strstr(f, "rocpd") || strstr(f, "pftrace"));
}

__attribute__((constructor)) static void hip_args_init(void) { rpg__hip_args_setup(); }

/* The HIP library itself, for applications that dlopen it RTLD_LOCAL:
 * RTLD_NEXT does not search local scopes, but their calls still bind to our
 * wrappers through the global scope. */
static void *hip_handle(void)
{
    static const char *const names[] = {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5",
                                        "libamdhip64.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *h = dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD);
        if (h)
            return h;
    }
    return NULL;
}

void *rpg_hip_resolve(uint32_t id)
{
    const rpg_hip_function *f = &rpg_hip_functions[id];
    /* The versioned lookup first: the same name may exist in several nodes. */
    const char *symbol = rpg_hip_str(f->symbol), *version = rpg_hip_str(f->version);
    void *p = NULL;
    if (rpg__attach_mode()) {
        /* Loaded RTLD_LOCAL by the injector: RTLD_NEXT means nothing
         * there. The definition in the module that defines it (the slots
         * were bound to it; attach_got.c usually set it already). */
        p = rpg__attach_lookup(symbol, version);
    } else {
        p = dlvsym(RTLD_NEXT, symbol, version);
        if (!p)
            p = dlsym(RTLD_NEXT, symbol);
    }
    if (!p && !rpg__attach_mode()) {
        void *h = hip_handle();
        if (h) {
            p = dlvsym(h, symbol, version);
            if (!p)
                p = dlsym(h, symbol);
        }
    }
    if (!p) {
        /* Only reachable when something calls a HIP function without HIP
         * being loaded at all; there is nothing sane to return. */
        char msg[256];
        int n = snprintf(msg, sizeof msg,
                         "rocprof-go: %s@%s called but not found in any loaded HIP library\n",
                         rpg_hip_str(f->name), version);
        if (n > 0)
            (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
        abort();
    }
    __atomic_store_n(&rpg_hip_real_fns[id], p, __ATOMIC_RELAXED);
    return p;
}

/* The preload library's own handle, for looking up its wrappers by name and
 * version (every wrapper is exported under the symbol it wraps). */
static void *self_handle(void) { return rpg__self_handle(); }

size_t rpg__hip_hooks(rpg_hook *out, size_t cap)
{
    void *self = self_handle();
    size_t n = 0;
    for (uint32_t i = 0; self && i < rpg_hip_function_count && n < cap; i++) {
        const rpg_hip_function *f = &rpg_hip_functions[i];
        void *w = dlvsym(self, rpg_hip_str(f->symbol), rpg_hip_str(f->version));
        if (!w || !rpg__in_self(w))
            continue;
        out[n++] = (rpg_hook){rpg_hip_str(f->symbol), w, &rpg_hip_real_fns[i],
                              rpg_hip_str(f->version)};
    }
    return n;
}

void rpg_hip_wrap_proc(void *out)
{
    void **pfn = out;
    if (!pfn || !*pfn)
        return;
    /* Attached, a pointer handed out must outlive the library, which the
     * detach unloads: calls through it are not traced. */
    if (rpg__attach_mode())
        return;
    Dl_info info;
    if (!dladdr(*pfn, &info) || !info.dli_sname || info.dli_saddr != *pfn)
        return; /* not the start of a named function: leave it */
    for (uint32_t i = 0; i < rpg_hip_function_count; i++) {
        const rpg_hip_function *f = &rpg_hip_functions[i];
        if (strcmp(rpg_hip_str(f->symbol), info.dli_sname) != 0)
            continue;
        /* The same function our wrapper calls, so the wrapper can stand in. */
        if (rpg_hip_real(i) != *pfn)
            return;
        void *self = self_handle();
        void *w = self ? dlvsym(self, rpg_hip_str(f->symbol), rpg_hip_str(f->version)) : NULL;
        if (w)
            *pfn = w;
        return;
    }
}

/* A fork child writes a new spool, which needs its own copy of the names. */
static void forget_names(void) { rpg_hip_names_recorded = 0; }

static void register_fork_handler(void) { pthread_atfork(NULL, NULL, forget_names); }

void rpg_hip_record_names(void)
{
    /* The fork handler first: a fork between taking the state (2) and
     * registering it (pthread_atfork waits for a fork in progress) left the
     * child at 2, never writing the names into its own spool. */
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_fork_handler);
    int expect = 0;
    if (!__atomic_compare_exchange_n(&rpg_hip_names_recorded, &expect, 2, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return; /* written, or another thread is writing them */
    for (uint32_t i = 0; i < rpg_hip_function_count; i++) {
        const rpg_hip_function *f = &rpg_hip_functions[i];
        const char *name = rpg_hip_str(f->name);
        rpg_record_string(f->domain, i, name, strlen(name));
    }
    __atomic_store_n(&rpg_hip_names_recorded, 1, __ATOMIC_RELEASE);
}

/* rpg_hip_record's uncommon cases: the names not yet in this spool, a new
 * chunk or CLOCK record, ns stamps, a signal handler's nested record. */
void rpg_hip_record_slow(uint32_t domain, uint32_t id, uint64_t corr, uint64_t t0, uint64_t t1,
                         const void *args, uint32_t args_size)
{
    if (__atomic_load_n(&rpg_hip_names_recorded, __ATOMIC_ACQUIRE) != 1)
        rpg_hip_record_names();
    /* 2: t1 came from rpg__stamp_after(t0). */
    rpg__record_api_compact(2, RPG_KIND_HIP_API, domain, id, corr, t0, t1,
                            args_size ? args : NULL, args_size);
}
