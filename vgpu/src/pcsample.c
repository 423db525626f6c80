/* PC sampling (docs/pc-sampling.md): the control ioctl
 * (AMDKFD_IOC_PC_SAMPLE, ROCm's driver): the configurations a GPU offers,
 * and the sessions a process creates, starts, stops and destroys on it; and
 * the samples of a started host-trap or stochastic session, written as
 * ROCR's trap handler writes them (below). The ioctl's answers, with the
 * driver's error numbers:
 *
 *   every op but QUERY/CREATE on an unknown trace id   EINVAL
 *   an unknown gpu_id or op                             EINVAL
 *   QUERY on a GPU without PC sampling                  EOPNOTSUPP
 *   QUERY with too small an array                       ENOSPC (count needed returned)
 *   CREATE with num_sample_info != 1                    EINVAL
 *   CREATE of a configuration the GPU does not offer    EOPNOTSUPP
 *   CREATE of a second, different configuration         EEXIST (the current one written back)
 *   START of a started session, STOP of a stopped one   EALREADY
 *   DESTROY of a started session                        EBUSY
 *
 * Sessions with the same configuration share it (the driver counts its
 * users); the configuration is released with its last session. While one
 * exists, a query without VGPU_PCS_QUERY_FULL reports only it. The state is
 * per GPU of this process (a real driver's is per device, shared by every
 * process: one process is all the virtual GPU ever sees). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <hsa/amd_hsa_signal.h>

#include "kfd_uapi.h"
#include "vgpu.h"

/* Host trap: an interval in microseconds, from 1 to any. */
static const struct vgpu_pc_sample_info hosttrap_us = {
    .interval_min = 1, .interval_max = UINT64_MAX, .method = VGPU_PCS_METHOD_HOSTTRAP, .type = VGPU_PCS_TYPE_TIME_US};
/* Stochastic (hardware) sampling of MI300: shader-clock cycles, a power of
 * two from 256 to 2^31. */
static const struct vgpu_pc_sample_info stochastic_cycles = {.interval_min = 256,
                                                             .interval_max = 1ull << 31,
                                                             .flags = VGPU_PCS_FLAG_POWER_OF_2,
                                                             .method = VGPU_PCS_METHOD_STOCHASTIC,
                                                             .type = VGPU_PCS_TYPE_CLOCK_CYCLES};

/* The configurations of the emulated architecture, in the driver's order:
 * gfx90a (GC 9.4.2) host trap; gfx942 (GC 9.4.3) host trap and stochastic;
 * the others none. */
static unsigned formats(const struct vgpu_pc_sample_info *out[2]) {
  const char *n = vgpu_cfg.arch ? vgpu_cfg.arch->name : "";
  if (!strcmp(n, "gfx90a")) {
    out[0] = &hosttrap_us;
    return 1;
  }
  if (!strcmp(n, "gfx942")) {
    out[0] = &hosttrap_us;
    out[1] = &stochastic_cycles;
    return 2;
  }
  return 0;
}

#define MAX_SESSIONS 64
struct gpu_pcs;
static void start_sampling(struct gpu_pcs *p, int g);

struct session {
  uint32_t id; /* 0: free slot */
  bool started;
};

struct gpu_pcs {
  uint64_t tma;                        /* SET_TRAP_HANDLER's trap-memory area */
  uint64_t data;                       /* started: the method's pcs_sampling_data_t (GPU address) */
  unsigned running;                    /* started sessions */
  unsigned users;                      /* sessions sharing `current` */
  struct vgpu_pc_sample_info current;  /* valid while users > 0 */
  uint32_t next_id;                    /* ids are handed out cyclically from 1 */
  struct session s[MAX_SESSIONS];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gpu_pcs gpus[VGPU_MAX_GPUS];

static struct session *find(struct gpu_pcs *p, uint32_t id) {
  if (!id) return NULL;
  for (unsigned i = 0; i < MAX_SESSIONS; i++)
    if (p->s[i].id == id) return &p->s[i];
  return NULL;
}

static int query(struct gpu_pcs *p, struct vgpu_pc_sample_args *a) {
  const struct vgpu_pc_sample_info *f[2];
  unsigned n = formats(f);
  if (!n) return -EOPNOTSUPP;
  bool current_only = !(a->flags & VGPU_PCS_QUERY_FULL) && p->users;
  if (current_only) n = 1;
  if (!a->sample_info_ptr || !a->num_sample_info) {
    a->num_sample_info = n;
    return 0;
  }
  if (a->num_sample_info < n) {
    a->num_sample_info = n;
    return -ENOSPC;
  }
  struct vgpu_pc_sample_info *out = (void *)(uintptr_t)a->sample_info_ptr;
  if (current_only) {
    out[0] = p->current;
  } else {
    for (unsigned i = 0; i < n; i++) out[i] = *f[i];
  }
  a->num_sample_info = n;
  return 0;
}

static bool offered(const struct vgpu_pc_sample_info *in) {
  const struct vgpu_pc_sample_info *f[2];
  unsigned n = formats(f);
  for (unsigned i = 0; i < n; i++) {
    if (in->method != f[i]->method || in->type != f[i]->type) continue;
    if (in->interval < f[i]->interval_min || in->interval > f[i]->interval_max) continue;
    if ((f[i]->flags & VGPU_PCS_FLAG_POWER_OF_2) && (in->interval & (in->interval - 1))) continue;
    return true;
  }
  return false;
}

static bool same_config(const struct vgpu_pc_sample_info *x, const struct vgpu_pc_sample_info *y) {
  return x->interval == y->interval && x->method == y->method && x->type == y->type;
}

static int create(struct gpu_pcs *p, struct vgpu_pc_sample_args *a) {
  if (a->num_sample_info != 1) return -EINVAL;
  if (!a->sample_info_ptr) return -EFAULT;
  struct vgpu_pc_sample_info *io = (void *)(uintptr_t)a->sample_info_ptr;
  struct vgpu_pc_sample_info in = *io;
  if (!offered(&in)) return -EOPNOTSUPP;
  if (p->users && !same_config(&p->current, &in)) {
    *io = p->current;
    return -EEXIST;
  }
  struct session *slot = NULL;
  for (unsigned i = 0; i < MAX_SESSIONS && !slot; i++)
    if (!p->s[i].id) slot = &p->s[i];
  if (!slot) return -ENOMEM;
  uint32_t id = p->next_id ? p->next_id : 1;
  while (find(p, id)) id = id == INT32_MAX ? 1 : id + 1;
  p->next_id = id == INT32_MAX ? 1 : id + 1;
  *slot = (struct session){.id = id};
  if (!p->users++) {
    p->current = in;
    p->current.interval_min = p->current.interval_max = p->current.flags = 0;
    const struct vgpu_pc_sample_info *f[2];
    unsigned n = formats(f);
    for (unsigned i = 0; i < n; i++)
      if (f[i]->method == in.method && f[i]->type == in.type) {
        p->current.interval_min = f[i]->interval_min;
        p->current.interval_max = f[i]->interval_max;
        p->current.flags = f[i]->flags;
      }
  }
  a->trace_id = id;
  return 0;
}

/* --- samples ------------------------------------------------------------------
 * ROCR's second-level trap handler (trap_handler.s, PC_SAMPLING_GFX9) finds
 * in the TMA two pointers, to the host-trap and to the stochastic
 * pcs_sampling_data_t:
 *   0x00 u64 buf_write_val   bit 63: buffer in use; low bits: entries taken
 *   0x08 u32 buf_size        samples per buffer
 *   0x10 u32 buf_written_val0, 0x14 u32 buf_watermark0, 0x18 done_sig0
 *   0x20 u32 buf_written_val1, 0x24 u32 buf_watermark1, 0x28 done_sig1
 *   0x40 two buffers of buf_size 64-byte samples
 * Per sample a wave takes an entry (atomic add on buf_write_val; an entry
 * past buf_size is lost: ROCR counts the excess when it switches buffers),
 * writes the sample, increments the buffer's written count, and the wave
 * that finds the count at the watermark sets the buffer's done signal to 0
 * and raises its event. ROCR's sampling thread then switches buffers and
 * copies the full one out with a PM4 IB (perf.c: ATOMIC_MEM, COPY_DATA,
 * WAIT_REG_MEM, DMA_DATA, WRITE_DATA). */

struct pcs_data {
  uint64_t buf_write_val;
  uint32_t buf_size, reserved0;
  uint32_t written0, watermark0;
  uint64_t done0;
  uint32_t written1, watermark1;
  uint64_t done1;
  uint8_t reserved1[16];
};
_Static_assert(sizeof(struct pcs_data) == 0x40, "pcs_sampling_data_t");

struct pcs_sample { /* perf_sample_hosttrap_v1_t / perf_sample_snapshot_v1_t */
  uint64_t pc, exec_mask;
  uint32_t wg[3], chiplet_and_wave, hw_id;
  uint32_t snapshot[3]; /* stochastic: perf_snapshot_data, _data1, _data2 */
  uint64_t timestamp, correlation_id;
};
_Static_assert(sizeof(struct pcs_sample) == 64, "sample size");

void vgpu_pcs_set_tma(unsigned gpu, uint64_t tma) {
  if (gpu >= VGPU_MAX_GPUS) return;
  pthread_mutex_lock(&lock);
  gpus[gpu].tma = tma;
  pthread_mutex_unlock(&lock);
}

/* Under lock, at the first START: the started method's buffers, from the TMA. */
static void start_sampling(struct gpu_pcs *p, int g) {
  uint64_t data = 0;
  if (p->tma && vgpu_mem_known(p->tma, 16, false)) {
    const uint64_t *t = vgpu_host(p->tma);
    data = t[p->current.method == VGPU_PCS_METHOD_STOCHASTIC ? 1 : 0];
  }
  if (!data || !vgpu_mem_known(data, sizeof(struct pcs_data), false)) {
    vgpu_error("PC sampling started on GPU %d without sample buffers in the trap handler's memory", g);
    data = 0;
  }
  __atomic_store_n(&p->data, data, __ATOMIC_RELEASE);
}

bool vgpu_pcs_active(unsigned gpu) {
  return gpu < VGPU_MAX_GPUS && __atomic_load_n(&gpus[gpu].data, __ATOMIC_ACQUIRE);
}

static void send_signal(uint64_t handle) {
  if (!handle) return;
  amd_signal_t *s = vgpu_host(handle);
  __atomic_store_n(&s->value, 0, __ATOMIC_RELEASE);
  if (s->event_mailbox_ptr && s->event_id) {
    __atomic_store_n((uint64_t *)vgpu_host(s->event_mailbox_ptr), (uint64_t)s->event_id, __ATOMIC_RELEASE);
    vgpu_event_signal_id(s->event_id);
  }
}

/* One wave entering the trap handler. */
static void trap(uint64_t data, const struct pcs_sample *smp) {
  struct pcs_data *d = vgpu_host(data);
  uint64_t e = __atomic_fetch_add(&d->buf_write_val, 1, __ATOMIC_ACQ_REL);
  unsigned which = (unsigned)(e >> 63);
  uint64_t entry = e & (UINT64_MAX >> 1);
  uint32_t size = __atomic_load_n(&d->buf_size, __ATOMIC_RELAXED);
  if (entry >= size) return; /* lost */
  struct pcs_sample *buf = (struct pcs_sample *)((uint8_t *)d + sizeof *d) + (which ? size : 0);
  buf[entry] = *smp;
  uint32_t *written = which ? &d->written1 : &d->written0;
  uint32_t done = __atomic_fetch_add(written, 1, __ATOMIC_ACQ_REL);
  if (done == (which ? d->watermark1 : d->watermark0)) send_signal(which ? d->done1 : d->done0);
}

/* --- the stochastic model's snapshot -------------------------------------------
 * gfx9's perf_snapshot_data as rocprofiler-sdk's GFX9 parser reads it: bit 0
 * valid, 1 issued, 2 dual-issue VALU, 6:3 instruction type, 9:7 not-issued
 * reason, 25:10 arbiter state (issue bits 0-7, stall bits 8-15, per pipe:
 * misc, exp, flat, lds, vmem_tex, scalar, matrix, valu), 26 error;
 * perf_snapshot_data1 bits 5:0 the CU's wave count. The emulated values are
 * fixed functions of the sampled instruction's encoding class and of the
 * sample's index in its dispatch (docs/pc-sampling.md). */
enum { /* gfx9 instruction types (the register's codes) */
  T_VALU = 0, T_MATRIX, T_SCALAR, T_TEX, T_LDS, T_FLAT, T_EXPORT, T_MESSAGE, T_BARRIER,
  T_BRANCH_NOT_TAKEN, T_BRANCH_TAKEN, T_JUMP, T_OTHER, T_NO_INST
};
enum { /* gfx9 not-issued reasons */
  R_NO_INSTRUCTION_AVAILABLE = 0, R_ALU_DEPENDENCY, R_WAITCNT, R_INTERNAL_INSTRUCTION, R_BARRIER_WAIT,
  R_ARBITER_NOT_WIN, R_ARBITER_WIN_EX_STALL, R_OTHER_WAIT
};
enum { /* arbiter pipes (bit in the issue/stall halves) */
  P_MISC = 0, P_EXP, P_FLAT, P_LDS, P_VMEM_TEX, P_SCALAR, P_MATRIX, P_VALU
};

/* The instruction class of the gfx9 instruction word x: its type when
 * issued, its reason when not, and its arbiter pipe. */
struct insn_class {
  unsigned type, reason, pipe;
};
static struct insn_class classify(uint32_t x) {
  unsigned top9 = x >> 23, top6 = x >> 26;
  if ((x >> 31) == 0 || (x >> 25) == 0x3f || (x >> 25) == 0x3e || top6 == 0x35) /* VOP2, VOP1, VOPC, VINTRP */
    return (struct insn_class){T_VALU, R_ALU_DEPENDENCY, P_VALU};
  if (top9 == 0x17f) { /* SOPP */
    unsigned op = (x >> 16) & 0x7f;
    if (op == 12) return (struct insn_class){T_OTHER, R_WAITCNT, P_MISC};              /* s_waitcnt */
    if (op == 10) return (struct insn_class){T_BARRIER, R_BARRIER_WAIT, P_MISC};       /* s_barrier */
    if (op == 2) return (struct insn_class){T_BRANCH_TAKEN, R_NO_INSTRUCTION_AVAILABLE, P_MISC}; /* s_branch */
    if ((op >= 4 && op <= 9) || (op >= 23 && op <= 26)) /* s_cbranch_*: the fall-through */
      return (struct insn_class){T_BRANCH_NOT_TAKEN, R_NO_INSTRUCTION_AVAILABLE, P_MISC};
    if (op == 16 || op == 17) return (struct insn_class){T_MESSAGE, R_ARBITER_NOT_WIN, P_MISC}; /* s_sendmsg */
    return (struct insn_class){T_OTHER, R_ARBITER_NOT_WIN, P_MISC}; /* s_endpgm, s_nop, ... */
  }
  if (top9 == 0x17d) { /* SOP1: s_getpc/s_setpc/s_swappc are jumps */
    unsigned op = (x >> 8) & 0xff;
    if (op >= 28 && op <= 30) return (struct insn_class){T_JUMP, R_NO_INSTRUCTION_AVAILABLE, P_MISC};
  }
  if ((x >> 30) == 2 || (x >> 28) == 0xb || top6 == 0x30) /* SOP1/SOPC/SOP2, SOPK, SMEM */
    return (struct insn_class){T_SCALAR, R_ARBITER_NOT_WIN, P_SCALAR};
  if (top9 == 0x1a7) { /* VOP3P: MFMA opcodes (64 and up) are matrix */
    if (((x >> 16) & 0x7f) >= 64) return (struct insn_class){T_MATRIX, R_ALU_DEPENDENCY, P_MATRIX};
    return (struct insn_class){T_VALU, R_ALU_DEPENDENCY, P_VALU};
  }
  if (top6 == 0x34) return (struct insn_class){T_VALU, R_ALU_DEPENDENCY, P_VALU}; /* VOP3 */
  if (top6 == 0x36) return (struct insn_class){T_LDS, R_ARBITER_NOT_WIN, P_LDS};  /* DS */
  if (top6 == 0x37) return (struct insn_class){T_FLAT, R_ARBITER_NOT_WIN, P_FLAT}; /* FLAT, GLOBAL, SCRATCH */
  if (top6 == 0x38 || top6 == 0x3a || top6 == 0x3c) /* MUBUF, MTBUF, MIMG */
    return (struct insn_class){T_TEX, R_ARBITER_NOT_WIN, P_VMEM_TEX};
  if (top6 == 0x31) return (struct insn_class){T_EXPORT, R_ARBITER_NOT_WIN, P_EXP};
  return (struct insn_class){T_OTHER, R_ARBITER_NOT_WIN, P_MISC};
}

/* The snapshot of sample `idx` of its dispatch, at instruction word x: the
 * even samples issued their instruction (type from its class; the reason
 * field then reads OTHER_WAIT, as MI300 reports alongside an issue), the odd
 * ones did not (type NO_INST, the class's reason); the class's pipe issued
 * or stalled. */
static uint32_t snapshot(uint32_t x, uint64_t idx) {
  struct insn_class c = classify(x);
  if (idx % 2 == 0) return 1u | 1u << 1 | c.type << 3 | (uint32_t)R_OTHER_WAIT << 7 | 1u << (10 + c.pipe);
  return 1u | (uint32_t)T_NO_INST << 3 | c.reason << 7 | 1u << (10 + 8 + c.pipe);
}

/* Shared by both models: where a dispatch's waves are (the counter model's
 * placement of workgroups) and what its samples name. */
struct pcs_geom {
  const struct vgpu_arch *a;
  const struct vgpu_kernel *k;
  uint64_t wpg, ngx, ngy, nwg, corr, exec;
  unsigned xcc, se_per_xcc, cu_per_se, simds;
};

static void sample_wave(const struct pcs_geom *g, struct pcs_sample *s, uint64_t w, uint64_t pc_pick) {
  const struct vgpu_arch *a = g->a;
  uint64_t wgid = w / g->wpg, wave_in_wg = w % g->wpg;
  memset(s, 0, sizeof *s);
  s->pc = g->k->entry + g->k->insn[pc_pick % g->k->ninsn];
  s->exec_mask = g->exec;
  s->wg[0] = (uint32_t)(wgid % g->ngx);
  s->wg[1] = (uint32_t)((wgid / g->ngx) % g->ngy);
  s->wg[2] = (uint32_t)(wgid / (g->ngx * g->ngy));
  unsigned x = (unsigned)(wgid % g->xcc), se = (unsigned)((wgid / g->xcc) % g->se_per_xcc);
  unsigned cu = (unsigned)((wgid / ((uint64_t)g->xcc * g->se_per_xcc)) % g->cu_per_se);
  unsigned simd = (unsigned)(wave_in_wg % g->simds), slot = (unsigned)((wave_in_wg / g->simds) % a->waves_per_simd);
  s->chiplet_and_wave = (uint32_t)(wave_in_wg & 0x3f) | (a->xcc > 1 ? x << 8 : 0);
  /* HW_ID (gfx9): wave 3:0, simd 5:4, pipe 7:6, cu 11:8, sa 12, se 15:13 */
  s->hw_id = (slot & 0xf) | (simd & 3) << 4 | (cu & 0xf) << 8 | (se & 7) << 13;
  s->correlation_id = g->corr;
}

/* In real clock mode a dispatch waits for each instant before its samples
 * (so ROCR's thread switches buffers meanwhile); false when sampling
 * stopped meanwhile. */
static bool wait_instant(struct gpu_pcs *p, uint64_t t) {
  if (vgpu_cfg.clock != VGPU_CLOCK_REAL) return true;
  if (!__atomic_load_n(&p->data, __ATOMIC_ACQUIRE)) return false;
  /* as the dispatch waits for its end: sleep if far, spin if near */
  uint64_t now = vgpu_now_ns();
  if (now + 100000 < t) vgpu_sleep_until_ns(t - 100000);
  while (vgpu_now_ns() < t) {
  }
  return true;
}

/* The models (docs/pc-sampling.md).
 *
 * Host trap: a dispatch of modelled duration D and interval I us is sampled
 * at floor(D / I) instants, start + k*I for k = 1..n; at each, every
 * resident wave takes a trap. The resident waves are the dispatch's first
 * min(waves, capacity) in order, rotating by `capacity` each instant when
 * the dispatch has more waves than the GPU holds (capacity = CUs x SIMDs per
 * CU x waves per SIMD). A wave's PC is an instruction of the kernel's code,
 * chosen by (instant, wave).
 *
 * Stochastic: the interval I is in shader-clock cycles at the GPU's clock F
 * (max_clock_mhz); the dispatch lasts D*F/1000 cycles and is sampled at
 * n = floor(D*F / (1000*I)) instants, start + floor(k*I*1000/F) ns; at each,
 * every CU holding a workgroup of the dispatch samples one wave: m =
 * min(workgroups, CUs) samples, workgroup ((k-1)*m + j) % workgroups for
 * j = 0..m-1 (workgroups rotate over the CUs when there are more), its wave
 * (k-1) % waves-per-group. The snapshot is snapshot() of the PC's
 * instruction and the sample's index in the dispatch ((k-1)*m + j); the
 * wave count is min(waves-per-group * ceil(workgroups / CUs), waves a CU
 * holds, 63). */
void vgpu_pcs_dispatch(unsigned gpu, uint32_t queue_id, uint64_t ring_packets, uint64_t index,
                       const struct vgpu_dispatch_info *d, uint64_t start_ns, uint64_t end_ns) {
  if (gpu >= VGPU_MAX_GPUS) return;
  struct gpu_pcs *p = &gpus[gpu];
  uint64_t data = __atomic_load_n(&p->data, __ATOMIC_ACQUIRE);
  if (!data || !p->current.interval) return;
  bool stochastic = p->current.method == VGPU_PCS_METHOD_STOCHASTIC;
  if (!stochastic && p->current.method != VGPU_PCS_METHOD_HOSTTRAP) return;
  const struct vgpu_kernel *k = vgpu_kernel_info(d->kernel_object);
  if (!k || !k->ninsn || !d->waves) return; /* no code to sample (ROCR's own kernels) */
  const struct vgpu_arch *a = vgpu_cfg.arch;
  struct pcs_geom g = {.a = a, .k = k};
  uint64_t wg_size = (uint64_t)d->wg[0] * d->wg[1] * d->wg[2];
  g.wpg = (wg_size + d->wave_size - 1) / d->wave_size;
  if (!g.wpg) return;
  g.ngx = ((uint64_t)d->grid[0] + d->wg[0] - 1) / d->wg[0];
  g.ngy = ((uint64_t)d->grid[1] + d->wg[1] - 1) / d->wg[1];
  g.nwg = d->workgroups ? d->workgroups : (d->waves + g.wpg - 1) / g.wpg;
  uint64_t dbva = vgpu_mem_doorbell_va(gpu);
  uint64_t doorbell = ((dbva + (uint64_t)queue_id * 8) >> 3) & 0x3ff;
  g.corr = (doorbell << 32) | ((index % ring_packets) & 0x1ffffff);
  g.xcc = a->xcc ? a->xcc : 1, g.se_per_xcc = a->se / g.xcc, g.cu_per_se = a->cu / a->se;
  g.simds = vgpu_simd_per_cu(a);
  g.exec = d->wave_size == 64 ? UINT64_MAX : 0xffffffffull;
  uint64_t cap = (uint64_t)a->cu * g.simds * a->waves_per_simd;
  struct pcs_sample s;
  if (!stochastic) {
    /* Intervals go up to 2^64-1 us: one longer than the dispatch samples
     * nothing (and interval * 1000 would wrap, to 0 for 2^61). */
    if (p->current.interval > d->duration_ns / 1000) return;
    uint64_t interval_ns = p->current.interval * 1000;
    uint64_t n = d->duration_ns / interval_ns;
    uint64_t resident = d->waves < cap ? d->waves : cap;
    for (uint64_t i = 1; i <= n; i++) {
      uint64_t t = start_ns + i * interval_ns;
      if (t > end_ns) t = end_ns;
      if (!wait_instant(p, t)) return;
      for (uint64_t j = 0; j < resident; j++) {
        uint64_t w = ((i - 1) * cap + j) % d->waves;
        sample_wave(&g, &s, w, i * 7 + w * 13);
        s.timestamp = t / VGPU_GPU_TICK_NS;
        trap(data, &s);
      }
    }
    return;
  }
  uint64_t mhz = a->max_clock_mhz ? a->max_clock_mhz : 1000, iv = p->current.interval;
  /* cycles = D * F / 1000; n = cycles / I (128-bit: D * F fits, the
   * product with I need not) */
  uint64_t n = (uint64_t)((unsigned __int128)d->duration_ns * mhz / ((unsigned __int128)1000 * iv));
  uint64_t m = g.nwg < a->cu ? g.nwg : a->cu;
  uint64_t per_cu = (uint64_t)g.simds * a->waves_per_simd;
  uint64_t wc = g.wpg * ((g.nwg + a->cu - 1) / a->cu);
  if (wc > per_cu) wc = per_cu;
  if (wc > 63) wc = 63;
  for (uint64_t i = 1; i <= n; i++) {
    uint64_t t = start_ns + (uint64_t)((unsigned __int128)i * iv * 1000 / mhz);
    if (t > end_ns) t = end_ns;
    if (!wait_instant(p, t)) return;
    for (uint64_t j = 0; j < m; j++) {
      uint64_t idx = (i - 1) * m + j;
      uint64_t w = (idx % g.nwg) * g.wpg + (i - 1) % g.wpg;
      if (w >= d->waves) w = d->waves - 1; /* the last workgroup may be partial */
      sample_wave(&g, &s, w, i * 7 + w * 13);
      uint32_t word;
      memcpy(&word, (const void *)(uintptr_t)s.pc, 4);
      s.snapshot[0] = snapshot(word, idx);
      s.snapshot[1] = (uint32_t)wc;
      s.timestamp = t / VGPU_GPU_TICK_NS;
      trap(data, &s);
    }
  }
}

int vgpu_pc_sample(void *argp) {
  struct vgpu_pc_sample_args *a = argp;
  int g = vgpu_gpu_index(a->gpu_id);
  if (g < 0) return -EINVAL;
  pthread_mutex_lock(&lock);
  struct gpu_pcs *p = &gpus[g];
  struct session *s = NULL;
  int rc;
  if (a->op != VGPU_PCS_OP_QUERY_CAPABILITIES && a->op != VGPU_PCS_OP_CREATE) {
    s = find(p, a->trace_id);
    if (!s) {
      rc = -EINVAL;
      goto out;
    }
  }
  switch (a->op) {
  case VGPU_PCS_OP_QUERY_CAPABILITIES:
    rc = query(p, a);
    break;
  case VGPU_PCS_OP_CREATE:
    rc = create(p, a);
    break;
  case VGPU_PCS_OP_DESTROY:
    if (s->started) {
      rc = -EBUSY;
      break;
    }
    s->id = 0;
    p->users--;
    rc = 0;
    break;
  case VGPU_PCS_OP_START:
    rc = s->started ? -EALREADY : 0;
    if (!rc && !p->running++) start_sampling(p, g);
    s->started = true;
    break;
  case VGPU_PCS_OP_STOP:
    rc = s->started ? 0 : -EALREADY;
    if (!rc && !--p->running) __atomic_store_n(&p->data, 0, __ATOMIC_RELEASE);
    s->started = false;
    break;
  default:
    rc = -EINVAL;
  }
out:
  pthread_mutex_unlock(&lock);
  static const char *const ops[] = {"query", "create", "destroy", "start", "stop"};
  vgpu_logf("{\"type\":\"pc_sample\",\"pid\":%d,\"gpu\":%d,\"op\":\"%s\",\"trace_id\":%u,\"result\":%d}", (int)getpid(),
            g, a->op < 5 ? ops[a->op] : "unknown", a->trace_id, rc);
  return rc;
}

/* A forked child is a new KFD process, without sessions. */
void vgpu_pc_sample_after_fork(void) {
  pthread_mutex_init(&lock, NULL);
  memset(gpus, 0, sizeof gpus);
}
