/* Exercises the emulated KFD's event semantics through Debian's real ROCm
 * 5.2 thunk (libhsakmt.so.1, no HSA runtime; run with the virtual GPU
 * preloaded): prints one "ok <case>" line per passing case and exits
 * non-zero on the first failure.
 *  - a set releases every thread waiting on an auto-reset event at that
 *    moment, and leaves it unsignaled (KFD semantics);
 *  - a set with nobody waiting stays pending for the next wait only;
 *  - wait-any returns on one event, wait-all needs all; timeouts time out. */
#include <hsakmt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static HsaEvent *ev;
static int woke[2];

static void *waiter(void *arg) {
  int i = (int)(long)arg;
  if (hsaKmtWaitOnEvent(ev, 5000) == HSAKMT_STATUS_SUCCESS) woke[i] = 1;
  return NULL;
}

#define FAIL(...)                 \
  do {                            \
    fprintf(stderr, __VA_ARGS__); \
    fprintf(stderr, "\n");        \
    return 1;                     \
  } while (0)

int main(void) {
  if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS) FAIL("OpenKFD failed");
  /* As every runtime does first: the thunk reads the topology and sets up
   * its GPU address spaces (the event page is GPU memory). */
  HsaSystemProperties sys;
  if (hsaKmtAcquireSystemProperties(&sys) != HSAKMT_STATUS_SUCCESS) FAIL("AcquireSystemProperties failed");
  HsaEventDescriptor d = {.EventType = HSA_EVENTTYPE_SIGNAL};
  if (hsaKmtCreateEvent(&d, false, false, &ev) != HSAKMT_STATUS_SUCCESS) FAIL("CreateEvent failed");
  if (!ev->EventId || !ev->EventData.HWData2) FAIL("event has no id or mailbox");

  pthread_t t[2];
  for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, waiter, (void *)i);
  usleep(100000); /* both threads are now blocked in the wait */
  hsaKmtSetEvent(ev);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  if (!woke[0] || !woke[1]) FAIL("one set released %d of 2 waiters", woke[0] + woke[1]);
  if (hsaKmtWaitOnEvent(ev, 0) != HSAKMT_STATUS_WAIT_TIMEOUT) FAIL("event stayed signaled after waking waiters");
  printf("ok broadcast\n");

  hsaKmtSetEvent(ev);
  if (hsaKmtWaitOnEvent(ev, 0) != HSAKMT_STATUS_SUCCESS) FAIL("pending set was lost");
  if (hsaKmtWaitOnEvent(ev, 10) != HSAKMT_STATUS_WAIT_TIMEOUT) FAIL("auto-reset event was not consumed");
  printf("ok pending\n");

  HsaEvent *e2;
  hsaKmtCreateEvent(&d, false, false, &e2);
  HsaEvent *both[2] = {ev, e2};
  hsaKmtSetEvent(e2);
  if (hsaKmtWaitOnMultipleEvents(both, 2, false, 100) != HSAKMT_STATUS_SUCCESS) FAIL("wait-any missed e2");
  hsaKmtSetEvent(e2);
  if (hsaKmtWaitOnMultipleEvents(both, 2, true, 50) != HSAKMT_STATUS_WAIT_TIMEOUT) FAIL("wait-all returned early");
  hsaKmtSetEvent(ev);
  hsaKmtSetEvent(e2);
  if (hsaKmtWaitOnMultipleEvents(both, 2, true, 100) != HSAKMT_STATUS_SUCCESS) FAIL("wait-all missed");
  printf("ok any-all\n");

  HsaEvent *m;
  hsaKmtCreateEvent(&d, true, false, &m);
  hsaKmtSetEvent(m);
  if (hsaKmtWaitOnEvent(m, 0) || hsaKmtWaitOnEvent(m, 0)) FAIL("manual-reset event was consumed");
  hsaKmtResetEvent(m);
  if (hsaKmtWaitOnEvent(m, 0) != HSAKMT_STATUS_WAIT_TIMEOUT) FAIL("ResetEvent did not reset");
  printf("ok manual\n");
  hsaKmtDestroyEvent(m);
  hsaKmtDestroyEvent(e2);
  hsaKmtDestroyEvent(ev);
  hsaKmtCloseKFD();
  return 0;
}
