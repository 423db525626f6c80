/* Per-architecture perf-counter register layout (generated data in
 * perfregs_table.c, see gen_perfregs.py for its provenance). */
#ifndef VGPU_PERFREGS_H
#define VGPU_PERFREGS_H
#include <stdint.h>

struct vgpu_perf_counter {
  uint32_t select, control, lo, hi, select1; /* dword register addresses, 0 = none */
};

struct vgpu_perf_block {
  const char *name;
  uint16_t instances;
  uint16_t ncounters;
  uint32_t attr;
  uint32_t event_mask; /* bits of the SELECT value holding the event id */
  const struct vgpu_perf_counter *counters;
};

struct vgpu_perf_arch {
  const char *label;
  unsigned se, sa_per_se, cu;
  unsigned nblocks;
  const struct vgpu_perf_block *blocks;
};

extern const struct vgpu_perf_arch vgpu_perf_gfx90a, vgpu_perf_gfx908, vgpu_perf_gfx906,
    vgpu_perf_gfx900, vgpu_perf_gfx1030;
#endif
