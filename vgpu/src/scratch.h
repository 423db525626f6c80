/* Dynamic scratch: the command processor's side of ROCR's scratch protocol
 * (scratch.c). A queue starts without scratch; a dispatch that needs more
 * private memory per lane than the queue's amd_queue_t describes stops the
 * queue and asks ROCR for it through the queue's inactive signal. */
#ifndef VGPU_SCRATCH_H
#define VGPU_SCRATCH_H

#include <hsa/amd_hsa_queue.h>
#include <stdbool.h>
#include <stdint.h>

struct vgpu_scratch {
  uint64_t waiting;  /* code raised on the inactive signal, 0: none outstanding */
  bool once;         /* the dispatch let through runs on use-once scratch */
  uint64_t requests; /* for the log */
};

/* Called before a kernel dispatch packet is processed: true when the queue
 * has the scratch the packet needs; false while ROCR is asked for it (the
 * packet stays in the ring and is looked at again). */
bool vgpu_scratch_ready(struct vgpu_scratch *s, amd_queue_t *amd, unsigned queue_id, uint64_t index,
                        const void *packet);

/* Called after a dispatch ran, before its completion signal: when it ran on
 * use-once scratch, hands that scratch back to ROCR and waits until ROCR took
 * it (or the queue is being destroyed). */
void vgpu_scratch_dispatch_done(struct vgpu_scratch *s, amd_queue_t *amd, unsigned queue_id,
                                volatile bool *stop);

#endif
