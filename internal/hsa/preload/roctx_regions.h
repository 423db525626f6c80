/*
 * roctx_regions.h: region control shared by the ROCTx interposers
 * (roctx_interpose.c) and roctx_regions.c.
 */
#ifndef RPG_ROCTX_REGIONS_H
#define RPG_ROCTX_REGIONS_H

#include "rpg_internal.h"

/* roctxProfilerResume(tid) (on = 1) or roctxProfilerPause(tid) (on = 0):
 * under --selected-regions a process-wide (tid 0) call switches recording. */
RPG_HIDDEN void rpg_regions_select(uint64_t tid, int on);

#endif /* RPG_ROCTX_REGIONS_H */
