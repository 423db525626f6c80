/*
 * roctx_regions.h: region control shared by the ROCTx interposers
 * (roctx_interpose.c) and roctx_regions.c.
 */
#ifndef RPG_ROCTX_REGIONS_H
#define RPG_ROCTX_REGIONS_H

#include "rpg_internal.h"

/* roctxProfilerResume(tid) (on = 1) or roctxProfilerPause(tid) (on = 0):
 * with marker tracing any call switches recording (rocprofv3 stops its
 * context); otherwise, under --selected-regions, a process-wide (tid 0)
 * call does. */
RPG_HIDDEN void rpg_regions_select(uint64_t tid, int on);

/* Nonzero between a roctxProfilerPause and the next Resume under marker
 * tracing: ROCTx calls then record nothing. */
RPG_HIDDEN int rpg_regions_paused(void);

#endif /* RPG_ROCTX_REGIONS_H */
