/* Small raw-HSA helpers shared by the vGPU test drivers. */
#ifndef VGPU_HSA_UTIL_H
#define VGPU_HSA_UTIL_H
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x)                                                              \
  do {                                                                        \
    hsa_status_t s_ = (x);                                                    \
    if (s_ != HSA_STATUS_SUCCESS) {                                           \
      fprintf(stderr, "%s:%d: %s failed: 0x%x\n", __FILE__, __LINE__, #x, s_); \
      exit(2);                                                                \
    }                                                                         \
  } while (0)

static hsa_status_t find_gpu_cb(hsa_agent_t a, void *data) {
  hsa_device_type_t t;
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  if (t == HSA_DEVICE_TYPE_GPU) {
    *(hsa_agent_t *)data = a;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

static inline hsa_agent_t find_gpu(void) {
  hsa_agent_t gpu = {0};
  hsa_iterate_agents(find_gpu_cb, &gpu);
  if (!gpu.handle) {
    fprintf(stderr, "no GPU agent\n");
    exit(2);
  }
  return gpu;
}

/* Writes a 64-byte packet whose first 16 bits are its header: body first,
 * header last with release semantics, then rings the doorbell. */
static inline uint64_t submit(hsa_queue_t *q, const void *pkt) {
  uint64_t idx = hsa_queue_add_write_index_relaxed(q, 1);
  uint8_t *slot = (uint8_t *)q->base_address + (idx % q->size) * 64;
  memcpy(slot + 4, (const uint8_t *)pkt + 4, 60);
  uint32_t hdr;
  memcpy(&hdr, pkt, 4);
  __atomic_store_n((uint32_t *)slot, hdr, __ATOMIC_RELEASE);
  hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)idx);
  return idx;
}

static inline uint16_t header(hsa_packet_type_t t, int barrier) {
  return (uint16_t)(t << HSA_PACKET_HEADER_TYPE) | (uint16_t)(barrier << HSA_PACKET_HEADER_BARRIER) |
         (uint16_t)(HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE) |
         (uint16_t)(HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE);
}

/* A dispatch of a kernel object that need not exist: the virtual GPU runs
 * no ISA, it only models the dispatch. */
static inline void dispatch(hsa_queue_t *q, uint64_t kobj, uint32_t grid, uint16_t wg, hsa_signal_t sig) {
  hsa_kernel_dispatch_packet_t p;
  memset(&p, 0, sizeof p);
  p.header = header(HSA_PACKET_TYPE_KERNEL_DISPATCH, 1);
  p.setup = 1;
  p.workgroup_size_x = wg;
  p.workgroup_size_y = p.workgroup_size_z = 1;
  p.grid_size_x = grid;
  p.grid_size_y = p.grid_size_z = 1;
  p.kernel_object = kobj;
  p.completion_signal = sig;
  submit(q, &p);
}

static inline void barrier_and(hsa_queue_t *q, const hsa_signal_t *deps, int ndeps, hsa_signal_t sig) {
  hsa_barrier_and_packet_t b;
  memset(&b, 0, sizeof b);
  b.header = header(HSA_PACKET_TYPE_BARRIER_AND, 1);
  for (int i = 0; i < ndeps && i < 5; i++) b.dep_signal[i] = deps[i];
  b.completion_signal = sig;
  submit(q, &b);
}

static inline void barrier_or(hsa_queue_t *q, const hsa_signal_t *deps, int ndeps, hsa_signal_t sig) {
  hsa_barrier_or_packet_t b;
  memset(&b, 0, sizeof b);
  b.header = header(HSA_PACKET_TYPE_BARRIER_OR, 1);
  for (int i = 0; i < ndeps && i < 5; i++) b.dep_signal[i] = deps[i];
  b.completion_signal = sig;
  submit(q, &b);
}

static inline int wait_zero(hsa_signal_t s, uint64_t timeout_ns) {
  hsa_signal_value_t v = hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 0, timeout_ns, HSA_WAIT_STATE_BLOCKED);
  return v == 0 ? 0 : -1;
}
#endif
