/* Queues and the software command processor. CREATE_QUEUE hands over a
 * ring and its read/write pointers (for AQL, fields of ROCR's amd_queue_t);
 * every queue gets its own thread so a queue blocked on a barrier or busy
 * with a long kernel never stalls another. Doorbells are plain stores that
 * no kernel sees, so idle threads poll them, backing off from microseconds
 * to a parked state (see "idling"). Every address a packet holds is a GPU
 * address, turned into a CPU one by vgpu_host().
 *
 * An AQL queue's packets are consumed only up to its doorbell, as AMD's
 * packet processor fetches them: the runtime stores the index of the last
 * packet it submitted into the queue's 64-bit doorbell (the slot of the
 * GPU's doorbell page at queue id x 8, which the thunk maps through
 * /dev/kfd), after writing the packet's header. The slot holds UINT64_MAX
 * from the queue's creation until the first store. The thread processes
 * indices below `rung` (the highest index stored + 1: a producer that rings
 * an older index after another rang a newer one does not take back what
 * was announced), and a packet announced but still INVALID is waited for,
 * in order. A packet whose header is valid but that no doorbell announced
 * yet stays in the ring, untouched.
 *
 * One thing the hardware sees that a poll cannot: every store. A queue of
 * several producers (HSA_QUEUE_TYPE_MULTI: HIP's streams sharing a queue)
 * may ring an older index right after another rang a newer one ("the
 * doorbell signal value can be updated with any value"), and a packet
 * processor must still run the newer packet; the poll may have seen only
 * the older value. So a packet whose header has been valid, unannounced,
 * for UNRUNG_AFTER_NS is taken as announced (counted: `doorbell_late` in
 * the packet log). A producer rings right after writing the header, so
 * this only happens when a store was overwritten unseen, or the producer
 * stood still that long between the two. */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <hsa/amd_hsa_queue.h>
#include <hsa/amd_hsa_signal.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kfd_uapi.h"
#include "scratch.h"
#include "vgpu.h"

struct vgpu_queue {
  uint32_t id; /* KFD queue id, per process */
  unsigned gpu;
  bool aql;
  volatile bool active;
  volatile bool stop;
  pthread_t thread;
  uint8_t *ring;
  uint64_t ring_bytes;
  /* AQL */
  amd_queue_t *amd;
  volatile uint64_t *doorbell; /* the queue's slot of the doorbell page */
  volatile uint64_t rung;      /* packets below this index were announced */
  uint64_t unrung_since;       /* ns: the packet at the read index valid, not announced */
  uint64_t late;               /* packets taken after UNRUNG_AFTER_NS (the packet log) */
  struct vgpu_scratch scratch; /* dynamic scratch requests (scratch.c) */
  /* SDMA: 64-bit byte offsets in the thunk's memory */
  volatile uint64_t *rptr, *wptr;
  uint64_t packets; /* processed, for the log */
  uint64_t cpu_ns;  /* the thread's CPU time when it ended (ROCPROF_VGPU_STATS) */
  volatile uint32_t parked;
  struct vgpu_queue *next;
};

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static struct vgpu_queue *queues;
/* ROCPROF_VGPU_STATS: the destroyed queues' threads, summed (under qlock). */
static uint64_t gone_aql_ns, gone_aql_packets, gone_sdma_ns, gone_sdma_packets;
#define MAX_QUEUES 1024 /* KFD's per-process limit, one doorbell each */
static uint8_t qid_used[MAX_QUEUES];
static bool watcher_started;

/* --- idling --------------------------------------------------------------
 * A queue that finds no work first yields the CPU for YIELD_FOR_NS (the next
 * packet of a launch loop usually arrives within that), then sleeps 10 us at
 * a time for its first 1 ms idle (a stream of launches keeps latency low),
 * then 100 us until 20 ms idle, and then parks on a futex. One watcher thread
 * for the whole process checks the parked queues every 2 ms and wakes those
 * with work, so an idle virtual GPU costs ~500 wake-ups a second however many
 * queues exist.
 *
 * Why yield first: on the VMs this runs on a 10 us nanosleep costs ~17 us of
 * CPU and returns after ~55 us, while a sched_yield costs ~0.2 us and lets
 * the app's threads run. Counter collection makes a queue go idle between
 * every counted dispatch (the app thread's intercept path is slower than the
 * emulated command processor), and those sleeps were most of what the
 * virtual GPU spent per counted dispatch. */

struct backoff {
  uint64_t idle_since; /* ns, 0 = busy */
};

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define PARK_AFTER_NS 20000000ull
#define UNRUNG_AFTER_NS 10000000ull /* a valid packet no doorbell announced (see the top) */
#define YIELD_FOR_NS 20000ull
#define WATCH_PERIOD_NS 2000000L

static void futex_wait(volatile uint32_t *w, uint32_t v) {
  syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}
static void futex_wake(volatile uint32_t *w) { syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); }

static void park(struct vgpu_queue *q) {
  __atomic_store_n(&q->parked, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(&q->parked, __ATOMIC_SEQ_CST) && !q->stop) futex_wait(&q->parked, 1);
}

static void backoff_wait(struct vgpu_queue *q, struct backoff *b) {
  uint64_t now = mono_ns();
  if (!b->idle_since) b->idle_since = now;
  uint64_t idle = now - b->idle_since;
  if (idle >= PARK_AFTER_NS) {
    park(q);
    return;
  }
  if (idle < YIELD_FOR_NS) {
    sched_yield();
    return;
  }
  struct timespec ts = {0, idle < 1000000ull ? 10000 : 100000};
  nanosleep(&ts, NULL);
}

static void backoff_reset(struct backoff *b) { b->idle_since = 0; }

/* The number of packets the doorbell announced: one past the highest index
 * stored (UINT64_MAX: none yet), never less than before. */
static uint64_t doorbell_rung(struct vgpu_queue *q) {
  uint64_t db = __atomic_load_n(q->doorbell, __ATOMIC_ACQUIRE);
  uint64_t rung = __atomic_load_n(&q->rung, __ATOMIC_RELAXED);
  if (db != UINT64_MAX && db + 1 > rung) rung = db + 1;
  return rung;
}

/* Whether a queue has something to look at (a valid header at the read
 * index: announced, or to be timed as not announced). */
static bool has_work(struct vgpu_queue *q) {
  if (!q->active) return false;
  if (q->aql) {
    uint64_t rd = __atomic_load_n(&q->amd->read_dispatch_id, __ATOMIC_ACQUIRE);
    uint8_t *slot = q->ring + (rd % (q->ring_bytes / 64)) * 64;
    return (__atomic_load_n((uint16_t *)slot, __ATOMIC_ACQUIRE) & 0xff) != HSA_PACKET_TYPE_INVALID;
  }
  return __atomic_load_n(q->rptr, __ATOMIC_ACQUIRE) < __atomic_load_n(q->wptr, __ATOMIC_ACQUIRE);
}

static void *watcher(void *arg) {
  (void)arg;
  prctl(PR_SET_NAME, "vgpu-watch", 0, 0, 0);
  for (;;) {
    struct timespec ts = {0, WATCH_PERIOD_NS};
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&qlock);
    for (struct vgpu_queue *q = queues; q; q = q->next)
      if (__atomic_load_n(&q->parked, __ATOMIC_SEQ_CST) && has_work(q)) {
        __atomic_store_n(&q->parked, 0, __ATOMIC_SEQ_CST);
        futex_wake(&q->parked);
      }
    pthread_mutex_unlock(&qlock);
  }
  return NULL;
}

static void start_watcher(void) {
  pthread_t t;
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  pthread_create(&t, &a, watcher, NULL);
  pthread_attr_destroy(&a);
}

/* --- signals ------------------------------------------------------------- */

void vgpu_signal_complete(uint64_t handle, bool profiling, uint64_t start, uint64_t end) {
  if (!handle) return;
  amd_signal_t *s = vgpu_host(handle);
  if (profiling) {
    if (end <= start) end = start + 1;
    s->start_ts = start;
    s->end_ts = end;
  }
  __atomic_fetch_sub(&s->value, 1, __ATOMIC_ACQ_REL);
  if (s->event_mailbox_ptr) {
    __atomic_store_n((uint64_t *)vgpu_host(s->event_mailbox_ptr), (uint64_t)s->event_id, __ATOMIC_RELEASE);
    vgpu_event_signal_id(s->event_id);
  }
}

static int64_t signal_value(uint64_t handle) {
  amd_signal_t *s = vgpu_host(handle);
  return __atomic_load_n(&s->value, __ATOMIC_ACQUIRE);
}

/* --- AQL ----------------------------------------------------------------- */

enum { DONE, NOT_READY };

/* Real mode: kernels with less than this left are busy-waited, not slept. */
#define SPIN_BELOW_NS 100000ull

/* Virtual mode: fixed cost of a packet that is not a kernel. */
#define VIRTUAL_PACKET_NS 1000

/* ROCPROF_VGPU_KERNEL_SCALE: the first rule whose glob matches the name
 * (and whose grid size, if it gives one, is the dispatch's). */
static double name_scale(const char *name, uint64_t grid_x) {
  if (!name) return 1.0;
  for (unsigned i = 0; i < vgpu_cfg.nscale; i++)
    if ((!vgpu_cfg.scale[i].grid_x || vgpu_cfg.scale[i].grid_x == grid_x) &&
        !fnmatch(vgpu_cfg.scale[i].pattern, name, 0))
      return vgpu_cfg.scale[i].factor;
  return 1.0;
}

static int dispatch(struct vgpu_queue *q, uint64_t idx, const hsa_kernel_dispatch_packet_t *p,
                    bool profiling) {
  struct vgpu_dispatch_info d;
  memset(&d, 0, sizeof d);
  d.kernel_object = p->kernel_object;
  d.grid[0] = p->grid_size_x;
  d.grid[1] = p->grid_size_y ? p->grid_size_y : 1;
  d.grid[2] = p->grid_size_z ? p->grid_size_z : 1;
  d.wg[0] = p->workgroup_size_x ? p->workgroup_size_x : 1;
  d.wg[1] = p->workgroup_size_y ? p->workgroup_size_y : 1;
  d.wg[2] = p->workgroup_size_z ? p->workgroup_size_z : 1;
  d.wave_size = vgpu_cfg.arch->wave_size;
  const uint8_t *kd = vgpu_host(p->kernel_object);
  bool kd_ok = p->kernel_object && vgpu_mem_known(p->kernel_object, 64, false);
  if (kd_ok) {
    uint32_t rsrc1;
    memcpy(&d.lds, kd + 0, 4);
    memcpy(&d.scratch, kd + 4, 4);
    memcpy(&d.kernarg_size, kd + 8, 4);
    memcpy(&rsrc1, kd + 48, 4);
    d.vgprs = rsrc1 & 0x3f;
    d.sgprs = (rsrc1 >> 6) & 0xf;
    if (vgpu_cfg.arch->gfx_level >= 10) {
      uint16_t props;
      memcpy(&props, kd + 56, 2);
      d.wave_size = (props & (1u << 10)) ? 32 : 64;
    }
  }
  if (p->group_segment_size > d.lds) d.lds = p->group_segment_size;
  uint64_t wgs = 1;
  for (int i = 0; i < 3; i++) wgs *= (d.grid[i] + d.wg[i] - 1) / d.wg[i];
  uint64_t wgsize = (uint64_t)d.wg[0] * d.wg[1] * d.wg[2];
  d.workgroups = wgs;
  d.workitems = (uint64_t)d.grid[0] * d.grid[1] * d.grid[2];
  d.waves = wgs * ((wgsize + d.wave_size - 1) / d.wave_size);
  const struct vgpu_kernel *k = vgpu_kernel_info(p->kernel_object);
  d.name = k ? k->name : NULL;
  double f = name_scale(d.name, d.grid[0]);
  d.duration_ns = (uint64_t)((double)(vgpu_cfg.kernel_base_ns + vgpu_cfg.kernel_wave_ns * d.waves) * f);

  uint64_t start_ns;
  if (vgpu_cfg.clock == VGPU_CLOCK_VIRTUAL) start_ns = vgpu_virtual_advance(d.duration_ns);
  else start_ns = vgpu_now_ns();
  const char *emu = vgpu_blit_emulate(p->kernel_object, k, p->kernarg_address ? vgpu_host((uint64_t)(uintptr_t)p->kernarg_address) : NULL, &d);
  vgpu_perf_on_dispatch(q->gpu, &d);
  uint64_t end_ns = start_ns + d.duration_ns;
  if (vgpu_pcs_active(q->gpu)) vgpu_pcs_dispatch(q->gpu, q->id, q->ring_bytes / 64, idx, &d, start_ns, end_ns);
  if (vgpu_cfg.clock == VGPU_CLOCK_REAL) {
    /* The kernel "runs" until its modelled end: short remainders are spun
     * (a sleep costs ~50 us here, far more than a tiny kernel), long ones
     * slept. Emulation work that overran the model moves the end out. */
    uint64_t now = vgpu_now_ns();
    if (now + SPIN_BELOW_NS < end_ns) vgpu_sleep_until_ns(end_ns - SPIN_BELOW_NS);
    while ((now = vgpu_now_ns()) < end_ns) {
    }
    if (now > end_ns + SPIN_BELOW_NS) end_ns = now;
  }
  uint64_t st = start_ns / VGPU_GPU_TICK_NS, et = end_ns / VGPU_GPU_TICK_NS;
  if (et <= st) et = st + 1;
  vgpu_scratch_dispatch_done(&q->scratch, q->amd, q->id, &q->stop);
  vgpu_signal_complete(p->completion_signal.handle, profiling, st, et);
  if (vgpu_cfg.log)
    vgpu_logf("{\"type\":\"dispatch\",\"pid\":%d,\"gpu\":%u,\"queue\":%u,\"index\":%llu,"
              "\"header\":%u,\"kernel_object\":%llu,\"name\":\"%s\",\"kernarg\":%llu,"
              "\"grid\":[%u,%u,%u],\"workgroup\":[%u,%u,%u],\"workgroups\":%llu,\"waves\":%llu,"
              "\"wave_size\":%u,\"kernarg_size\":%u,\"group_segment\":%u,\"private_segment\":%u,"
              "\"vgpr_granule\":%u,\"sgpr_granule\":%u,\"emulated\":\"%s\",\"signal\":%llu,"
              "\"start_ts\":%llu,\"end_ts\":%llu,\"duration_ns\":%llu}",
              (int)getpid(), q->gpu, q->id, (unsigned long long)idx, p->header, (unsigned long long)p->kernel_object, d.name ? d.name : "",
              (unsigned long long)(uintptr_t)p->kernarg_address, d.grid[0], d.grid[1], d.grid[2],
              d.wg[0], d.wg[1], d.wg[2], (unsigned long long)d.workgroups,
              (unsigned long long)d.waves, d.wave_size, d.kernarg_size, d.lds, d.scratch, d.vgprs,
              d.sgprs, emu ? emu : "", (unsigned long long)p->completion_signal.handle,
              (unsigned long long)st, (unsigned long long)et, (unsigned long long)d.duration_ns);
  return DONE;
}

static bool barrier_ready(const hsa_barrier_and_packet_t *b, bool is_or) {
  int deps = 0, zero = 0;
  for (int i = 0; i < 5; i++) {
    if (!b->dep_signal[i].handle) continue;
    deps++;
    if (signal_value(b->dep_signal[i].handle) == 0) zero++;
  }
  if (is_or) return deps == 0 || zero > 0;
  return zero == deps;
}

static bool cond_holds(uint32_t cond, int64_t v, int64_t ref) {
  switch (cond) {
  case HSA_SIGNAL_CONDITION_EQ: return v == ref;
  case HSA_SIGNAL_CONDITION_NE: return v != ref;
  case HSA_SIGNAL_CONDITION_LT: return v < ref;
  case HSA_SIGNAL_CONDITION_GTE: return v >= ref;
  default: return false;
  }
}

static void complete_simple(uint64_t signal, bool profiling) {
  uint64_t s = vgpu_cfg.clock == VGPU_CLOCK_VIRTUAL ? vgpu_virtual_advance(VIRTUAL_PACKET_NS) : vgpu_now_ns();
  uint64_t e = vgpu_cfg.clock == VGPU_CLOCK_VIRTUAL ? s + VIRTUAL_PACKET_NS : vgpu_now_ns();
  vgpu_signal_complete(signal, profiling, s / VGPU_GPU_TICK_NS, e / VGPU_GPU_TICK_NS);
}

/* The pm4_ib log line: the vendor packet's INDIRECT_BUFFER and the buffer's
 * dwords as it is about to run ("ib": 8 hex digits a dword), so that a test
 * can compare the profiler's packets with AQLprofile's. */
static void log_pm4_ib(const struct vgpu_queue *q, uint64_t idx, uint16_t header, const uint32_t dw[4]) {
  uint64_t addr = ((uint64_t)dw[2] << 32) | (dw[1] & ~3u);
  uint32_t n = ((dw[0] >> 8) & 0xff) == 0x3f && (dw[3] & (1u << 23)) ? dw[3] & 0xfffff : 0;
  const uint32_t *ib = n && addr ? vgpu_host(addr) : NULL;
  char *hex = malloc((size_t)n * 8 + 1);
  if (!hex) return;
  hex[0] = 0;
  for (uint32_t i = 0; ib && i < n; i++) snprintf(hex + 8 * i, 9, "%08x", ib[i]);
  vgpu_logf("{\"type\":\"pm4_ib\",\"pid\":%d,\"gpu\":%u,\"queue\":%u,\"index\":%llu,\"header\":%u,"
            "\"ib_addr\":%llu,\"ib\":\"%s\"}",
            (int)getpid(), q->gpu, q->id, (unsigned long long)idx, header, (unsigned long long)addr, hex);
  free(hex);
}

static int process_aql(struct vgpu_queue *q, uint64_t idx, const uint8_t *slot) {
  uint16_t header;
  memcpy(&header, slot, 2);
  unsigned type = header & 0xff;
  bool profiling = q->amd->queue_properties & AMD_QUEUE_PROPERTIES_ENABLE_PROFILING;
  uint64_t signal;
  memcpy(&signal, slot + 56, 8);
  switch (type) {
  case HSA_PACKET_TYPE_KERNEL_DISPATCH:
    if (!vgpu_scratch_ready(&q->scratch, q->amd, q->id, idx, slot)) return NOT_READY;
    return dispatch(q, idx, (const hsa_kernel_dispatch_packet_t *)slot, profiling);
  case HSA_PACKET_TYPE_BARRIER_AND:
  case HSA_PACKET_TYPE_BARRIER_OR: {
    const hsa_barrier_and_packet_t *b = (const hsa_barrier_and_packet_t *)slot;
    if (!barrier_ready(b, type == HSA_PACKET_TYPE_BARRIER_OR)) return NOT_READY;
    complete_simple(signal, profiling);
    vgpu_logf("{\"type\":\"%s\",\"pid\":%d,\"gpu\":%u,\"queue\":%u,\"index\":%llu,\"header\":%u,"
              "\"deps\":[%llu,%llu,%llu,%llu,%llu],\"signal\":%llu}",
              type == HSA_PACKET_TYPE_BARRIER_OR ? "barrier_or" : "barrier_and", (int)getpid(), q->gpu, q->id,
              (unsigned long long)idx, header,
              (unsigned long long)b->dep_signal[0].handle, (unsigned long long)b->dep_signal[1].handle,
              (unsigned long long)b->dep_signal[2].handle, (unsigned long long)b->dep_signal[3].handle,
              (unsigned long long)b->dep_signal[4].handle, (unsigned long long)signal);
    return DONE;
  }
  case HSA_PACKET_TYPE_AGENT_DISPATCH:
    complete_simple(signal, profiling);
    vgpu_logf("{\"type\":\"agent_dispatch\",\"pid\":%d,\"queue\":%u,\"index\":%llu}", (int)getpid(), q->id,
              (unsigned long long)idx);
    return DONE;
  case HSA_PACKET_TYPE_VENDOR_SPECIFIC: {
    uint8_t fmt = slot[2];
    if (fmt == 1) { /* AMD PM4 IB: dwords 1..4 hold an INDIRECT_BUFFER packet */
      uint32_t dw[4];
      memcpy(dw, slot + 4, 16);
      if (vgpu_cfg.log) log_pm4_ib(q, idx, header, dw);
      vgpu_pm4_execute(q->gpu, q->id, dw, 4, 0);
      complete_simple(signal, profiling);
      return DONE;
    }
    if (fmt == 2) { /* barrier-value */
      const hsa_amd_barrier_value_packet_t *b = (const hsa_amd_barrier_value_packet_t *)slot;
      int64_t v = b->signal.handle ? signal_value(b->signal.handle) : 0;
      if (!cond_holds(b->cond, v & b->mask, b->value)) return NOT_READY;
      complete_simple(signal, profiling);
      vgpu_logf("{\"type\":\"barrier_value\",\"pid\":%d,\"queue\":%u,\"index\":%llu}", (int)getpid(), q->id,
                (unsigned long long)idx);
      return DONE;
    }
    vgpu_error("queue %u packet %llu: unknown AMD vendor packet format %u", q->id,
               (unsigned long long)idx, fmt);
    complete_simple(signal, profiling);
    return DONE;
  }
  default:
    vgpu_error("queue %u packet %llu: unknown AQL packet type %u", q->id,
               (unsigned long long)idx, type);
    complete_simple(signal, profiling);
    return DONE;
  }
}

static void *aql_thread(void *arg) {
  struct vgpu_queue *q = arg;
  prctl(PR_SET_NAME, "vgpu-aql", 0, 0, 0);
  prctl(PR_SET_TIMERSLACK, 1000, 0, 0, 0);
  struct backoff b = {0};
  uint64_t n = q->ring_bytes / 64;
  while (!q->stop) {
    if (!q->active) {
      backoff_wait(q, &b);
      continue;
    }
    uint64_t rd = __atomic_load_n(&q->amd->read_dispatch_id, __ATOMIC_ACQUIRE);
    uint64_t rung = doorbell_rung(q); /* the doorbell first: the header was written before it */
    __atomic_store_n(&q->rung, rung, __ATOMIC_RELAXED);
    uint8_t *slot = q->ring + (rd % n) * 64;
    uint16_t header = __atomic_load_n((uint16_t *)slot, __ATOMIC_ACQUIRE);
    if ((header & 0xff) == HSA_PACKET_TYPE_INVALID) {
      q->unrung_since = 0;
      backoff_wait(q, &b);
      continue;
    }
    if (rd >= rung) {
      /* Valid, not announced: wait for its doorbell (see the top). */
      uint64_t now = mono_ns();
      if (!q->unrung_since) q->unrung_since = now;
      if (now - q->unrung_since < UNRUNG_AFTER_NS) {
        backoff_wait(q, &b);
        continue;
      }
      q->late++;
      vgpu_logf("{\"type\":\"doorbell_late\",\"pid\":%d,\"queue\":%u,\"index\":%llu,\"rung\":%llu}",
                (int)getpid(), q->id, (unsigned long long)rd, (unsigned long long)rung);
      __atomic_store_n(&q->rung, rd + 1, __ATOMIC_RELAXED);
    }
    q->unrung_since = 0;
    uint8_t pkt[64];
    memcpy(pkt, slot, 64);
    if (process_aql(q, rd, pkt) == NOT_READY) {
      backoff_wait(q, &b);
      continue;
    }
    backoff_reset(&b);
    q->packets++;
    __atomic_store_n((uint16_t *)slot, (uint16_t)HSA_PACKET_TYPE_INVALID, __ATOMIC_RELEASE);
    __atomic_store_n(&q->amd->read_dispatch_id, rd + 1, __ATOMIC_RELEASE);
  }
  q->cpu_ns = thread_cpu_ns();
  return NULL;
}

/* --- SDMA (v4 packets; v5 adds GCR which is a no-op here) ---------------- */

static uint32_t ring_dw(struct vgpu_queue *q, uint64_t off, unsigned i) {
  uint64_t ndw = q->ring_bytes / 4;
  return ((uint32_t *)q->ring)[(off / 4 + i) % ndw];
}

static uint64_t u64(uint32_t lo, uint32_t hi) { return (uint64_t)lo | ((uint64_t)hi << 32); }

static bool poll_holds(unsigned fn, uint32_t v, uint32_t ref) {
  switch (fn) {
  case 0: return true;
  case 1: return v < ref;
  case 2: return v <= ref;
  case 3: return v == ref;
  case 4: return v != ref;
  case 5: return v >= ref;
  case 6: return v > ref;
  default: return true;
  }
}

/* COPY LINEAR_SUB_WINDOW (rect), 13 dwords: element size log2 in dw0[31:29];
 * per side an address, x/y offsets (dw[13:0], dw[29:16]), z offset and pitch
 * (dw[10:0], dw[31:13]) and slice pitch (dw[27:0]); then rect x/y and z.
 * Pitches, slice pitches and the rect extents are stored minus one. */
static unsigned sdma_copy_rect(struct vgpu_queue *q, uint64_t off) {
#define D(i) ring_dw(q, off, i)
  uint32_t h = D(0);
  uint64_t el = 1ull << ((h >> 29) & 7);
  uint8_t *src = vgpu_host(u64(D(1), D(2)));
  uint64_t sx = D(3) & 0x3fff, sy = (D(3) >> 16) & 0x3fff, sz = D(4) & 0x7ff;
  uint64_t spitch = (uint64_t)(D(4) >> 13) + 1, sslice = (uint64_t)(D(5) & 0xfffffff) + 1;
  uint8_t *dst = vgpu_host(u64(D(6), D(7)));
  uint64_t dx = D(8) & 0x3fff, dy = (D(8) >> 16) & 0x3fff, dz = D(9) & 0x7ff;
  uint64_t dpitch = (uint64_t)(D(9) >> 13) + 1, dslice = (uint64_t)(D(10) & 0xfffffff) + 1;
  uint64_t rx = (uint64_t)(D(11) & 0x3fff) + 1, ry = (uint64_t)((D(11) >> 16) & 0x3fff) + 1;
  uint64_t rz = (uint64_t)(D(12) & 0x7ff) + 1;
  for (uint64_t z = 0; z < rz; z++)
    for (uint64_t y = 0; y < ry; y++)
      memmove(dst + ((dz + z) * dslice + (dy + y) * dpitch + dx) * el,
              src + ((sz + z) * sslice + (sy + y) * spitch + sx) * el, rx * el);
  vgpu_logf("{\"type\":\"sdma_copy_rect\",\"pid\":%d,\"queue\":%u,\"rect\":[%llu,%llu,%llu],\"element\":%llu}",
            (int)getpid(), q->id, (unsigned long long)rx, (unsigned long long)ry,
            (unsigned long long)rz, (unsigned long long)el);
  return 13;
#undef D
}

/* Returns the packet length in dwords, or 0 if the queue must wait. */
static unsigned sdma_packet(struct vgpu_queue *q, uint64_t off) {
  uint32_t h = ring_dw(q, off, 0);
  unsigned op = h & 0xff, sub = (h >> 8) & 0xff;
#define D(i) ring_dw(q, off, i)
  switch (op) {
  case 0: return 1 + ((h >> 16) & 0x3fff);
  case 1: {
    if (sub == 4) return sdma_copy_rect(q, off);
    if (sub != 0) {
      vgpu_error("SDMA queue %u: unsupported COPY sub-op %u", q->id, sub);
      return 7;
    }
    uint64_t n = (uint64_t)(D(1) & 0x3fffff) + 1;
    uint64_t srcva = u64(D(3), D(4)), dstva = u64(D(5), D(6));
    void *src = vgpu_host(srcva), *dst = vgpu_host(dstva);
    uint64_t t0 = vgpu_now_ns();
    memmove(dst, src, n);
    if (vgpu_cfg.clock == VGPU_CLOCK_VIRTUAL) vgpu_virtual_advance(1000 + n / 10);
    vgpu_logf("{\"type\":\"sdma_copy\",\"pid\":%d,\"queue\":%u,\"src\":%llu,\"dst\":%llu,\"bytes\":%llu,"
              "\"ts\":%llu}",
              (int)getpid(), q->id, (unsigned long long)srcva, (unsigned long long)dstva, (unsigned long long)n,
              (unsigned long long)t0);
    return 7;
  }
  case 5: {
    volatile uint32_t *a = vgpu_host(u64(D(1), D(2)));
    __atomic_store_n(a, D(3), __ATOMIC_RELEASE);
    return 4;
  }
  case 6: {
    uint32_t id = D(1) & 0x0fffffff;
    vgpu_event_signal_id(id);
    return 2;
  }
  case 8: {
    if (h & (1u << 31)) {
      volatile uint32_t *a = vgpu_host(u64(D(1), D(2)));
      uint32_t v = __atomic_load_n(a, __ATOMIC_ACQUIRE) & D(4);
      if (!poll_holds((h >> 28) & 7, v, D(3))) return 0;
    }
    return 6;
  }
  case 10: {
    int64_t *a = vgpu_host(u64(D(1), D(2)));
    __atomic_fetch_add(a, (int64_t)u64(D(3), D(4)), __ATOMIC_ACQ_REL);
    return 8;
  }
  case 11: {
    uint32_t *a = vgpu_host(u64(D(1), D(2)));
    uint64_t bytes = (uint64_t)(D(4) & 0x3fffff) + 1;
    uint32_t v = D(3);
    for (uint64_t i = 0; i < bytes / 4; i++) a[i] = v;
    return 5;
  }
  case 13: {
    uint64_t *a = vgpu_host(u64(D(1), D(2)));
    if (vgpu_cfg.clock == VGPU_CLOCK_VIRTUAL) vgpu_virtual_advance(VIRTUAL_PACKET_NS);
    *a = vgpu_gpu_ticks();
    return 3;
  }
  case 17: return 5;
  default:
    vgpu_error("SDMA queue %u: unknown opcode %u (dword 0x%08x)", q->id, op, h);
    return 1;
  }
#undef D
}

static void *sdma_thread(void *arg) {
  struct vgpu_queue *q = arg;
  prctl(PR_SET_NAME, "vgpu-sdma", 0, 0, 0);
  prctl(PR_SET_TIMERSLACK, 1000, 0, 0, 0);
  struct backoff b = {0};
  while (!q->stop) {
    uint64_t rp = __atomic_load_n(q->rptr, __ATOMIC_ACQUIRE);
    uint64_t wp = __atomic_load_n(q->wptr, __ATOMIC_ACQUIRE);
    if (!q->active || rp >= wp) {
      backoff_wait(q, &b);
      continue;
    }
    unsigned len = sdma_packet(q, rp);
    if (!len) {
      backoff_wait(q, &b);
      continue;
    }
    backoff_reset(&b);
    q->packets++;
    __atomic_store_n(q->rptr, rp + (uint64_t)len * 4, __ATOMIC_RELEASE);
  }
  q->cpu_ns = thread_cpu_ns();
  return NULL;
}

/* --- the KFD queue ioctls -------------------------------------------------------- */

static struct vgpu_queue *find_locked(uint32_t id) {
  struct vgpu_queue *q = queues;
  while (q && q->id != id) q = q->next;
  return q;
}

bool vgpu_queue_exists(uint32_t id) {
  pthread_mutex_lock(&qlock);
  bool ok = find_locked(id) != NULL;
  pthread_mutex_unlock(&qlock);
  return ok;
}

unsigned vgpu_queue_count(void) {
  pthread_mutex_lock(&qlock);
  unsigned n = 0;
  for (struct vgpu_queue *q = queues; q; q = q->next) n++;
  pthread_mutex_unlock(&qlock);
  return n;
}

int vgpu_queue_create(void *argp, size_t size) {
  (void)size;
  struct vgpu_create_queue_args *a = argp;
  int g = vgpu_gpu_index(a->gpu_id);
  if (g < 0 || !a->ring_base_address || !a->ring_size || !a->read_pointer_address || !a->write_pointer_address)
    return -EINVAL;
  bool aql = a->queue_type == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
  bool sdma = a->queue_type == KFD_IOC_QUEUE_TYPE_SDMA || a->queue_type == KFD_IOC_QUEUE_TYPE_SDMA_XGMI ||
              a->queue_type == KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID_V;
  if (!aql && !sdma) {
    /* PM4 compute rings (type 0) are not emulated; no ROCm runtime uses them. */
    vgpu_unknown("KFD queue type", a->queue_type == KFD_IOC_QUEUE_TYPE_COMPUTE ? "COMPUTE (PM4 ring)" : "unknown",
                 "EINVAL");
    return -EINVAL;
  }
  struct vgpu_queue *q = calloc(1, sizeof *q);
  if (!q) return -ENOMEM;
  q->gpu = (unsigned)g;
  q->aql = aql;
  q->active = a->queue_percentage > 0;
  q->ring = vgpu_host(a->ring_base_address);
  q->ring_bytes = a->ring_size;
  volatile uint64_t *doorbells = vgpu_mem_doorbells(q->gpu);
  if (!doorbells) {
    free(q);
    return -ENOMEM;
  }
  if (aql) {
    q->amd = (amd_queue_t *)((uint8_t *)vgpu_host(a->read_pointer_address) -
                             offsetof(amd_queue_t, read_dispatch_id));
  } else {
    q->rptr = vgpu_host(a->read_pointer_address);
    q->wptr = vgpu_host(a->write_pointer_address);
  }
  pthread_mutex_lock(&qlock);
  if (!watcher_started) {
    start_watcher();
    watcher_started = true;
  }
  uint32_t id = 0;
  while (id < MAX_QUEUES && qid_used[id]) id++;
  if (id == MAX_QUEUES) {
    pthread_mutex_unlock(&qlock);
    free(q);
    return -ENOSPC;
  }
  qid_used[id] = 1;
  q->id = id;
  q->doorbell = doorbells + id;
  __atomic_store_n(q->doorbell, UINT64_MAX, __ATOMIC_RELEASE); /* nothing rung yet */
  q->next = queues;
  queues = q;
  if (pthread_create(&q->thread, NULL, aql ? aql_thread : sdma_thread, q)) {
    queues = q->next;
    qid_used[id] = 0;
    pthread_mutex_unlock(&qlock);
    free(q);
    return -ENOMEM;
  }
  pthread_mutex_unlock(&qlock);
  /* SOC15 doorbells are 8 bytes: the offset within the process's doorbell
   * page is in the low bits, the page's mmap offset above them. */
  a->queue_id = id;
  a->doorbell_offset = vgpu_special_mmap_offset(KFD_MMAP_TYPE_DOORBELL_V, q->gpu) | ((uint64_t)id * 8);
  vgpu_logf("{\"type\":\"queue_create\",\"pid\":%d,\"gpu\":%u,\"queue\":%u,\"kind\":\"%s\",\"ring\":%llu,"
            "\"bytes\":%llu}",
            (int)getpid(), q->gpu, id, aql ? "aql" : "sdma", (unsigned long long)a->ring_base_address,
            (unsigned long long)a->ring_size);
  return 0;
}

int vgpu_queue_update(void *argp) {
  struct kfd_ioctl_update_queue_args *a = argp;
  pthread_mutex_lock(&qlock);
  struct vgpu_queue *q = find_locked(a->queue_id);
  if (q) {
    if (a->ring_base_address) {
      q->ring = vgpu_host(a->ring_base_address);
      q->ring_bytes = a->ring_size;
    }
    q->active = a->queue_percentage > 0;
  }
  pthread_mutex_unlock(&qlock);
  return q ? 0 : -EINVAL;
}

int vgpu_queue_destroy(void *argp) {
  struct kfd_ioctl_destroy_queue_args *a = argp;
  pthread_mutex_lock(&qlock);
  struct vgpu_queue **pp = &queues;
  while (*pp && (*pp)->id != a->queue_id) pp = &(*pp)->next;
  struct vgpu_queue *q = *pp;
  if (q) *pp = q->next;
  pthread_mutex_unlock(&qlock);
  if (!q) return -EINVAL;
  q->stop = true;
  __atomic_store_n(&q->parked, 0, __ATOMIC_SEQ_CST);
  futex_wake(&q->parked);
  pthread_join(q->thread, NULL);
  vgpu_logf("{\"type\":\"queue_destroy\",\"pid\":%d,\"queue\":%u,\"packets\":%llu}", (int)getpid(), q->id,
            (unsigned long long)q->packets);
  pthread_mutex_lock(&qlock);
  if (q->aql) {
    gone_aql_ns += q->cpu_ns;
    gone_aql_packets += q->packets;
  } else {
    gone_sdma_ns += q->cpu_ns;
    gone_sdma_packets += q->packets;
  }
  qid_used[q->id] = 0;
  pthread_mutex_unlock(&qlock);
  free(q);
  return 0;
}

/* After fork the queues' threads do not exist in the child: forget them
 * (their memory belongs to the parent's runtime, so nothing is freed). */
void vgpu_queues_after_fork(void) {
  pthread_mutex_init(&qlock, NULL);
  queues = NULL;
  gone_aql_ns = gone_aql_packets = gone_sdma_ns = gone_sdma_packets = 0;
  memset(qid_used, 0, sizeof qid_used);
  watcher_started = false;
}

/* ROCPROF_VGPU_STATS=1: at exit, what the emulated command processors cost
 * (their threads' CPU time, live queues and destroyed ones) on stderr, for
 * the benchmarks that compare a profiler's packets against a bare run. */
__attribute__((destructor)) static void print_stats(void) {
  if (!vgpu_cfg.stats) return;
  pthread_mutex_lock(&qlock);
  uint64_t aql_ns = gone_aql_ns, aql_n = gone_aql_packets, sdma_ns = gone_sdma_ns, sdma_n = gone_sdma_packets;
  for (struct vgpu_queue *q = queues; q; q = q->next) {
    clockid_t c;
    struct timespec ts = {0, 0};
    if (pthread_getcpuclockid(q->thread, &c) == 0) clock_gettime(c, &ts);
    uint64_t ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    if (q->aql) {
      aql_ns += ns;
      aql_n += q->packets;
    } else {
      sdma_ns += ns;
      sdma_n += q->packets;
    }
  }
  pthread_mutex_unlock(&qlock);
  fprintf(stderr, "vgpu stats: aql_cpu_ns=%llu aql_packets=%llu sdma_cpu_ns=%llu sdma_packets=%llu\n",
          (unsigned long long)aql_ns, (unsigned long long)aql_n, (unsigned long long)sdma_ns,
          (unsigned long long)sdma_n);
}
