/* Events: the interrupt half of HSA signals, with amdkfd's semantics.
 *
 * Signal events own a slot of the event page (slot index = event id); the
 * command processor writes the event id into a signal's mailbox (that slot)
 * and then sets the event, which is what the GPU's end-of-pipe interrupt
 * does on hardware. Setting an event releases every thread waiting on it
 * at that moment; an auto-reset event stays signaled only if nobody was
 * waiting. Every set also bumps the event's age: a waiter that passes the
 * age it last saw (KFD 1.14, ROCR 6+) returns at once if the event fired in
 * between, so no wake-up is lost between a runtime's checks. ROCR 5.2 does
 * not pass ages and relies on the release-all rule instead: queue teardown
 * has two threads waiting on one event.
 *
 * One mutex and condition variable serve all events: waits are rare (ROCR
 * spins first) and a set is a short critical section. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kfd_uapi.h"
#include "vgpu.h"

#define FIRST_NONSIGNAL_ID KFD_SIGNAL_EVENT_LIMIT
#define MAX_EVENTS (2 * KFD_SIGNAL_EVENT_LIMIT)
#define UNSIGNALED_SLOT UINT64_MAX
#define TIMEOUT_INFINITE 0xffffffffu /* KFD_EVENT_TIMEOUT_INFINITE */

struct waiter {
  bool activated;
  struct waiter *next;
};

struct event {
  bool live, auto_reset, signaled;
  uint32_t type;
  uint64_t age; /* starts at 1; 0 means "no age" to the waiter */
  struct waiter *waiters;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond;
static pthread_once_t cond_once = PTHREAD_ONCE_INIT;
static struct event events[MAX_EVENTS];
static uint64_t *page; /* the event page: one 8-byte slot per signal event */

static void init_cond(void) {
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  pthread_cond_init(&cond, &a);
}

static struct event *lookup(uint32_t id) { return id < MAX_EVENTS && events[id].live ? &events[id] : NULL; }

void *vgpu_events_page(void);

int vgpu_event_create(void *argp) {
  struct kfd_ioctl_create_event_args *a = argp;
  pthread_once(&cond_once, init_cond);
  bool sig = a->event_type == KFD_IOC_EVENT_SIGNAL || a->event_type == KFD_IOC_EVENT_DEBUG_EVENT;
  pthread_mutex_lock(&lock);
  if (sig && !page) {
    /* A discrete GPU's thunk hands in a buffer of its own (its handle in
     * event_page_offset); KFD then uses that memory as the page. */
    uint64_t size = 0;
    page = a->event_page_offset ? vgpu_mem_by_handle(a->event_page_offset, &size) : vgpu_events_page();
    if (!page || (a->event_page_offset && size < KFD_SIGNAL_EVENT_LIMIT * 8)) {
      page = NULL;
      pthread_mutex_unlock(&lock);
      return -EINVAL;
    }
    memset(page, 0xff, KFD_SIGNAL_EVENT_LIMIT * 8);
  }
  uint32_t lo = sig ? 1 : FIRST_NONSIGNAL_ID, hi = sig ? KFD_SIGNAL_EVENT_LIMIT : MAX_EVENTS;
  uint32_t id = lo;
  while (id < hi && events[id].live) id++;
  if (id == hi) {
    pthread_mutex_unlock(&lock);
    return -ENOSPC; /* ROCR falls back to signals without interrupts */
  }
  events[id] = (struct event){.live = true, .auto_reset = a->auto_reset != 0, .type = a->event_type, .age = 1};
  if (sig) page[id] = UNSIGNALED_SLOT;
  pthread_mutex_unlock(&lock);
  a->event_id = id;
  if (sig) {
    a->event_trigger_data = id;
    a->event_slot_index = id;
    a->event_page_offset = vgpu_special_mmap_offset(KFD_MMAP_TYPE_EVENTS_V, 0);
  }
  return 0;
}

int vgpu_event_destroy(void *argp) {
  struct kfd_ioctl_destroy_event_args *a = argp;
  pthread_mutex_lock(&lock);
  struct event *e = lookup(a->event_id);
  if (e) {
    /* Waiters still blocked on it are woken as by a set, as KFD does. */
    for (struct waiter *w = e->waiters; w; w = w->next) w->activated = true;
    e->waiters = NULL;
    e->live = false;
    pthread_cond_broadcast(&cond);
  }
  pthread_mutex_unlock(&lock);
  return e ? 0 : -EINVAL;
}

static void set_locked(struct event *e) {
  e->signaled = !e->auto_reset || !e->waiters;
  if (!++e->age) e->age = 2; /* never wrap to the reserved 0 and 1 */
  for (struct waiter *w = e->waiters; w; w = w->next) w->activated = true;
  pthread_cond_broadcast(&cond);
}

int vgpu_event_set_ioctl(void *argp) {
  struct kfd_ioctl_set_event_args *a = argp;
  pthread_once(&cond_once, init_cond);
  pthread_mutex_lock(&lock);
  struct event *e = lookup(a->event_id);
  if (e) set_locked(e);
  pthread_mutex_unlock(&lock);
  return e ? 0 : -EINVAL;
}

void vgpu_event_signal_id(uint32_t id) {
  pthread_once(&cond_once, init_cond);
  pthread_mutex_lock(&lock);
  struct event *e = lookup(id);
  if (e) {
    if (page && id < KFD_SIGNAL_EVENT_LIMIT) page[id] = UNSIGNALED_SLOT; /* acknowledged, as KFD does */
    set_locked(e);
  }
  pthread_mutex_unlock(&lock);
}

int vgpu_event_reset(void *argp) {
  struct kfd_ioctl_reset_event_args *a = argp;
  pthread_mutex_lock(&lock);
  struct event *e = lookup(a->event_id);
  if (e) e->signaled = false;
  pthread_mutex_unlock(&lock);
  return e ? 0 : -EINVAL;
}

#define MAX_WAIT 256

static void unlink_waiter(struct event *e, struct waiter *w) {
  for (struct waiter **pp = &e->waiters; *pp; pp = &(*pp)->next)
    if (*pp == w) {
      *pp = w->next;
      return;
    }
}

int vgpu_event_wait(void *argp) {
  struct kfd_ioctl_wait_events_args *a = argp;
  uint32_t n = a->num_events;
  if (n > MAX_WAIT || (n && !a->events_ptr)) return -EINVAL;
  pthread_once(&cond_once, init_cond);
  struct vgpu_event_data *data = (void *)(uintptr_t)a->events_ptr;
  struct waiter w[MAX_WAIT];
  bool age_enabled[MAX_WAIT];
  struct event *ev[MAX_WAIT];
  struct timespec dl;
  clock_gettime(CLOCK_MONOTONIC, &dl);
  uint32_t ms = a->timeout;
  dl.tv_sec += ms / 1000;
  dl.tv_nsec += (long)(ms % 1000) * 1000000L;
  if (dl.tv_nsec >= 1000000000L) {
    dl.tv_sec++;
    dl.tv_nsec -= 1000000000L;
  }
  int rc = 0;
  pthread_mutex_lock(&lock);
  uint32_t k;
  for (k = 0; k < n; k++) {
    ev[k] = lookup(data[k].event_id);
    if (!ev[k]) {
      rc = -EINVAL;
      break;
    }
    w[k].activated = ev[k]->signaled;
    ev[k]->signaled = ev[k]->signaled && !ev[k]->auto_reset;
    age_enabled[k] = ev[k]->type == KFD_IOC_EVENT_SIGNAL && data[k].signal_event_data.last_event_age;
    if (age_enabled[k] && ev[k]->age != data[k].signal_event_data.last_event_age) w[k].activated = true;
    w[k].next = ev[k]->waiters;
    ev[k]->waiters = &w[k];
  }
  uint32_t result = KFD_IOC_WAIT_RESULT_COMPLETE;
  while (!rc) {
    uint32_t hit = 0;
    for (uint32_t i = 0; i < n; i++) hit += w[i].activated;
    if (a->wait_for_all ? hit == n : hit > 0 || !n) break;
    if (ms == 0) {
      result = KFD_IOC_WAIT_RESULT_TIMEOUT;
      break;
    }
    int e = ms == TIMEOUT_INFINITE ? pthread_cond_wait(&cond, &lock)
                                             : pthread_cond_timedwait(&cond, &lock, &dl);
    if (e == ETIMEDOUT) {
      hit = 0;
      for (uint32_t i = 0; i < n; i++) hit += w[i].activated;
      if (!(a->wait_for_all ? hit == n : hit > 0)) result = KFD_IOC_WAIT_RESULT_TIMEOUT;
      break;
    }
  }
  for (uint32_t i = 0; i < k; i++) {
    if (ev[i]->live) unlink_waiter(ev[i], &w[i]);
    if (age_enabled[i]) data[i].signal_event_data.last_event_age = ev[i]->age;
  }
  pthread_mutex_unlock(&lock);
  a->wait_result = result;
  return rc;
}

void vgpu_events_after_fork(void) {
  pthread_mutex_init(&lock, NULL);
  init_cond();
  memset(events, 0, sizeof events);
  page = NULL;
}
