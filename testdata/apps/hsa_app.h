/* hsa_app.h: what the raw-HSA sample apps share: a status check that exits
 * with the failing call's text, an agent iterator callback that finds the
 * first GPU, and the submission of one AQL packet (the header stored last,
 * with release order, then the doorbell). */
#ifndef HSA_APP_H
#define HSA_APP_H

#include <hsa/hsa.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x)                                                        \
  do {                                                                  \
    hsa_status_t s_ = (x);                                              \
    if (s_ != HSA_STATUS_SUCCESS) {                                     \
      fprintf(stderr, "%s:%d: %s: 0x%x\n", __FILE__, __LINE__, #x, s_); \
      exit(2);                                                          \
    }                                                                   \
  } while (0)

static inline hsa_status_t gpu_cb(hsa_agent_t a, void *d) {
  hsa_device_type_t t;
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  if (t == HSA_DEVICE_TYPE_GPU) {
    *(hsa_agent_t *)d = a;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

static inline void submit(hsa_queue_t *q, const void *pkt) {
  uint64_t i = hsa_queue_add_write_index_screlease(q, 1);
  uint8_t *slot = (uint8_t *)q->base_address + (i % q->size) * 64;
  memcpy(slot + 4, (const uint8_t *)pkt + 4, 60);
  uint32_t h;
  memcpy(&h, pkt, 4);
  __atomic_store_n((uint32_t *)slot, h, __ATOMIC_RELEASE);
  hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)i);
}

/* hdr is a packet header of the given type: barrier bit, system-scope
 * acquire and release fences. */
static inline uint16_t hdr(int type) {
  return (uint16_t)(type | (1 << HSA_PACKET_HEADER_BARRIER) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE));
}

#endif
