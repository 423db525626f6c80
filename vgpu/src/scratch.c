/* Dynamic scratch, the command processor's part.
 *
 * ROCR creates the queues of a discrete GPU without scratch (HIP asks for the
 * default private segment size, which is 0 for a dGPU's base profile) and
 * lets the command processor ask for it when a dispatch needs it, as the CP
 * firmware does:
 *
 *   1. Before a kernel dispatch, the CP compares the packet's
 *      private_segment_size (bytes per work-item) with what the queue holds:
 *      amd_queue_t.scratch_wave64_lane_byte_size is the per-lane size for a
 *      64-lane wave (a 32-lane wave gets twice as much per lane).
 *   2. When it is too small, the CP leaves the packet in the ring
 *      (read_dispatch_id at it), stores an error code in the queue's
 *      queue_inactive_signal and raises the signal's interrupt (mailbox and
 *      event, as for a completion signal). The code is 1 for a wave64
 *      dispatch; a wave32 one also sets 0x400. ROCR's queue event handler
 *      treats any of 0x401 as "insufficient scratch" and 0x400 as "the
 *      dispatch runs 32 lanes per wave".
 *   3. ROCR's handler (on its async-events thread) reads the packet at
 *      read_dispatch_id, sizes and maps the scratch, rewrites the queue's
 *      scratch fields (SRD, backing location and size, wave64 lane size,
 *      tmpring) and stores 0 in the signal: the CP looks again and runs the
 *      packet. ROCR 6.1+ tells tools through its ToolsApiTable
 *      (alloc_start/alloc_end around this).
 *   4. When ROCR made the allocation a use-once one (too large to keep bound
 *      to the queue), it sets AMD_QUEUE_PROPERTIES_USE_SCRATCH_ONCE. After
 *      the one dispatch that runs on it, the CP hands it back: code 512 on
 *      the same signal, and ROCR's handler frees it (free_start/free_end),
 *      clears the queue's scratch fields and the property, and stores 0.
 *
 * Here step 4 happens before the dispatch's completion signal, so a program
 * that saw its kernel finish also sees the scratch released. ROCR answers
 * within microseconds; while it has not, the queue stays stopped (a runtime
 * that cannot find the memory reports the queue error itself and never
 * stores 0, and the queue stays stopped as on hardware). */
#define _GNU_SOURCE
#include "scratch.h"

#include <hsa/amd_hsa_signal.h>
#include <hsa/hsa.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vgpu.h"

enum {
  SCRATCH_INSUFFICIENT = 0x1,  /* wave64 dispatch */
  SCRATCH_WAVE32 = 0x400,      /* with SCRATCH_INSUFFICIENT: a wave32 dispatch */
  SCRATCH_RECLAIM_ONCE = 512,  /* use-once scratch handed back */
};

static int64_t inactive_value(const amd_queue_t *amd) {
  if (!amd->queue_inactive_signal.handle) return 0;
  const amd_signal_t *s = vgpu_host(amd->queue_inactive_signal.handle);
  return __atomic_load_n(&s->value, __ATOMIC_ACQUIRE);
}

/* Stores code in the queue's inactive signal and raises its interrupt. */
static bool raise_code(amd_queue_t *amd, int64_t code) {
  if (!amd->queue_inactive_signal.handle) return false;
  amd_signal_t *s = vgpu_host(amd->queue_inactive_signal.handle);
  __atomic_store_n(&s->value, code, __ATOMIC_RELEASE);
  if (s->event_mailbox_ptr) {
    __atomic_store_n((uint64_t *)vgpu_host(s->event_mailbox_ptr), (uint64_t)s->event_id, __ATOMIC_RELEASE);
    vgpu_event_signal_id(s->event_id);
  }
  return true;
}

/* Lanes per wave of the dispatch: the architecture's default, or on gfx10+
 * what the kernel descriptor asks for (ENABLE_WAVEFRONT_SIZE32). */
static unsigned wave_lanes(uint64_t kernel_object) {
  unsigned lanes = vgpu_cfg.arch->wave_size;
  if (vgpu_cfg.arch->gfx_level >= 10 && kernel_object && vgpu_mem_known(kernel_object, 64, false)) {
    uint16_t props;
    memcpy(&props, (const uint8_t *)vgpu_host(kernel_object) + 56, 2);
    lanes = (props & (1u << 10)) ? 32 : 64;
  }
  return lanes;
}

bool vgpu_scratch_ready(struct vgpu_scratch *s, amd_queue_t *amd, unsigned queue_id, uint64_t index,
                        const void *packet) {
  if (s->waiting) {
    if (inactive_value(amd) != 0) return false; /* ROCR has not answered yet */
    s->waiting = 0;
  }
  const hsa_kernel_dispatch_packet_t *p = packet;
  s->once = false;
  if (!p->private_segment_size) return true;
  unsigned lanes = wave_lanes(p->kernel_object);
  uint64_t have = (uint64_t)__atomic_load_n(&amd->scratch_wave64_lane_byte_size, __ATOMIC_ACQUIRE) * 64 / lanes;
  if (p->private_segment_size <= have) {
    s->once = (__atomic_load_n(&amd->queue_properties, __ATOMIC_ACQUIRE) & AMD_QUEUE_PROPERTIES_USE_SCRATCH_ONCE) != 0;
    return true;
  }
  int64_t code = SCRATCH_INSUFFICIENT | (lanes == 32 ? SCRATCH_WAVE32 : 0);
  if (!raise_code(amd, code)) {
    vgpu_error("queue %u packet %llu needs %u bytes of scratch per lane, and the queue has no inactive signal "
               "to ask for it: run without scratch", queue_id, (unsigned long long)index, p->private_segment_size);
    return true;
  }
  s->waiting = (uint64_t)code;
  s->requests++;
  vgpu_logf("{\"type\":\"scratch_request\",\"pid\":%d,\"queue\":%u,\"index\":%llu,\"private_segment\":%u,"
            "\"wave_size\":%u,\"have\":%llu,\"code\":%lld}",
            (int)getpid(), queue_id, (unsigned long long)index, p->private_segment_size, lanes,
            (unsigned long long)have, (long long)code);
  return false;
}

void vgpu_scratch_dispatch_done(struct vgpu_scratch *s, amd_queue_t *amd, unsigned queue_id,
                                volatile bool *stop) {
  if (!s->once) return;
  s->once = false;
  if (!raise_code(amd, SCRATCH_RECLAIM_ONCE)) return;
  vgpu_logf("{\"type\":\"scratch_reclaim\",\"pid\":%d,\"queue\":%u,\"code\":%d}", (int)getpid(), queue_id,
            SCRATCH_RECLAIM_ONCE);
  /* ROCR's handler runs on its async-events thread within microseconds. */
  struct timespec ts = {0, 20000};
  while (inactive_value(amd) == SCRATCH_RECLAIM_ONCE && !*stop) nanosleep(&ts, NULL);
}
