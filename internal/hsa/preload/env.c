/*
 * env.c: rpg_env, the one reader of the environment contract in the preload
 * library (rpg_attach.h). Launch mode: the process's environment. Attach
 * mode: the configuration file the CLI wrote, which attach.c publishes here
 * for as long as the attach lasts (the app's own environment is not the
 * run's, and the library must not change it). A file of its own so that the
 * recorder builds without the rest of attach mode (spooltest's native
 * build).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "attach_internal.h"

rpg_env_table *rpg__env_table;

int rpg__attach_mode(void) { return __atomic_load_n(&rpg__env_table, __ATOMIC_ACQUIRE) != NULL; }

const char *rpg_env(const char *name)
{
    const rpg_env_table *c = __atomic_load_n(&rpg__env_table, __ATOMIC_ACQUIRE);
    if (!c)
        return getenv(name);
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->names[i], name) == 0)
            return c->values[i];
    return NULL;
}
