/*
 * attach_pcs.h: PC sampling while attached (attach_pcs.c, docs/attach.md),
 * called by attach_hsa.c's start, doorbell hook and stop.
 */
#ifndef RPG_ATTACH_PCS_H
#define RPG_ATTACH_PCS_H

#include <stdint.h>

/* The runtime's functions attach_hsa.c found (the HSA table's originals). */
typedef struct rpg_pcs_runtime {
    void *runtime; /* dlopen handle of libhsa-runtime64 */
    int (*iterate_agents)(int (*)(uint64_t, void *), void *);
    int (*agent_get_info)(uint64_t, int, void *);
    int (*queue_get_info)(void *, int, void *);
} rpg_pcs_runtime;

/* When the pass asks for PC sampling (ROCPROF_PC_SAMPLING_METHOD in the
 * attach configuration): one session per GPU agent offering the method and
 * unit, started. Turns the kernel domain on (the samples are matched to
 * dispatches). 0, nothing asked, or a negative errno with the reason noted
 * in the spool (RPG_STATUS_PC_SAMPLING_BIT). */
int rpg__attach_pcs_start(const rpg_pcs_runtime *rt);
/* Non-zero while sessions run. */
int rpg__attach_pcs_on(void);
/* In the doorbell hook: dispatch `dispatch_id` of node `node` is packet
 * `index` of the app's hardware queue amdq: records its trap correlation
 * id (PC_SAMPLE_DISPATCH). */
void rpg__attach_pcs_dispatch(void *amdq, uint64_t index, uint64_t dispatch_id, uint32_t node);
/* At the detach, before the hooks go: stops the sessions (what they
 * sampled stays for the flush) and the dispatch records. */
void rpg__attach_pcs_detaching(void);
/* Once the window's dispatches settled: stops (if not yet), flushes and
 * destroys the sessions (their last samples reach the spool). */
void rpg__attach_pcs_stop(void);

#endif
