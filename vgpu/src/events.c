/* Events: the interrupt half of HSA signals. Each event owns an 8-byte
 * mailbox (HWData2) that the packet processor writes before waking waiters,
 * mirroring the KFD event page. One mutex/condvar pair serves all events:
 * waits are rare (ROCR spins first) and this keeps WaitOnMultipleEvents simple.
 *
 * Setting an event follows KFD: every thread waiting on it at that moment is
 * released, and an auto-reset event stays signaled only if nobody was waiting.
 * ROCR relies on this: queue teardown has the application thread and the
 * async-events thread wait on the same event, and a single-consumer event
 * would let one of them swallow the other's wake-up and deadlock. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vgpu.h"

struct vgpu_event {
  HsaEvent pub; /* first: callers hold HsaEvent* */
  volatile uint64_t mailbox;
  bool manual_reset;
  bool signaled;
  bool live;
  uint32_t waiters;
  uint64_t gen; /* bumped by every set, so current waiters see it */
};

#define CHUNK 4096
#define NCHUNKS 256
static struct vgpu_event *chunks[NCHUNKS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static uint32_t next_id = 1;
static uint32_t *free_ids;
static size_t nfree, capfree;

static void init_cond(void) {
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  pthread_cond_init(&cond, &a);
}

static struct vgpu_event *slot(uint32_t id) {
  uint32_t c = id / CHUNK;
  if (c >= NCHUNKS) return NULL;
  if (!chunks[c]) {
    struct vgpu_event *n = calloc(CHUNK, sizeof *n);
    if (!n) return NULL;
    chunks[c] = n;
  }
  return &chunks[c][id % CHUNK];
}

HSAKMT_STATUS HSAKMTAPI hsaKmtCreateEvent(HsaEventDescriptor *desc, bool manual, bool signaled,
                                          HsaEvent **out) {
  if (!desc || !out) return HSAKMT_STATUS_INVALID_PARAMETER;
  pthread_once(&once, init_cond);
  pthread_mutex_lock(&lock);
  uint32_t id = nfree ? free_ids[--nfree] : next_id++;
  struct vgpu_event *e = slot(id);
  if (!e) {
    pthread_mutex_unlock(&lock);
    return HSAKMT_STATUS_NO_MEMORY;
  }
  memset(e, 0, sizeof *e);
  e->pub.EventId = id;
  e->pub.EventData.EventType = desc->EventType;
  e->pub.EventData.HWData1 = id;
  e->pub.EventData.HWData2 = (HSAuint64)(uintptr_t)&e->mailbox;
  e->pub.EventData.HWData3 = id;
  e->pub.EventData.EventData.SyncVar = desc->SyncVar;
  e->manual_reset = manual;
  e->signaled = signaled;
  e->live = true;
  pthread_mutex_unlock(&lock);
  *out = &e->pub;
  return HSAKMT_STATUS_SUCCESS;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtDestroyEvent(HsaEvent *ev) {
  if (!ev) return HSAKMT_STATUS_INVALID_PARAMETER;
  struct vgpu_event *e = (struct vgpu_event *)ev;
  pthread_mutex_lock(&lock);
  if (e->live) {
    e->live = false;
    if (nfree == capfree) {
      size_t nc = capfree ? capfree * 2 : 256;
      uint32_t *n = realloc(free_ids, nc * sizeof *n);
      if (n) {
        free_ids = n;
        capfree = nc;
      }
    }
    if (nfree < capfree) free_ids[nfree++] = ev->EventId;
  }
  pthread_mutex_unlock(&lock);
  return HSAKMT_STATUS_SUCCESS;
}

static void set_locked(struct vgpu_event *e) {
  e->gen++;
  e->signaled = e->manual_reset || e->waiters == 0;
  pthread_cond_broadcast(&cond);
}

HSAKMT_STATUS HSAKMTAPI hsaKmtSetEvent(HsaEvent *ev) {
  if (!ev) return HSAKMT_STATUS_INVALID_PARAMETER;
  pthread_once(&once, init_cond);
  pthread_mutex_lock(&lock);
  set_locked((struct vgpu_event *)ev);
  pthread_mutex_unlock(&lock);
  return HSAKMT_STATUS_SUCCESS;
}

void vgpu_event_signal_id(uint32_t id) {
  pthread_once(&once, init_cond);
  pthread_mutex_lock(&lock);
  struct vgpu_event *e = id / CHUNK < NCHUNKS && chunks[id / CHUNK] ? &chunks[id / CHUNK][id % CHUNK] : NULL;
  if (e && e->live) {
    e->mailbox = id;
    set_locked(e);
  }
  pthread_mutex_unlock(&lock);
}

HSAKMT_STATUS HSAKMTAPI hsaKmtResetEvent(HsaEvent *ev) {
  if (!ev) return HSAKMT_STATUS_INVALID_PARAMETER;
  pthread_mutex_lock(&lock);
  ((struct vgpu_event *)ev)->signaled = false;
  pthread_mutex_unlock(&lock);
  return HSAKMT_STATUS_SUCCESS;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtQueryEventState(HsaEvent *ev) {
  if (!ev) return HSAKMT_STATUS_INVALID_PARAMETER;
  pthread_mutex_lock(&lock);
  bool s = ((struct vgpu_event *)ev)->signaled;
  pthread_mutex_unlock(&lock);
  return s ? HSAKMT_STATUS_SUCCESS : HSAKMT_STATUS_WAIT_TIMEOUT;
}

#define MAX_WAIT_EVENTS 256

HSAKMT_STATUS HSAKMTAPI hsaKmtWaitOnMultipleEvents(HsaEvent *evs[], HSAuint32 n, bool all,
                                                   HSAuint32 ms) {
  if ((!evs && n) || n > MAX_WAIT_EVENTS) return HSAKMT_STATUS_INVALID_PARAMETER;
  pthread_once(&once, init_cond);
  struct timespec dl;
  clock_gettime(CLOCK_MONOTONIC, &dl);
  dl.tv_sec += ms / 1000;
  dl.tv_nsec += (long)(ms % 1000) * 1000000L;
  if (dl.tv_nsec >= 1000000000L) {
    dl.tv_sec++;
    dl.tv_nsec -= 1000000000L;
  }
  uint64_t gen0[MAX_WAIT_EVENTS];
  bool got[MAX_WAIT_EVENTS] = {0};
  HSAKMT_STATUS st = HSAKMT_STATUS_SUCCESS;
  pthread_mutex_lock(&lock);
  for (HSAuint32 i = 0; i < n; i++) {
    struct vgpu_event *e = (struct vgpu_event *)evs[i];
    if (!e) continue;
    gen0[i] = e->gen;
    e->waiters++;
  }
  for (;;) {
    HSAuint32 hit = 0;
    for (HSAuint32 i = 0; i < n; i++) {
      struct vgpu_event *e = (struct vgpu_event *)evs[i];
      if (!e) continue;
      if (!got[i] && (e->signaled || e->gen != gen0[i])) {
        got[i] = true;
        if (e->signaled && !e->manual_reset) e->signaled = false; /* consumed */
      }
      if (got[i]) hit++;
    }
    if ((all && hit == n) || (!all && hit > 0)) break;
    if (ms == 0) {
      st = HSAKMT_STATUS_WAIT_TIMEOUT;
      break;
    }
    int rc = ms == HSA_EVENTTIMEOUT_INFINITE ? pthread_cond_wait(&cond, &lock)
                                             : pthread_cond_timedwait(&cond, &lock, &dl);
    if (rc == ETIMEDOUT) {
      st = HSAKMT_STATUS_WAIT_TIMEOUT;
      break;
    }
  }
  for (HSAuint32 i = 0; i < n; i++)
    if (evs[i]) ((struct vgpu_event *)evs[i])->waiters--;
  pthread_mutex_unlock(&lock);
  return st;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtWaitOnEvent(HsaEvent *ev, HSAuint32 ms) {
  if (!ev) return HSAKMT_STATUS_INVALID_PARAMETER;
  return hsaKmtWaitOnMultipleEvents(&ev, 1, true, ms);
}
