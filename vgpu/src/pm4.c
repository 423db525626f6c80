#include "vgpu.h"
void vgpu_perf_on_dispatch(uint32_t node, const struct vgpu_dispatch_info *d) { (void)node; (void)d; }
int vgpu_pm4_execute(uint32_t node, uint64_t queue_id, const uint32_t *ib, uint32_t ndw, int depth) { (void)node; (void)queue_id; (void)ib; (void)ndw; (void)depth; return 0; }
