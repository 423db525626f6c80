/*
 * hsa_init.c: notes in the spool, once per process, that the HSA runtime
 * was initialised (RPG_STATUS_HSA_INIT).
 *
 * The shim notes that it attached (or declined) from OnLoad, which the
 * runtime calls inside hsa_init. A process whose spool says hsa_init ran
 * but not that the shim attached lost every domain the shim collects
 * (kernels, copies, HSA calls, counters): the runtime did not load
 * HSA_TOOLS_LIB, or refused it. The CLI reports that instead of writing
 * files that look complete (docs/shim.md, "lost domains").
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "rpg_internal.h"

/* hsa_status_t is an enum: an int in the ABI. */
typedef int (*hsa_init_fn)(void);

static int noted; /* atomic; a fork child keeps the parent's spool name, not its notes */

static void forget(void) { __atomic_store_n(&noted, 0, __ATOMIC_RELAXED); }

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
    return f();
}
