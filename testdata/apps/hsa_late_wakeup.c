/* Raw HSA: the completion thread's lost wake-up (issue #5), made to happen.
 *
 * A barrier-AND that waits on a signal the app holds goes first, so the
 * profiler's completion FIFO is not empty when the dispatches behind it are
 * submitted (their callback then does not wake the completion thread). Run
 * with ROCPROF_GO_TEST_PUBLISH_DELAY_US (queue.cpp's test hook) so that each
 * callback sleeps between that decision and publishing its entry; meanwhile
 * a helper thread releases the barrier, and the completion thread records it,
 * finds the FIFO empty and goes to sleep until woken. The dispatches (no
 * completion signal of the app's, so nothing else wakes the thread) must
 * still be recorded: the app waits DEADLINE_MS, then kills itself with
 * SIGKILL, which skips the exit-time drain — so only what the completion
 * thread recorded in time is in the output.
 *
 * usage: hsa_late_wakeup [DISPATCHES=3] [RELEASE_MS=50] [DEADLINE_MS=1500]
 * Prints dispatches=N before the kill. Kernel objects are placeholders (the
 * virtual GPU only processes packets). */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hsa_app.h"



static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, ms % 1000 * 1000000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static hsa_signal_t gate;
static long release_ms;

static void *release(void *arg) {
  (void)arg;
  sleep_ms(release_ms);
  hsa_signal_store_screlease(gate, 0);
  return NULL;
}

static uint8_t kernel_object[64];

int main(int argc, char **argv) {
  int dispatches = argc > 1 ? atoi(argv[1]) : 3;
  release_ms = argc > 2 ? atol(argv[2]) : 50;
  long deadline_ms = argc > 3 ? atol(argv[3]) : 1500;
  CHECK(hsa_init());
  hsa_agent_t gpu = {0};
  hsa_iterate_agents(gpu_cb, &gpu);
  if (!gpu.handle) {
    fprintf(stderr, "no GPU agent\n");
    return 2;
  }
  hsa_queue_t *q;
  CHECK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));
  CHECK(hsa_signal_create(1, 0, NULL, &gate));

  hsa_barrier_and_packet_t b;
  memset(&b, 0, sizeof b);
  b.header = hdr(HSA_PACKET_TYPE_BARRIER_AND);
  b.dep_signal[0] = gate;
  submit(q, &b);

  pthread_t helper;
  pthread_create(&helper, NULL, release, NULL);
  for (int i = 0; i < dispatches; i++) {
    hsa_kernel_dispatch_packet_t p;
    memset(&p, 0, sizeof p);
    p.header = hdr(HSA_PACKET_TYPE_KERNEL_DISPATCH);
    p.setup = 1;
    p.workgroup_size_x = 64;
    p.workgroup_size_y = p.workgroup_size_z = 1;
    p.grid_size_x = 64 * (i + 1);
    p.grid_size_y = p.grid_size_z = 1;
    p.kernel_object = (uint64_t)(uintptr_t)kernel_object;
    submit(q, &p);
  }
  pthread_join(helper, NULL);
  sleep_ms(deadline_ms);
  printf("dispatches=%d\n", dispatches);
  fflush(stdout);
  kill(getpid(), SIGKILL);
  return 3;
}
