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

/* Modelled counters; the formulas are in counter_model.c and docs/virtual-gpu.md. */
enum vgpu_model {
  VGPU_M_NONE = 0,
  VGPU_M_SQ_WAVES, VGPU_M_SQ_LEVEL_WAVES, VGPU_M_SQ_BUSY_CYCLES, VGPU_M_SQ_BUSY_CU_CYCLES,
  VGPU_M_SQ_WAVE_CYCLES, VGPU_M_SQ_INSTS, VGPU_M_SQ_INSTS_VALU, VGPU_M_SQ_INSTS_SALU,
  VGPU_M_SQ_INSTS_SMEM, VGPU_M_SQ_INSTS_VMEM, VGPU_M_SQ_INSTS_VMEM_RD, VGPU_M_SQ_INSTS_VMEM_WR,
  VGPU_M_SQ_INSTS_LDS, VGPU_M_SQ_INSTS_BRANCH,
  VGPU_M_GRBM_COUNT, VGPU_M_GRBM_GUI_ACTIVE, VGPU_M_GRBM_CP_BUSY, VGPU_M_GRBM_SPI_BUSY,
  VGPU_M_CPC_CPC_STAT_BUSY, VGPU_M_SPI_CSN_BUSY, VGPU_M_SPI_CSN_WAVE,
  VGPU_M_TCC_REQ, VGPU_M_TCC_HIT, VGPU_M_TCC_MISS, VGPU_M_TCC_READ, VGPU_M_TCC_WRITE,
  VGPU_M_TCC_EA_RDREQ, VGPU_M_TCC_EA_WRREQ,
};

struct vgpu_perf_event {
  const char *name, *block;
  uint32_t event;
  enum vgpu_model model;
};

struct vgpu_perf_arch {
  const char *label;
  unsigned se, sa_per_se, cu; /* totals over all XCCs, as AQLprofile reports them */
  unsigned xcc;
  unsigned nblocks;
  const struct vgpu_perf_block *blocks;
  unsigned nevents;
  const struct vgpu_perf_event *events;
};

extern const struct vgpu_perf_arch vgpu_perf_gfx90a, vgpu_perf_gfx908, vgpu_perf_gfx906,
    vgpu_perf_gfx900, vgpu_perf_gfx1030, vgpu_perf_gfx942, vgpu_perf_gfx1100;
#endif
