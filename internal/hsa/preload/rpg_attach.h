/*
 * rpg_attach.h: attach mode of the preload library (docs/attach.md).
 *
 * In launch mode the library is in LD_PRELOAD and its wrappers interpose
 * by symbol. In attach mode the CLI loads it into a running process with
 * dlopen (internal/inject, through ptrace) and calls rpg_attach_start: the
 * wrappers then reach the app through the GOT slots of every loaded module,
 * which attach_got.c redirects and, at detach, restores to the exact values
 * it found. attach.c owns the control thread, the configuration and the
 * protocol with the CLI; attach_hsa.c owns what the shim does in launch
 * mode but for queues that already exist (dispatch records, code objects,
 * agents), in C, as no Go runtime can leave a process again.
 */
#ifndef RPG_ATTACH_H
#define RPG_ATTACH_H

#include <stddef.h>
#include <stdint.h>

/* One imported function to redirect: every GOT slot (JUMP_SLOT or
 * GLOB_DAT) of any loaded module, other than the module defining it and
 * this library, that names `name` is pointed at `wrapper`. `*real` is set
 * before any slot is written, to the definition the app's modules bind to
 * (looked up in the defining module, so RTLD_LOCAL loads work too). */
typedef struct rpg_hook {
    const char *name;
    void *wrapper;
    void **real;
    /* The symbol version the wrapper stands for (HIP's hip_4.2, ...): a
     * slot whose module requires another version of `name` is left alone.
     * NULL: any version (or none). */
    const char *version;
} rpg_hook;

/* attach.c: exported, called by the CLI through ptrace once the library is
 * loaded. Reads the configuration file (NAME=VALUE lines: the ROCPROF_*
 * environment contract plus RPG_ENV_ATTACH_SOCKET), starts the control
 * thread and returns at once: 0, or a negative errno (-EALREADY when the
 * process is already profiled, by LD_PRELOAD or by an earlier attach). The
 * control thread installs the hooks, reports "ready" or "error <text>" on
 * the socket, and on "detach" or EOF (the CLI is gone) restores everything,
 * reports "detached ..." and unloads the library. Whatever it returns, the
 * library keeps the caller's dlopen reference and gives it back itself (at
 * the unload, or at once from a thread of its own when it refused): the
 * caller never dlcloses the handle. */
int rpg_attach_start(const char *conf_path);

/* Nonzero while attached (the wrappers then count themselves in flight). */
extern int rpg_attach_active;
/* Every wrapper entered through a redirected slot brackets its body with
 * these, so that detach waits until no thread runs the library's code
 * before it unloads it. */
void rpg_attach_enter(void);
void rpg_attach_leave(void);

/* The configuration value of `name` in attach mode, getenv(name) in launch
 * mode: every reader of the environment contract in the library goes
 * through it. */
const char *rpg_env(const char *name);

/* attach_got.c: redirect / restore the GOT slots of every loaded module.
 * rpg_got_patch returns the number of slots written, or a negative errno;
 * rpg_got_restore writes back every value it saved and returns how many. */
int rpg_got_patch(const rpg_hook *hooks, size_t n);
int rpg_got_restore(void);

/* attach_hsa.c: the HSA side while attached. */
extern const rpg_hook rpg_attach_hsa_hooks[];
extern const size_t rpg_attach_hsa_nhooks;
/* After the hooks are installed: agents, the code objects already loaded,
 * the queues already seen. 0 or a negative errno. */
int rpg_attach_hsa_start(void);
/* Called by the control thread about every millisecond: completions. */
void rpg_attach_hsa_poll(void);
/* After the slots are restored: waits (bounded) for the dispatches in
 * flight, gives back every signal and queue setting it changed, and
 * returns how many dispatches of the window it could not time (lost; one
 * still running when the wait ends is the window's edge, not lost). */
uint64_t rpg_attach_hsa_stop(void);
/* The last stop's account of the kernel dispatches: "lost=N
 * in_flight_at_attach=N running_at_detach=N" then " CLASS=N" for each class
 * of the lost that is not 0 (past, unstamped, reused, nomem, destroyed,
 * missed, unseen, overwritten, uncounted); the control thread says it as
 * "dispatches <pid> <account>" before "detached". */
const char *rpg_attach_hsa_losses(void);

#endif
