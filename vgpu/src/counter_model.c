/* The deterministic counter model: what each modelled counter adds for one
 * dispatch at one (SE, instance) coordinate. docs/virtual-gpu.md states the
 * same formulas; change both together. */
#include "perf.h"

/* Workgroup i runs on SE (i mod S), so SE s gets floor(W/S) workgroups plus
 * one if s < W mod S. */
static uint64_t share(uint64_t total, unsigned parts, unsigned i) {
  return total / parts + (i < total % parts ? 1 : 0);
}

uint64_t vgpu_busy_cycles(const struct vgpu_dispatch_info *d, unsigned clock_mhz) {
  return d->duration_ns * clock_mhz / 1000;
}

uint64_t vgpu_model_value(enum vgpu_model m, const struct vgpu_dispatch_info *d, const struct vgpu_model_shape *sh,
                          unsigned se, unsigned inst) {
  uint64_t wpg = (d->wg[0] * (uint64_t)d->wg[1] * d->wg[2] + d->wave_size - 1) / d->wave_size;
  uint64_t wg_se = share(d->workgroups, sh->se, se);
  uint64_t waves_se = wg_se * wpg;
  uint64_t cycles = vgpu_busy_cycles(d, sh->clock_mhz);
  uint64_t req = share(4 * d->waves, sh->tcc, inst); /* 4 L2 requests per wave */
  uint64_t miss = (req + 3) / 4;                     /* 1 in 4 misses, rounded up */
  unsigned cu_per_se = sh->cu / sh->se;
  switch (m) {
  case VGPU_M_SQ_WAVES:
  case VGPU_M_SQ_LEVEL_WAVES: return waves_se;
  case VGPU_M_SQ_BUSY_CYCLES: return wg_se ? cycles : 0;
  case VGPU_M_SQ_BUSY_CU_CYCLES: return cycles * (wg_se < cu_per_se ? wg_se : cu_per_se);
  case VGPU_M_SQ_WAVE_CYCLES: return waves_se * cycles;
  case VGPU_M_SQ_INSTS_VALU: return 16 * waves_se;
  case VGPU_M_SQ_INSTS_SALU: return 8 * waves_se;
  case VGPU_M_SQ_INSTS_SMEM: return 2 * waves_se;
  case VGPU_M_SQ_INSTS_VMEM_RD: return 2 * waves_se;
  case VGPU_M_SQ_INSTS_VMEM_WR: return 1 * waves_se;
  case VGPU_M_SQ_INSTS_VMEM: return 3 * waves_se;
  case VGPU_M_SQ_INSTS_LDS: return d->lds ? 4 * waves_se : 0;
  case VGPU_M_SQ_INSTS_BRANCH: return 1 * waves_se;
  case VGPU_M_SQ_INSTS: return (30 + (d->lds ? 4 : 0)) * waves_se;
  case VGPU_M_GRBM_COUNT: return cycles + 1000;
  case VGPU_M_GRBM_GUI_ACTIVE:
  case VGPU_M_GRBM_CP_BUSY:
  case VGPU_M_GRBM_SPI_BUSY:
  case VGPU_M_CPC_CPC_STAT_BUSY:
  case VGPU_M_SPI_CSN_BUSY: return cycles;
  case VGPU_M_SPI_CSN_WAVE: return waves_se; /* per SE: the SEs sum to the dispatch's waves */
  case VGPU_M_TCC_REQ: return req;
  case VGPU_M_TCC_HIT: return req - miss;
  case VGPU_M_TCC_MISS:
  case VGPU_M_TCC_EA_RDREQ: return miss;
  case VGPU_M_TCC_WRITE:
  case VGPU_M_TCC_EA_WRREQ: return req / 4;
  case VGPU_M_TCC_READ: return req - req / 4;
  default: return 0;
  }
}
