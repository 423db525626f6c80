/*
 * attach_pmc.h: counters while attached (attach_pmc.c, docs/attach.md),
 * called by attach_hsa.c's doorbell hook, start, poll and stop.
 */
#ifndef RPG_ATTACH_PMC_H
#define RPG_ATTACH_PMC_H

#include <stdint.h>

/* After the HSA side started: reads the counter program the CLI left
 * beside the attach socket (internal/attach's PMCFile), allocates the
 * counter buffers and a queue of ours per GPU. 0, or a negative errno
 * (the counter domain is then noted unavailable in the spool). Nothing
 * when the pass collects no counters. */
int rpg_attach_pmc_start(void);
/* Non-zero while dispatches are counted. */
int rpg_attach_pmc_on(void);
/* In the doorbell hook, under the app queue's lock, before the real
 * doorbell store announces packet `index` of queue amdq (agent `agent`):
 * moves the kernel dispatch packet `pkt` into our queue between the
 * counters' start, stop and read packets, its completion signal replaced by
 * `timing` (ours), and makes the app's slot a barrier-AND packet that waits
 * for the read and carries `app_signal`. Returns the counting slot (>= 0),
 * or -1 when the dispatch runs as it is, uncounted (counted lost). */
int rpg_attach_pmc_redirect(void *amdq, uint64_t agent, uint64_t index, void *pkt,
                            uint64_t app_signal, uint64_t timing);
/* Packet `index` of amdq is no kernel dispatch: a barrier-AND or -OR packet
 * that follows a moved dispatch is moved along (the app's slot waits for
 * it), any other is only seen. */
void rpg_attach_pmc_move(void *amdq, uint64_t agent, uint64_t index, void *pkt);
/* The dispatch of slot `slot` has its id: its samples can be recorded. */
void rpg_attach_pmc_bind(int slot, uint64_t dispatch_id, uint32_t node);
/* Packet `index` of amdq was looked at and left in place. */
void rpg_attach_pmc_seen(void *amdq, uint64_t index, const void *pkt);
/* The doorbell of amdq announces packets up to `last`. */
void rpg_attach_pmc_rung(void *amdq, uint64_t last);
/* The app destroys queue amdq. */
void rpg_attach_pmc_queue_gone(void *amdq);
/* The control thread: records the samples of completed slots. */
void rpg_attach_pmc_poll(void);
/* Before the HSA side stops: waits (bounded) for the counted dispatches in
 * flight, records them, gives back buffers, signals and queues. Returns
 * the dispatches that went uncounted (lost); *edge the first dispatches of
 * queues that went uncounted as the packets before them, submitted before
 * the attach, may still have run (the window's edge, not a loss). */
uint64_t rpg_attach_pmc_stop(uint64_t *edge);

#endif
