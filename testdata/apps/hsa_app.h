/* hsa_app.h: what the raw-HSA sample apps share: a status check that exits
 * with the failing call's text, and an agent iterator callback that finds the
 * first GPU. */
#ifndef HSA_APP_H
#define HSA_APP_H

#include <hsa/hsa.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                                        \
  do {                                                                  \
    hsa_status_t s_ = (x);                                              \
    if (s_ != HSA_STATUS_SUCCESS) {                                     \
      fprintf(stderr, "%s:%d: %s: 0x%x\n", __FILE__, __LINE__, #x, s_); \
      exit(2);                                                          \
    }                                                                   \
  } while (0)

static hsa_status_t gpu_cb(hsa_agent_t a, void *d) {
  hsa_device_type_t t;
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  if (t == HSA_DEVICE_TYPE_GPU) {
    *(hsa_agent_t *)d = a;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

#endif
