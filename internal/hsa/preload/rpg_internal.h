/*
 * rpg_internal.h: declarations shared by the preload library's own sources,
 * not exported to the shim or the interposers.
 */
#ifndef RPG_INTERNAL_H
#define RPG_INTERNAL_H

#include "rpg_recorder.h"

#define RPG_HIDDEN __attribute__((visibility("hidden")))


#endif /* RPG_INTERNAL_H */
