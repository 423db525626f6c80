/* Raw HSA: dies by a signal with dispatches the GPU completed but nobody
 * synchronised with (issue 19).
 *
 * A barrier-AND on a signal the app holds goes first, then DISPATCHES
 * dispatches (every fourth with a completion signal of the app's, which it
 * never waits on); the app then releases the barrier. It learns that the
 * virtual GPU completed every dispatch without any HSA call the profiler
 * could see: it reads the virtual GPU's packet log (ROCPROF_VGPU_LOG, "%p"
 * for the pid), which gets each dispatch's line after its completion signal
 * was written, until it holds DISPATCHES lines for its kernel object. It
 * prints dispatches=N and then:
 *   abort  calls abort()                       (SIGABRT, exit 134)
 *   segv   writes through a null pointer       (SIGSEGV, exit 139)
 *   term   waits for a signal (rocprof-go --timeout sends SIGTERM: 124)
 * Every dispatch completed before the signal, so exactly DISPATCHES must be
 * in the trace. Kernel objects are placeholders (the virtual GPU only
 * processes packets).
 *
 * usage: hsa_crash abort|segv|term [DISPATCHES=40] */
#include <fcntl.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hsa_app.h"



/* Dispatch lines of the packet log that name kernel object ko. */
static int logged(const char *path, uint64_t ko) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  static char buf[1 << 22];
  size_t n = 0;
  ssize_t r;
  while (n < sizeof buf - 1 && (r = read(fd, buf + n, sizeof buf - 1 - n)) > 0) n += (size_t)r;
  close(fd);
  buf[n] = 0;
  char want[64];
  snprintf(want, sizeof want, "\"kernel_object\":%llu,", (unsigned long long)ko);
  int count = 0;
  for (char *line = buf; line && *line;) {
    char *nl = strchr(line, '\n');
    if (!nl) break; /* a line being written */
    *nl = 0;
    if (strstr(line, "\"type\":\"dispatch\"") && strstr(line, want)) count++;
    line = nl + 1;
  }
  return count;
}

static uint8_t kernel_object[64];

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "abort";
  int dispatches = argc > 2 ? atoi(argv[2]) : 40;
  const char *log = getenv("ROCPROF_VGPU_LOG");
  if (!log || dispatches < 1 || dispatches > 200) {
    fprintf(stderr, "usage: ROCPROF_VGPU_LOG=path hsa_crash abort|segv|term [DISPATCHES<=200]\n");
    return 2;
  }
  char path[4096];
  size_t o = 0;
  for (const char *p = log; *p && o + 24 < sizeof path; p++) {
    if (p[0] == '%' && p[1] == 'p') {
      o += (size_t)snprintf(path + o, sizeof path - o, "%d", (int)getpid());
      p++;
    } else {
      path[o++] = *p;
    }
  }
  path[o] = 0;

  CHECK(hsa_init());
  hsa_agent_t gpu = {0};
  hsa_iterate_agents(gpu_cb, &gpu);
  if (!gpu.handle) {
    fprintf(stderr, "no GPU agent\n");
    return 2;
  }
  hsa_queue_t *q;
  CHECK(hsa_queue_create(gpu, 256, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));
  hsa_signal_t gate, done[64];
  CHECK(hsa_signal_create(1, 0, NULL, &gate));
  hsa_barrier_and_packet_t b;
  memset(&b, 0, sizeof b);
  b.header = hdr(HSA_PACKET_TYPE_BARRIER_AND);
  b.dep_signal[0] = gate;
  submit(q, &b);
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
    if (i % 4 == 3) {
      CHECK(hsa_signal_create(1, 0, NULL, &done[i / 4 % 64]));
      p.completion_signal = done[i / 4 % 64];
    }
    submit(q, &p);
  }
  hsa_signal_store_screlease(gate, 0);

  struct timespec nap = {0, 200000};
  int seen = 0;
  for (int polls = 0; (seen = logged(path, (uint64_t)(uintptr_t)kernel_object)) < dispatches; polls++) {
    if (polls > 100000) { /* ~20 s and more */
      fprintf(stderr, "hsa_crash: the packet log %s shows %d of %d dispatches\n", path, seen, dispatches);
      return 3;
    }
    nanosleep(&nap, NULL);
  }
  printf("dispatches=%d\n", seen);
  fflush(stdout);
  if (!strcmp(mode, "segv")) {
    volatile int *null = NULL;
    *null = 1;
  } else if (!strcmp(mode, "term")) {
    for (;;) pause();
  }
  abort();
}
