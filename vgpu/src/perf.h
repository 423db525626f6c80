/* Perf-counter register file, counter model and PM4 interpreter internals. */
#ifndef VGPU_PERF_H
#define VGPU_PERF_H
#include "perfregs.h"
#include "vgpu.h"

struct vgpu_model_shape {
  unsigned se, cu, tcc, clock_mhz;
};

uint64_t vgpu_busy_cycles(const struct vgpu_dispatch_info *d, unsigned clock_mhz);
uint64_t vgpu_model_value(enum vgpu_model m, const struct vgpu_dispatch_info *d,
                          const struct vgpu_model_shape *sh, unsigned se, unsigned inst);

/* One GPU's (or one standalone interpreter's) register state. */
struct vgpu_perf;
struct vgpu_perf *vgpu_perf_new(const struct vgpu_perf_arch *pa, unsigned gfx_level, unsigned clock_mhz);
void vgpu_perf_dispatch(struct vgpu_perf *p, const struct vgpu_dispatch_info *d);
int vgpu_perf_pm4(struct vgpu_perf *p, uint64_t queue_id, const uint32_t *ib, uint32_t ndw, int depth);
/* Standalone interpreter, exported for tests (see perf.c). */
struct vgpu_test_pm4;
struct vgpu_test_pm4 *vgpu_test_pm4_new(const char *label);
int vgpu_test_pm4_run(struct vgpu_test_pm4 *t, const uint32_t *ib, uint32_t ndw);
void vgpu_test_pm4_dispatch(struct vgpu_test_pm4 *t, uint32_t grid, uint32_t wg);
#endif
