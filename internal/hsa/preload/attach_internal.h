/*
 * attach_internal.h: what the preload library's files share about attach
 * mode (rpg_attach.h is the contract with the HSA side and the CLI; this is
 * the library's own wiring). Hidden, none of it is exported.
 */
#ifndef RPG_ATTACH_INTERNAL_H
#define RPG_ATTACH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "rpg_attach.h"

#define RPG_ATTACH_HIDDEN __attribute__((visibility("hidden")))

/* env.c: the configuration of an attach (attach.c reads it), NULL in
 * launch mode; rpg_env answers from it when set. */
typedef struct rpg_env_table {
    size_t map_len; /* the one mapping it and its strings live in */
    size_t n;
    const char **names;
    const char **values;
} rpg_env_table;
extern RPG_ATTACH_HIDDEN rpg_env_table *rpg__env_table;

/* attach.c */

/* The library's own reads of rpg_attach_active go to this hidden alias (a
 * direct load, not one through the GOT). */
extern RPG_ATTACH_HIDDEN int rpg__attach_active;
/* env.c: nonzero while an attach's configuration is in place: real
 * functions are then looked up in their defining modules, never with
 * RTLD_NEXT. */
RPG_ATTACH_HIDDEN int rpg__attach_mode(void);
/* The library's own handle (dlopen RTLD_NOLOAD of its own file, once; the
 * reference is counted and given back when an attached library unloads). */
RPG_ATTACH_HIDDEN void *rpg__self_handle(void);
/* The loaded range (lowest to highest end of its PT_LOAD segments) of the
 * module whose segments hold p: 1 and *lo, *hi set, or 0 when no loaded
 * module holds it. */
RPG_ATTACH_HIDDEN int rpg__module_range(const void *p, uintptr_t *lo, uintptr_t *hi);
/* Nonzero when p lies in one of this library's loaded segments. */
RPG_ATTACH_HIDDEN int rpg__in_self(const void *p);
/* Looks `name` (@`version` when not NULL) up in the module that defines it
 * for the modules that import it: the global scope, then each loaded module
 * in load order, never this library. NULL when no module defines it. */
RPG_ATTACH_HIDDEN void *rpg__attach_lookup(const char *name, const char *version);

/* recorder.c */

/* The recorder's set-up from the environment contract (rpg_env): the
 * constructor's body (attach 0: launch mode, as ever) or attach mode's
 * (attach 1: a spool directory is required, -EINVAL without one). */
RPG_ATTACH_HIDDEN int rpg__recorder_setup(int attach);
/* Nonzero when the constructor found the spool directory: LD_PRELOAD's
 * launch mode, which an attach must not disturb. */
RPG_ATTACH_HIDDEN int rpg__recorder_launch_mode(void);
/* Ends the spool of an attach: no new record, the pre-faulting helper
 * stopped (joined), the thread-exit key deleted; with unmap, every segment
 * unmapped and the descriptor closed (the CLI reads the file after). Without
 * unmap (threads may still be inside a wrapper) the mappings stay. */
RPG_ATTACH_HIDDEN void rpg__recorder_finish(int unmap);
/* A fork child of an attached process: records nothing from here on. */
RPG_ATTACH_HIDDEN void rpg__recorder_child_off(void);

/* hip_trace.c */
RPG_ATTACH_HIDDEN void rpg__hip_args_setup(void);
/* Fills out[] with a hook per HIP function the library wraps (name and
 * version of libamdhip64's symbol, the wrapper exported under both, the real
 * function's slot); returns how many (at most cap). */
RPG_ATTACH_HIDDEN size_t rpg__hip_hooks(rpg_hook *out, size_t cap);

/* rccl_trace.c */
RPG_ATTACH_HIDDEN size_t rpg__rccl_hooks(rpg_hook *out, size_t cap);

/* roctx_interpose.c */
RPG_ATTACH_HIDDEN size_t rpg__roctx_hooks(rpg_hook *out, size_t cap);
/* Its fork handler, under marker tracing (once per load). */
RPG_ATTACH_HIDDEN void rpg__roctx_setup(void);
/* roctx_regions.c: --selected-regions and --collection-period from the
 * contract. Attach mode has no period timer: -ENOTSUP when one is asked. */
RPG_ATTACH_HIDDEN int rpg__regions_setup(int attach);

/* notes.c: closes the notes descriptor the library opened itself. */
RPG_ATTACH_HIDDEN void rpg__notes_finish(void);

/* attach_got.c: the loader's count of modules loaded so far (dlpi_adds),
 * to notice dlopen since the last patch. */
RPG_ATTACH_HIDDEN unsigned long long rpg__got_adds(void);
/* Forgets every saved slot without writing any (a fork child's copy after
 * its restore). */
RPG_ATTACH_HIDDEN void rpg__got_forget(void);
/* In a fork child: the lock the parent's control thread may have held. */
RPG_ATTACH_HIDDEN void rpg__got_after_fork(void);

/* attach_table.c: HSA API tracing, memory allocations and scratch memory
 * through the runtime's own HSA API table (docs/attach.md). Start, when
 * one of those domains is on: finds and verifies the tables and wraps their
 * slots; 0, or a negative errno with the run's one-line error in err (the
 * table was not found or did not match: nothing was written). Restore, at
 * the detach before the in-flight wait (and in a fork child): every slot
 * that still holds our wrapper gets its old value back; returns how many. */
RPG_ATTACH_HIDDEN int rpg__table_start(char *err, size_t errlen);
RPG_ATTACH_HIDDEN int rpg__table_restore(void);
/* The runtime's own function `name` as its table held it when found (NULL
 * when the table is not in use): attach_hsa.c's calls for itself go there,
 * unrecorded. */
RPG_ATTACH_HIDDEN void *rpg__table_original(const char *name);

/* attach_hsa.c: the id attach mode gave an app queue (hsa_queue_t *) and its
 * agent's node; 0 when it has not seen the queue. */
RPG_ATTACH_HIDDEN int rpg__attach_queue_identify(const void *queue, uint64_t *id, uint32_t *node);

/* Brackets for wrappers: enter when attached, leave when entered. */
#define RPG_ATTACH_ENTER()                                                                     \
    do {                                                                                       \
        if (__builtin_expect(rpg__attach_active, 0))                                           \
            rpg_attach_enter();                                                                \
    } while (0)
#define RPG_ATTACH_LEAVE()                                                                     \
    do {                                                                                       \
        if (__builtin_expect(rpg__attach_active, 0))                                           \
            rpg_attach_leave();                                                                \
    } while (0)

/* attach_copy.c: memory copies while attached (--memory-copy-trace). The
 * hooks of the async-copy functions (none unless the domain is on); start
 * before the slots are patched (async-copy profiling on, the agents); the
 * poll next to the HSA side's; the signal-store and destroy hooks of
 * attach_hsa.c call signal_reset before the app's store; detaching right
 * before the slots are restored (the app's profiling wish put back); stop
 * before the HSA side's (its wait polls the dispatches too): returns the
 * copies it could not time. */
RPG_ATTACH_HIDDEN size_t rpg__attach_copy_hooks(rpg_hook *out, size_t cap);
RPG_ATTACH_HIDDEN int rpg__attach_copy_start(void);
RPG_ATTACH_HIDDEN void rpg__attach_copy_poll(void);
RPG_ATTACH_HIDDEN void rpg__attach_copy_signal_reset(uint64_t sig);
RPG_ATTACH_HIDDEN void rpg__attach_copy_detaching(void);
RPG_ATTACH_HIDDEN uint64_t rpg__attach_copy_stop(void);
/* The last stop's account, "lost=N running_at_detach=N CLASS=N..." ("" when
 * copies were not traced): the control thread's "copies <pid> ..." line. */
RPG_ATTACH_HIDDEN const char *rpg__attach_copy_account(void);

#endif /* RPG_ATTACH_INTERNAL_H */
