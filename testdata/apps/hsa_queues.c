/* Raw HSA: several queues, barrier-AND and barrier-OR packets with
 * cross-queue dependencies, checked for the HSA ordering rules; then ROCR's
 * own fill and copy paths (hsa_amd_memory_fill, hsa_memory_copy,
 * hsa_amd_memory_async_copy) on device memory, checked word by word, and
 * the profiling timestamps of a dispatch and of an async copy.
 * Kernel dispatches use a placeholder kernel object: the virtual GPU (and
 * this test) only care about packet processing. Prints the packet counts. */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hsa_app.h"



static void barrier(hsa_queue_t *q, int type, hsa_signal_t *deps, int n, hsa_signal_t done) {
  hsa_barrier_and_packet_t b;
  memset(&b, 0, sizeof b);
  b.header = hdr(type);
  for (int i = 0; i < n; i++) b.dep_signal[i] = deps[i];
  b.completion_signal = done;
  submit(q, &b);
}

static uint8_t kernel_object[64];

static void dispatch(hsa_queue_t *q, uint32_t grid, hsa_signal_t done) {
  hsa_kernel_dispatch_packet_t p;
  memset(&p, 0, sizeof p);
  p.header = hdr(HSA_PACKET_TYPE_KERNEL_DISPATCH);
  p.setup = 1;
  p.workgroup_size_x = 64;
  p.workgroup_size_y = p.workgroup_size_z = 1;
  p.grid_size_x = grid;
  p.grid_size_y = p.grid_size_z = 1;
  p.kernel_object = (uint64_t)(uintptr_t)kernel_object;
  p.completion_signal = done;
  submit(q, &p);
}

static int expect(const char *what, hsa_signal_t s, hsa_signal_value_t want) {
  hsa_signal_value_t v = hsa_signal_load_scacquire(s);
  if (v != want) {
    fprintf(stderr, "%s: signal is %ld, want %ld\n", what, (long)v, (long)want);
    return 1;
  }
  return 0;
}

static int wait0(hsa_signal_t s) {
  return hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 0, 5000000000ull, HSA_WAIT_STATE_BLOCKED) != 0;
}

static hsa_status_t pool_cb(hsa_amd_memory_pool_t p, void *d) {
  hsa_amd_segment_t seg;
  hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg);
  if (seg == HSA_AMD_SEGMENT_GLOBAL) {
    *(hsa_amd_memory_pool_t *)d = p;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t cpu_cb(hsa_agent_t a, void *d) {
  hsa_device_type_t t;
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  if (t == HSA_DEVICE_TYPE_CPU) {
    *(hsa_agent_t *)d = a;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

/* Fill device memory with ROCR's fill kernel, copy it back with
 * hsa_memory_copy and with an SDMA async copy, and check every word. */
static int check_memory_paths(hsa_agent_t gpu) {
  hsa_amd_memory_pool_t pool = {0};
  hsa_amd_agent_iterate_memory_pools(gpu, pool_cb, &pool);
  hsa_agent_t cpu = {0};
  hsa_iterate_agents(cpu_cb, &cpu);
  const size_t words = (1 << 18) + 3;
  uint32_t *dev, *dev2;
  CHECK(hsa_amd_memory_pool_allocate(pool, words * 4, 0, (void **)&dev));
  CHECK(hsa_amd_memory_pool_allocate(pool, words * 4, 0, (void **)&dev2));
  uint32_t *host = malloc(words * 4);
  CHECK(hsa_amd_memory_fill(dev, 0x12345678, words));
  CHECK(hsa_memory_copy(host, dev, words * 4));
  for (size_t i = 0; i < words; i++)
    if (host[i] != 0x12345678) {
      fprintf(stderr, "fill/hsa_memory_copy: word %zu is 0x%x\n", i, host[i]);
      return 1;
    }
  for (size_t i = 0; i < words; i++) host[i] = (uint32_t)i * 2654435761u;
  hsa_agent_t agents[2] = {gpu, cpu};
  CHECK(hsa_amd_agents_allow_access(2, agents, NULL, dev2));
  void *host_gpu = NULL;
  CHECK(hsa_amd_memory_lock(host, words * 4, &gpu, 1, &host_gpu));
  hsa_signal_t s;
  CHECK(hsa_signal_create(1, 0, NULL, &s));
  CHECK(hsa_amd_profiling_async_copy_enable(true));
  uint64_t t0;
  CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t0));
  CHECK(hsa_amd_memory_async_copy(dev2, gpu, host_gpu, cpu, words * 4, 0, NULL, s));
  if (wait0(s)) {
    fprintf(stderr, "async copy did not complete\n");
    return 1;
  }
  uint64_t t1;
  CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t1));
  hsa_amd_profiling_async_copy_time_t ct;
  CHECK(hsa_amd_profiling_get_async_copy_time(s, &ct));
  if (!(t0 <= ct.start && ct.start < ct.end && ct.end <= t1)) {
    fprintf(stderr, "async copy time [%llu, %llu] outside [%llu, %llu]\n", (unsigned long long)ct.start,
            (unsigned long long)ct.end, (unsigned long long)t0, (unsigned long long)t1);
    return 1;
  }
  memset(host, 0, words * 4);
  CHECK(hsa_memory_copy(host, dev2, words * 4));
  for (size_t i = 0; i < words; i++)
    if (host[i] != (uint32_t)i * 2654435761u) {
      fprintf(stderr, "async copy: word %zu is 0x%x\n", i, host[i]);
      return 1;
    }
  hsa_signal_destroy(s);
  hsa_amd_memory_unlock(host);
  free(host);
  hsa_amd_memory_pool_free(dev);
  hsa_amd_memory_pool_free(dev2);
  return 0;
}

/* `hsa_queues coop`: the runtime's cooperative queue, which it shares among
 * its creations (one per GPU, counted): two creations return the same queue,
 * which still runs after one destroy; after the last, a new creation makes a
 * new one. A profiler that wraps the queue must keep the runtime's count
 * right, or the app crashes at hsa_shut_down (cmd/rocprof-go
 * TestTracedAppsExitCleanly). (ROCR 7.2 itself crashes in hsa_shut_down when
 * a cooperative queue is left undestroyed: every queue is destroyed here.) */
static int coop(hsa_agent_t gpu) {
  hsa_queue_t *a, *b, *c;
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  CHECK(hsa_queue_create(gpu, 256, HSA_QUEUE_TYPE_COOPERATIVE, NULL, NULL, UINT32_MAX, UINT32_MAX, &a));
  CHECK(hsa_queue_create(gpu, 256, HSA_QUEUE_TYPE_COOPERATIVE, NULL, NULL, UINT32_MAX, UINT32_MAX, &b));
  int shared = a == b;
  dispatch(a, 4096, done);
  if (wait0(done)) {
    fprintf(stderr, "cooperative dispatch did not complete\n");
    return 1;
  }
  CHECK(hsa_queue_destroy(b));
  hsa_signal_store_screlease(done, 1);
  dispatch(a, 4096, done);
  if (wait0(done)) {
    fprintf(stderr, "cooperative dispatch after one destroy did not complete\n");
    return 1;
  }
  CHECK(hsa_queue_destroy(a)); /* the last reference when shared */
  CHECK(hsa_queue_create(gpu, 256, HSA_QUEUE_TYPE_COOPERATIVE, NULL, NULL, UINT32_MAX, UINT32_MAX, &c));
  hsa_signal_store_screlease(done, 1);
  dispatch(c, 4096, done);
  if (wait0(done)) {
    fprintf(stderr, "cooperative dispatch on a new queue did not complete\n");
    return 1;
  }
  CHECK(hsa_queue_destroy(c));
  hsa_signal_destroy(done);
  printf("cooperative shared=%d dispatches=3\n", shared);
  CHECK(hsa_shut_down());
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "coop") == 0) {
    CHECK(hsa_init());
    hsa_agent_t gpu = {0};
    hsa_iterate_agents(gpu_cb, &gpu);
    return coop(gpu);
  }
  int nq = argc > 1 ? atoi(argv[1]) : 4;
  if (nq < 2 || nq > 16) nq = 4;
  CHECK(hsa_init());
  hsa_agent_t gpu = {0};
  hsa_iterate_agents(gpu_cb, &gpu);
  hsa_queue_t *q[16];
  for (int i = 0; i < nq; i++)
    CHECK(hsa_queue_create(gpu, 256, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q[i]));
  hsa_signal_t gate, gate2, a_done, b_done, or_done, k_done;
  CHECK(hsa_signal_create(1, 0, NULL, &gate));
  CHECK(hsa_signal_create(1, 0, NULL, &gate2));
  CHECK(hsa_signal_create(1, 0, NULL, &a_done));
  CHECK(hsa_signal_create(1, 0, NULL, &b_done));
  CHECK(hsa_signal_create(1, 0, NULL, &or_done));
  CHECK(hsa_signal_create(nq, 0, NULL, &k_done));
  long packets = 0;
  /* Queue 0 blocks on a barrier-AND of {gate, gate2}. */
  hsa_signal_t and_deps[2] = {gate, gate2};
  barrier(q[0], HSA_PACKET_TYPE_BARRIER_AND, and_deps, 2, a_done);
  packets++;
  /* Queue 1 blocks on a barrier-OR of {gate, b_done}. */
  hsa_signal_t or_deps[2] = {gate2, b_done};
  barrier(q[1], HSA_PACKET_TYPE_BARRIER_OR, or_deps, 2, or_done);
  packets++;
  /* Every queue but 0 and 1 keeps running while those are blocked. */
  for (int i = 2; i < nq; i++) {
    dispatch(q[i], 4096, k_done);
    packets++;
  }
  if (hsa_signal_wait_scacquire(k_done, HSA_SIGNAL_CONDITION_EQ, 2, 5000000000ull, HSA_WAIT_STATE_BLOCKED) != 2) {
    fprintf(stderr, "independent queues made no progress while others were blocked\n");
    return 1;
  }
  usleep(20000);
  if (expect("barrier-AND before its deps", a_done, 1) || expect("barrier-OR before any dep", or_done, 1)) return 1;
  /* One dependency of the AND is not enough... */
  hsa_signal_store_screlease(gate, 0);
  usleep(20000);
  if (expect("barrier-AND with one of two deps", a_done, 1)) return 1;
  /* ...but one of the OR's is. */
  hsa_signal_store_screlease(gate2, 0);
  if (wait0(or_done) || wait0(a_done)) {
    fprintf(stderr, "barriers did not complete once their dependencies were met\n");
    return 1;
  }
  /* Both blocked queues run a dispatch afterwards. */
  dispatch(q[0], 64, k_done);
  dispatch(q[1], 64, k_done);
  packets += 2;
  if (wait0(k_done)) {
    fprintf(stderr, "dispatches after the barriers did not complete\n");
    return 1;
  }
  /* A barrier-OR with no dependencies completes at once. */
  barrier(q[0], HSA_PACKET_TYPE_BARRIER_OR, NULL, 0, b_done);
  packets++;
  if (wait0(b_done)) {
    fprintf(stderr, "empty barrier-OR did not complete\n");
    return 1;
  }
  /* Profiled dispatch: start/end in the system timestamp domain, ordered. */
  CHECK(hsa_amd_profiling_set_profiler_enabled(q[2], 1));
  hsa_signal_t prof;
  CHECK(hsa_signal_create(1, 0, NULL, &prof));
  uint64_t t0, t1;
  CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t0));
  dispatch(q[2], 1 << 20, prof);
  if (wait0(prof)) {
    fprintf(stderr, "profiled dispatch did not complete\n");
    return 1;
  }
  CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t1));
  hsa_amd_profiling_dispatch_time_t dt;
  CHECK(hsa_amd_profiling_get_dispatch_time(gpu, prof, &dt));
  if (!(t0 <= dt.start && dt.start < dt.end && dt.end <= t1)) {
    fprintf(stderr, "dispatch time [%llu, %llu] outside [%llu, %llu]\n", (unsigned long long)dt.start,
            (unsigned long long)dt.end, (unsigned long long)t0, (unsigned long long)t1);
    return 1;
  }
  hsa_signal_destroy(prof);
  packets++;
  if (check_memory_paths(gpu)) return 1;
  printf("queues=%d packets=%ld memory=ok\n", nq, packets);
  for (int i = 0; i < nq; i++) hsa_queue_destroy(q[i]);
  hsa_signal_t all[6] = {gate, gate2, a_done, b_done, or_done, k_done};
  for (int i = 0; i < 6; i++) hsa_signal_destroy(all[i]);
  CHECK(hsa_shut_down());
  return 0;
}
