/* The command processor's PM4 interpreter and the perf-counter register file
 * behind it. Registers are addressed per (SE, instance) through
 * GRBM_GFX_INDEX; counters count only while CP_PERFMON_CNTL's PERFMON_STATE
 * is 1 ("counting"); a write of state 0 resets them. One instance models one
 * XCC: PRED_EXEC runs its dwords when the instance's bit of the XCC mask is
 * set; an agent (a virtual GPU, or the standalone interpreter of the
 * tests) has one instance per XCC.
 * Unknown opcodes and registers are reported through vgpu_error. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perf.h"

#define REG_GRBM_GFX_INDEX 0xc200u
#define REG_CP_PERFMON_CNTL 0xd808u
#define MAX_COUNTERS 16
#define MAX_SE 32
#define MAX_SQTT_DISPATCH 1024

enum reg_kind { K_SELECT, K_SELECT1, K_CONTROL, K_LO, K_HI };

struct reg_ref {
  uint32_t addr;
  uint16_t block;
  uint8_t counter;
  uint8_t kind;
};

struct counter_state {
  uint32_t *sel;
  uint8_t *model; /* 0 = never selected, 255 = selected but not modelled */
  uint64_t *val;
  bool dirty; /* some val may be non-zero (listed in vgpu_perf.dirty) */
};

/* One (SE, instance) copy of a counter whose select names a modelled event:
 * what a dispatch adds to. Kept as a list so that a dispatch and a reset
 * touch the few counters in use, not the whole register file (1,584 copies
 * on gfx90a: scanning them was most of a counted dispatch's PM4 cost). */
struct active_ref {
  uint16_t block;
  uint8_t counter;
  uint16_t k; /* se * instances + instance */
};

struct block_state {
  unsigned ses, insts;
  struct counter_state c[MAX_COUNTERS];
};

/* Registers that are not counters, by name, as they appear in AQLprofile's
 * PMC and SQTT packets (addresses from the golden PM4 dumps). */
struct named_reg {
  uint32_t addr;
  const char *name;
};
static const struct named_reg gfx9_regs[] = {
    {0x338, "SQTT_STOP_POLL"}, /* polled by the gfx9 SQTT stop packet; reads 0 */
    {0x2e0b, "COMPUTE_PERFCOUNT_ENABLE"}, {0x2e1e, "COMPUTE_THREAD_TRACE_ENABLE"},
    {0xc200, "GRBM_GFX_INDEX"}, {0xc330, "SQ_THREAD_TRACE_BASE"}, {0xc331, "SQ_THREAD_TRACE_SIZE"},
    {0xc332, "SQ_THREAD_TRACE_MASK"}, {0xc333, "SQ_THREAD_TRACE_TOKEN_MASK"},
    {0xc334, "SQ_THREAD_TRACE_PERF_MASK"}, /* written with streamed SQ counters */
    {0xc335, "SQ_THREAD_TRACE_CTRL"}, {0xc336, "SQ_THREAD_TRACE_MODE"},
    {0xc337, "SQ_THREAD_TRACE_BASE2"}, {0xc338, "SQ_THREAD_TRACE_TOKEN_MASK2"},
    {0xc339, "SQ_THREAD_TRACE_WPTR"}, {0xc33a, "SQ_THREAD_TRACE_STATUS"},
    {0xc33b, "SQ_THREAD_TRACE_HIWATER"}, {0xc33c, "SQ_THREAD_TRACE_CNTR"},
    {0xc340, "SQ_THREAD_TRACE_USERDATA_0"}, {0xc341, "SQ_THREAD_TRACE_USERDATA_1"},
    {0xc342, "SQ_THREAD_TRACE_USERDATA_2"}, {0xc343, "SQ_THREAD_TRACE_USERDATA_3"},
    {0xd808, "CP_PERFMON_CNTL"}, {0xd9e0, "SQ_PERFCOUNTER_CTRL"}, {0xd9e1, "SQ_PERFCOUNTER_MASK"},
    {0xdcbf, "RLC_PERFMON_CLK_CNTL"}, {0, NULL}};
static const struct named_reg gfx10_regs[] = {
    {0x2e0b, "COMPUTE_PERFCOUNT_ENABLE"}, {0x2e1e, "COMPUTE_THREAD_TRACE_ENABLE"},
    {0xc200, "GRBM_GFX_INDEX"}, {0xc342, "SQ_THREAD_TRACE_USERDATA_2"},
    {0xc343, "SQ_THREAD_TRACE_USERDATA_3"}, {0xd808, "CP_PERFMON_CNTL"},
    {0xd9e0, "SQ_PERFCOUNTER_CTRL"}, {0xd9e1, "SQ_PERFCOUNTER_MASK"}, {0xd9e2, "SQ_PERFCOUNTER_CTRL2"},
    {0xd9e8, "SQ_THREAD_TRACE_BUF0_BASE"}, {0xd9e9, "SQ_THREAD_TRACE_BUF0_SIZE"},
    {0xd9ec, "SQ_THREAD_TRACE_CTRL"}, {0xd9ed, "SQ_THREAD_TRACE_MASK"},
    {0xd9ee, "SQ_THREAD_TRACE_TOKEN_MASK"}, {0xd9ef, "SQ_THREAD_TRACE_WPTR"},
    {0xd9f4, "SQ_THREAD_TRACE_STATUS"}, {0xd9fa, "SQ_THREAD_TRACE_DROPPED_CNTR"},
    {0xdcbf, "RLC_PERFMON_CLK_CNTL"}, {0, NULL}};

#define NGEN 32

/* User-data words one trace keeps per SE (markers and timestamps). */
#define SQTT_MAX_USER 1024

struct sqtt_dispatch {
  uint64_t kernel_object, waves, duration_ns;
};

struct sqtt_se {
  uint32_t base_lo, base_hi, size;
  bool programmed;
  uint32_t wptr, cntr;
  uint32_t nuser;
  bool user_overflow;
  uint32_t user[SQTT_MAX_USER];
};

struct vgpu_perf {
  pthread_mutex_t lock;
  const struct vgpu_perf_arch *pa;
  unsigned gfx;
  struct vgpu_model_shape shape;
  uint32_t grbm;
  struct block_state *blocks;
  struct reg_ref *refs;
  unsigned nrefs;
  const struct named_reg *named;
  uint32_t gen[NGEN];
  /* SQTT */
  bool sqtt_on;
  struct sqtt_se sqtt[MAX_SE];
  unsigned ndisp;
  struct sqtt_dispatch disp[MAX_SQTT_DISPATCH];
  uint64_t queue_id;
  unsigned xcc_id;
  uint64_t atomic_ret; /* the last ATOMIC_MEM's pre-op value (COPY_DATA src_sel 6) */
  struct active_ref *active;
  unsigned nactive, cap_active;
  struct active_ref *dirty; /* counters (k unused) with possibly non-zero values */
  unsigned ndirty, cap_dirty;
};

static void list_add(struct active_ref **l, unsigned *n, unsigned *cap, struct active_ref r) {
  if (*n == *cap) {
    unsigned c = *cap ? 2 * *cap : 16;
    struct active_ref *m = realloc(*l, c * sizeof *m);
    if (!m) return; /* out of memory: the counter is not modelled */
    *l = m;
    *cap = c;
  }
  (*l)[(*n)++] = r;
}

static void mark_dirty(struct vgpu_perf *p, unsigned b, unsigned c) {
  struct counter_state *cs = &p->blocks[b].c[c];
  if (cs->dirty) return;
  cs->dirty = true;
  list_add(&p->dirty, &p->ndirty, &p->cap_dirty, (struct active_ref){(uint16_t)b, (uint8_t)c, 0});
}

static bool modelled(uint8_t m) { return m && m != 255; }

/* Keeps the active list in step with a select write of copy k. */
static void set_model(struct vgpu_perf *p, unsigned b, unsigned c, unsigned k, uint8_t m) {
  struct counter_state *cs = &p->blocks[b].c[c];
  bool was = modelled(cs->model[k]), is = modelled(m);
  cs->model[k] = m;
  if (was == is) return;
  if (is) {
    list_add(&p->active, &p->nactive, &p->cap_active, (struct active_ref){(uint16_t)b, (uint8_t)c, (uint16_t)k});
    return;
  }
  for (unsigned i = 0; i < p->nactive; i++)
    if (p->active[i].block == b && p->active[i].counter == c && p->active[i].k == k) {
      p->active[i] = p->active[--p->nactive];
      return;
    }
}

static int ref_cmp(const void *a, const void *b) {
  const struct reg_ref *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void add_ref(struct vgpu_perf *p, uint32_t addr, unsigned b, unsigned c, unsigned kind) {
  if (!addr) return;
  for (unsigned i = 0; i < p->nrefs; i++) /* shared control registers: keep the first */
    if (p->refs[i].addr == addr) return;
  p->refs[p->nrefs++] = (struct reg_ref){addr, (uint16_t)b, (uint8_t)c, (uint8_t)kind};
}

struct vgpu_perf *vgpu_perf_new(const struct vgpu_perf_arch *pa, unsigned gfx_level, unsigned clock_mhz) {
  struct vgpu_perf *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  pthread_mutex_init(&p->lock, NULL);
  p->pa = pa;
  p->gfx = gfx_level;
  unsigned tcc = 1, xcc = pa->xcc ? pa->xcc : 1;
  for (unsigned b = 0; b < pa->nblocks; b++)
    if (!strcmp(pa->blocks[b].name, "TCC")) tcc = pa->blocks[b].instances;
  p->shape = (struct vgpu_model_shape){pa->se / xcc, pa->cu / xcc, tcc, clock_mhz};
  p->named = gfx_level >= 10 ? gfx10_regs : gfx9_regs;
  p->blocks = calloc(pa->nblocks, sizeof *p->blocks);
  unsigned maxrefs = 0;
  for (unsigned b = 0; b < pa->nblocks; b++) maxrefs += pa->blocks[b].ncounters * 5u;
  p->refs = calloc(maxrefs + 1, sizeof *p->refs);
  if (!p->blocks || !p->refs) return NULL;
  for (unsigned b = 0; b < pa->nblocks; b++) {
    const struct vgpu_perf_block *bl = &pa->blocks[b];
    struct block_state *bs = &p->blocks[b];
    bs->ses = (bl->attr & 0x2) ? p->shape.se : 1; /* "Se" attribute: one copy per shader engine */
    bs->insts = bl->instances ? bl->instances : 1;
    unsigned n = bs->ses * bs->insts;
    for (unsigned c = 0; c < bl->ncounters && c < MAX_COUNTERS; c++) {
      bs->c[c].sel = calloc(n, sizeof(uint32_t));
      bs->c[c].model = calloc(n, 1);
      bs->c[c].val = calloc(n, sizeof(uint64_t));
      const struct vgpu_perf_counter *pc = &bl->counters[c];
      add_ref(p, pc->select, b, c, K_SELECT);
      add_ref(p, pc->select1, b, c, K_SELECT1);
      add_ref(p, pc->lo, b, c, K_LO);
      add_ref(p, pc->hi, b, c, K_HI);
    }
  }
  for (unsigned b = 0; b < pa->nblocks; b++)
    for (unsigned c = 0; c < pa->blocks[b].ncounters && c < MAX_COUNTERS; c++)
      add_ref(p, pa->blocks[b].counters[c].control, b, c, K_CONTROL);
  qsort(p->refs, p->nrefs, sizeof *p->refs, ref_cmp);
  return p;
}

static const struct reg_ref *find_ref(struct vgpu_perf *p, uint32_t addr) {
  struct reg_ref key = {.addr = addr};
  return bsearch(&key, p->refs, p->nrefs, sizeof key, ref_cmp);
}

static int named_index(struct vgpu_perf *p, uint32_t addr) {
  for (int i = 0; p->named[i].name && i < NGEN; i++)
    if (p->named[i].addr == addr) return i;
  return -1;
}

static uint8_t model_for(struct vgpu_perf *p, unsigned b, uint32_t sel) {
  const struct vgpu_perf_block *bl = &p->pa->blocks[b];
  uint32_t ev = sel & bl->event_mask;
  for (unsigned i = 0; i < p->pa->nevents; i++)
    if (p->pa->events[i].event == ev && !strcmp(p->pa->events[i].block, bl->name))
      return (uint8_t)p->pa->events[i].model;
  return 255;
}

/* GRBM_GFX_INDEX: SE_BROADCAST bit 31, INSTANCE_BROADCAST bit 30,
 * SE_INDEX bits 23:16, INSTANCE_INDEX bits 7:0. */
static bool se_bcast(uint32_t g) { return g & (1u << 31); }
static bool inst_bcast(uint32_t g) { return g & (1u << 30); }
static unsigned se_index(uint32_t g) { return (g >> 16) & 0xff; }
static unsigned inst_index(uint32_t g) { return g & 0xff; }

static void reset_counters(struct vgpu_perf *p) {
  for (unsigned i = 0; i < p->ndirty; i++) {
    struct block_state *bs = &p->blocks[p->dirty[i].block];
    struct counter_state *cs = &bs->c[p->dirty[i].counter];
    memset(cs->val, 0, sizeof(uint64_t) * bs->ses * bs->insts);
    cs->dirty = false;
  }
  p->ndirty = 0;
}

static void counter_write(struct vgpu_perf *p, const struct reg_ref *r, uint32_t v) {
  struct block_state *bs = &p->blocks[r->block];
  struct counter_state *cs = &bs->c[r->counter];
  if (r->kind == K_CONTROL || r->kind == K_SELECT1) return; /* recorded in the log only */
  unsigned s0 = 0, s1 = bs->ses, i0 = 0, i1 = bs->insts;
  if (bs->ses > 1 && !se_bcast(p->grbm)) {
    s0 = se_index(p->grbm);
    s1 = s0 + 1;
  }
  if (!inst_bcast(p->grbm)) {
    i0 = inst_index(p->grbm);
    i1 = i0 + 1;
  }
  if (s0 >= bs->ses || i0 >= bs->insts) {
    vgpu_error("PM4: %s counter %u selected at SE %u instance %u, outside %u SEs x %u instances",
               p->pa->blocks[r->block].name, r->counter, s0, i0, bs->ses, bs->insts);
    return;
  }
  for (unsigned s = s0; s < s1; s++)
    for (unsigned i = i0; i < i1; i++) {
      unsigned k = s * bs->insts + i;
      if (r->kind == K_SELECT) {
        cs->sel[k] = v;
        set_model(p, r->block, r->counter, k, model_for(p, r->block, v));
      } else { /* writing LO/HI presets the value */
        mark_dirty(p, r->block, r->counter);
        if (r->kind == K_LO) cs->val[k] = (cs->val[k] & ~0xffffffffull) | v;
        else cs->val[k] = (cs->val[k] & 0xffffffffull) | ((uint64_t)v << 32);
      }
    }
}

static uint32_t counter_read(struct vgpu_perf *p, const struct reg_ref *r) {
  struct block_state *bs = &p->blocks[r->block];
  struct counter_state *cs = &bs->c[r->counter];
  if (r->kind == K_SELECT) {
    unsigned s = bs->ses > 1 && !se_bcast(p->grbm) ? se_index(p->grbm) : 0;
    unsigned i = inst_bcast(p->grbm) ? 0 : inst_index(p->grbm);
    return s < bs->ses && i < bs->insts ? cs->sel[s * bs->insts + i] : 0;
  }
  if (r->kind != K_LO && r->kind != K_HI) return 0;
  unsigned s = bs->ses > 1 && !se_bcast(p->grbm) ? se_index(p->grbm) : 0;
  unsigned i = inst_bcast(p->grbm) ? 0 : inst_index(p->grbm);
  if (s >= bs->ses || i >= bs->insts) {
    vgpu_error("PM4: %s counter %u read at SE %u instance %u, outside %u SEs x %u instances",
               p->pa->blocks[r->block].name, r->counter, s, i, bs->ses, bs->insts);
    return 0;
  }
  uint64_t v = cs->val[s * bs->insts + i];
  return r->kind == K_LO ? (uint32_t)v : (uint32_t)(v >> 32);
}

/* --- SQTT ------------------------------------------------------------------ */

static unsigned sqtt_se_sel(struct vgpu_perf *p, unsigned *s0, unsigned *s1) {
  if (se_bcast(p->grbm)) {
    *s0 = 0;
    *s1 = p->shape.se;
  } else {
    *s0 = se_index(p->grbm);
    *s1 = *s0 + 1;
  }
  if (*s1 > MAX_SE) *s1 = MAX_SE;
  return *s1 - *s0;
}

/* The synthetic stream of one SE, in 32-byte blocks (WPTR counts blocks):
 *   header: "VGPUSQTT", u32 version 1, u32 se, u32 dispatches, u32 userdata
 *           words, u64 waves on this SE;
 *   userdata: u32 per USERDATA_2/3 write, padded to 32 bytes;
 *   one 32-byte record per dispatch: u64 kernel_object, u64 waves on this SE,
 *           u64 modelled duration in ns, u64 index. */
static void sqtt_flush(struct vgpu_perf *p) {
  for (unsigned s = 0; s < p->shape.se && s < MAX_SE; s++) {
    struct sqtt_se *t = &p->sqtt[s];
    if (!t->programmed) continue;
    uint64_t addr, size;
    if (p->gfx >= 10) {
      addr = (uint64_t)t->base_lo << 12;
      size = (uint64_t)t->size << 12;
    } else {
      addr = (((uint64_t)t->base_hi << 32) | t->base_lo) << 12;
      size = (uint64_t)t->size << 12;
    }
    uint8_t hdr[32] = "VGPUSQTT";
    uint32_t v32[4] = {1, s, p->ndisp, t->nuser};
    memcpy(hdr + 8, v32, 16);
    uint64_t waves = 0;
    for (unsigned i = 0; i < p->ndisp; i++) waves += p->disp[i].waves / p->shape.se + (s < p->disp[i].waves % p->shape.se);
    memcpy(hdr + 24, &waves, 8);
    uint64_t need = 32 + ((t->nuser * 4 + 31) / 32) * 32 + 32ull * p->ndisp;
    if (!addr || need > size) {
      vgpu_error("SQTT: SE %u buffer 0x%llx (%llu bytes) cannot hold %llu bytes", s, (unsigned long long)addr,
                 (unsigned long long)size, (unsigned long long)need);
      t->wptr = 0;
      continue;
    }
    uint8_t *out = vgpu_host(addr);
    memcpy(out, hdr, 32);
    uint64_t off = 32;
    memset(out + off, 0, ((t->nuser * 4 + 31) / 32) * 32);
    memcpy(out + off, t->user, t->nuser * 4);
    off += ((t->nuser * 4 + 31) / 32) * 32;
    for (unsigned i = 0; i < p->ndisp; i++) {
      uint64_t rec[4] = {p->disp[i].kernel_object,
                         p->disp[i].waves / p->shape.se + (s < p->disp[i].waves % p->shape.se),
                         p->disp[i].duration_ns, i};
      memcpy(out + off, rec, 32);
      off += 32;
    }
    t->wptr = (uint32_t)(off / 32);
    t->cntr = 1 + t->nuser + p->ndisp;
    vgpu_logf("{\"type\":\"sqtt\",\"pid\":%d,\"queue\":%llu,\"se\":%u,\"addr\":%llu,\"bytes\":%llu,\"dispatches\":%u}",
              (int)getpid(), (unsigned long long)p->queue_id, s, (unsigned long long)addr,
              (unsigned long long)off, p->ndisp);
  }
}

static void sqtt_set_on(struct vgpu_perf *p, bool on) {
  if (on && !p->sqtt_on) { /* a new trace: the buffers start empty */
    p->ndisp = 0;
    for (unsigned s = 0; s < MAX_SE; s++) {
      p->sqtt[s].wptr = 0;
      p->sqtt[s].cntr = 0;
      p->sqtt[s].nuser = 0;
      p->sqtt[s].user_overflow = false;
    }
  }
  if (!on && p->sqtt_on) sqtt_flush(p);
  p->sqtt_on = on;
}

/* Returns true if the register is an SQTT register it handled. */
static bool sqtt_write(struct vgpu_perf *p, const char *name, uint32_t v) {
  if (strncmp(name, "SQ_THREAD_TRACE_", 16)) return false;
  const char *n = name + 16;
  unsigned s0, s1;
  sqtt_se_sel(p, &s0, &s1);
  for (unsigned s = s0; s < s1; s++) {
    struct sqtt_se *t = &p->sqtt[s];
    if (!strcmp(n, "BASE") || !strcmp(n, "BUF0_BASE")) {
      t->base_lo = v;
      t->programmed = true;
    } else if (!strcmp(n, "BASE2")) {
      t->base_hi = v;
    } else if (!strcmp(n, "SIZE") || !strcmp(n, "BUF0_SIZE")) {
      t->size = v;
      if (!v) t->programmed = false;
    } else if (!strcmp(n, "USERDATA_2") || !strcmp(n, "USERDATA_3")) {
      if (p->sqtt_on && t->nuser < SQTT_MAX_USER) {
        t->user[t->nuser++] = v;
      } else if (p->sqtt_on && !t->user_overflow) {
        t->user_overflow = true;
        vgpu_error("SQTT: SE %u: more than %d user-data words in one trace; the rest are dropped", s, SQTT_MAX_USER);
      }
    }
  }
  if (!strcmp(n, "USERDATA_2") || !strcmp(n, "USERDATA_3")) {
    if (!p->sqtt_on)
      for (unsigned s = s0; s < s1; s++) p->sqtt[s].nuser = 0;
  }
  /* gfx9: MODE bit 21 is set by AQLprofile's start and cleared by its stop;
   * gfx10+: CTRL bit 0 (mode on). */
  if (p->gfx < 10 && !strcmp(n, "MODE")) sqtt_set_on(p, v & (1u << 21));
  if (p->gfx >= 10 && !strcmp(n, "CTRL")) sqtt_set_on(p, v & 1u);
  return true;
}

static uint32_t sqtt_read(struct vgpu_perf *p, const char *n, bool *hit) {
  unsigned s = se_bcast(p->grbm) ? 0 : se_index(p->grbm);
  if (s >= MAX_SE) s = 0;
  *hit = true;
  if (!strcmp(n, "SQ_THREAD_TRACE_WPTR")) return p->sqtt[s].wptr;
  if (!strcmp(n, "SQ_THREAD_TRACE_STATUS")) return 0; /* idle, not full, no errors */
  if (!strcmp(n, "SQ_THREAD_TRACE_CNTR")) return p->sqtt[s].cntr;
  if (!strcmp(n, "SQ_THREAD_TRACE_DROPPED_CNTR")) return 0;
  *hit = false;
  return 0;
}

/* --- registers -------------------------------------------------------------- */

static void reg_write(struct vgpu_perf *p, uint32_t addr, uint32_t v) {
  vgpu_logf("{\"type\":\"pm4_write\",\"pid\":%d,\"queue\":%llu,\"reg\":%u,\"value\":%u}", (int)getpid(),
            (unsigned long long)p->queue_id, addr, v);
  const struct reg_ref *r = find_ref(p, addr);
  int gi = named_index(p, addr);
  if (addr == REG_GRBM_GFX_INDEX) {
    p->grbm = v;
  } else if (addr == REG_CP_PERFMON_CNTL) {
    if ((v & 3) == 0) reset_counters(p);
  }
  if (gi >= 0) {
    p->gen[gi] = v;
    sqtt_write(p, p->named[gi].name, v);
    if (!r || r->kind == K_CONTROL) return;
  }
  if (r) {
    counter_write(p, r, v);
    return;
  }
  vgpu_error("PM4: write of unknown register 0x%x = 0x%x on %s", addr, v, p->pa->label);
}

static uint32_t reg_read(struct vgpu_perf *p, uint32_t addr) {
  const struct reg_ref *r = find_ref(p, addr);
  uint32_t v = 0;
  if (r && r->kind != K_CONTROL) {
    v = counter_read(p, r);
  } else {
    int gi = named_index(p, addr);
    bool hit = false;
    if (gi >= 0) {
      v = sqtt_read(p, p->named[gi].name, &hit);
      if (!hit) v = p->gen[gi];
      if (addr == REG_GRBM_GFX_INDEX) v = p->grbm;
    } else if (r) {
      v = 0;
    } else {
      vgpu_error("PM4: read of unknown register 0x%x on %s", addr, p->pa->label);
    }
  }
  vgpu_logf("{\"type\":\"pm4_read\",\"pid\":%d,\"queue\":%llu,\"reg\":%u,\"grbm\":%u,\"value\":%u}", (int)getpid(),
            (unsigned long long)p->queue_id, addr, p->grbm, v);
  return v;
}

static bool counting(struct vgpu_perf *p) {
  int gi = named_index(p, REG_CP_PERFMON_CNTL);
  return gi >= 0 && (p->gen[gi] & 3) == 1;
}

void vgpu_perf_dispatch(struct vgpu_perf *p, const struct vgpu_dispatch_info *d) {
  pthread_mutex_lock(&p->lock);
  if (p->sqtt_on && p->ndisp < MAX_SQTT_DISPATCH)
    p->disp[p->ndisp++] = (struct sqtt_dispatch){d->kernel_object, d->waves, d->duration_ns};
  if (counting(p)) {
    for (unsigned a = 0; a < p->nactive; a++) {
      const struct active_ref *r = &p->active[a];
      struct block_state *bs = &p->blocks[r->block];
      struct counter_state *cs = &bs->c[r->counter];
      unsigned s = r->k / bs->insts, i = r->k % bs->insts;
      cs->val[r->k] += vgpu_model_value((enum vgpu_model)cs->model[r->k], d, &p->shape, s, i);
      mark_dirty(p, r->block, r->counter);
    }
  }
  pthread_mutex_unlock(&p->lock);
}

/* --- PM4 ---------------------------------------------------------------------- */

static uint64_t mem_read(uint64_t a, bool is64) {
  if (is64) return *(volatile uint64_t *)vgpu_host(a);
  return *(volatile uint32_t *)vgpu_host(a);
}
static void mem_write(uint64_t a, uint64_t v, bool is64) {
  if (is64) *(volatile uint64_t *)vgpu_host(a) = v;
  else *(volatile uint32_t *)vgpu_host(a) = (uint32_t)v;
}

static bool cmp_fn(unsigned fn, uint32_t v, uint32_t ref) {
  switch (fn) {
  case 0: return true;
  case 1: return v < ref;
  case 2: return v <= ref;
  case 3: return v == ref;
  case 4: return v != ref;
  case 5: return v >= ref;
  case 6: return v > ref;
  default: return true;
  }
}

static uint64_t gpu_clock(void) { return vgpu_gpu_ticks(); }

static int run_ib(struct vgpu_perf *p, const uint32_t *ib, uint32_t ndw, int depth) {
  if (depth > 8) {
    vgpu_error("PM4: indirect buffers nested deeper than 8");
    return -1;
  }
  uint32_t i = 0;
  while (i < ndw) {
    uint32_t h = ib[i];
    if (h == 0x80000000u) { /* type-2 filler */
      i++;
      continue;
    }
    if ((h >> 30) != 3) {
      vgpu_error("PM4: packet type %u (dword 0x%08x) at %u is not supported", h >> 30, h, i);
      return -1;
    }
    uint32_t count = (h >> 16) & 0x3fff, op = (h >> 8) & 0xff, len = count + 2;
    const uint32_t *b = ib + i + 1;
    if (i + len > ndw) {
      vgpu_error("PM4: opcode 0x%x at %u runs past the end of its %u-dword buffer", op, i, ndw);
      return -1;
    }
    switch (op) {
    case 0x10: break; /* NOP */
    case 0x3f: {      /* INDIRECT_BUFFER */
      uint64_t a = ((uint64_t)b[1] << 32) | (b[0] & ~3u);
      uint32_t n = b[2] & 0xfffff;
      if (!a || !(b[2] & (1u << 23))) {
        vgpu_error("PM4: INDIRECT_BUFFER without VALID bit or address");
        break;
      }
      run_ib(p, vgpu_host(a), n, depth + 1);
      break;
    }
    case 0x79:   /* SET_UCONFIG_REG */
    case 0x76:   /* SET_SH_REG */
    case 0x68: { /* SET_CONFIG_REG */
      uint32_t base = op == 0x79 ? 0xc000 : op == 0x76 ? 0x2c00 : 0x2000;
      uint32_t reg = base + (b[0] & 0xffff);
      for (uint32_t k = 1; k <= count; k++) reg_write(p, reg + k - 1, b[k]);
      break;
    }
    case 0x40: { /* COPY_DATA */
      uint32_t ctl = b[0], src = ctl & 0xf, dst = (ctl >> 8) & 0xf;
      bool is64 = ctl & (1u << 16);
      uint64_t sa = ((uint64_t)b[2] << 32) | b[1], da = ((uint64_t)b[4] << 32) | b[3];
      uint64_t v;
      switch (src) {
      case 0:
      case 4:
        v = reg_read(p, (uint32_t)sa);
        if (is64) v |= (uint64_t)reg_read(p, (uint32_t)sa + 1) << 32;
        break;
      case 1: v = mem_read(sa, is64); break;
      case 5: v = is64 ? sa : b[1]; break;
      case 6: v = is64 ? p->atomic_ret : (uint32_t)p->atomic_ret; break; /* ATOMIC_RETURN_DATA */
      case 9: v = gpu_clock(); break;
      default:
        vgpu_error("PM4: COPY_DATA src_sel %u is not supported", src);
        v = 0;
      }
      switch (dst) {
      case 0:
      case 4:
        reg_write(p, (uint32_t)da, (uint32_t)v);
        if (is64) reg_write(p, (uint32_t)da + 1, (uint32_t)(v >> 32));
        break;
      case 1:
      case 2:
      case 5: mem_write(da & ~3ull, v, is64); break;
      default: vgpu_error("PM4: COPY_DATA dst_sel %u is not supported", dst);
      }
      break;
    }
    case 0x37: { /* WRITE_DATA */
      uint32_t dst = (b[0] >> 8) & 0xf;
      uint64_t a = ((uint64_t)b[2] << 32) | b[1];
      for (uint32_t k = 3; k <= count; k++) {
        if (dst == 0) reg_write(p, (uint32_t)a + (k - 3), b[k]);
        else mem_write((a & ~3ull) + 4ull * (k - 3), b[k], false);
      }
      break;
    }
    case 0x46: break; /* EVENT_WRITE: flushes are instantaneous here */
    case 0x58: break; /* ACQUIRE_MEM: no caches to maintain */
    case 0x1e: { /* ATOMIC_MEM */
      /* 64-bit swap with return (39): ROCR's PC-sampling buffer switch,
       * against the sample writers of another thread, so a real atomic.
       * Any other operation is AQLprofile's mutex, always free here: the
       * virtual CP is serialised. */
      uint32_t aop = b[0] & 0x7f;
      uint64_t a = (((uint64_t)b[2] << 32) | b[1]) & ~7ull, src = ((uint64_t)b[4] << 32) | b[3];
      if (aop == 39) p->atomic_ret = __atomic_exchange_n((uint64_t *)vgpu_host(a), src, __ATOMIC_ACQ_REL);
      break;
    }
    case 0x50: { /* DMA_DATA: memory to memory (ROCR's PC-sampling copy) */
      uint32_t ctl = b[0], dst_sel = (ctl >> 20) & 3, src_sel = (ctl >> 29) & 3, n = b[5] & 0x3ffffff;
      uint64_t sa = ((uint64_t)b[2] << 32) | b[1], da = ((uint64_t)b[4] << 32) | b[3];
      if ((src_sel != 0 && src_sel != 3) || (dst_sel != 0 && dst_sel != 3)) {
        vgpu_error("PM4: DMA_DATA src_sel %u dst_sel %u is not supported", src_sel, dst_sel);
        break;
      }
      if (n) memmove(vgpu_host(da), vgpu_host(sa), n);
      break;
    }
    case 0x23: {      /* PRED_EXEC */
      uint32_t n = b[0] & 0x3fff, mask = b[0] >> 24;
      if (!((mask >> p->xcc_id) & 1)) i += n; /* this XCC is not selected: skip the covered dwords */
      break;
    }
    case 0x3c: { /* WAIT_REG_MEM */
      unsigned fn = b[0] & 7;
      bool mem = b[0] & (1u << 4);
      uint64_t a = ((uint64_t)b[2] << 32) | b[1];
      uint32_t ref = b[3], mask = b[4];
      for (int tries = 0;; tries++) {
        uint32_t v = (uint32_t)(mem ? mem_read(a & ~3ull, false) : reg_read(p, (uint32_t)a)) & mask;
        if (cmp_fn(fn, v, ref)) break;
        if (!mem || tries > 100000) {
          vgpu_error("PM4: WAIT_REG_MEM on %s 0x%llx never satisfied (value 0x%x, ref 0x%x, fn %u)",
                     mem ? "memory" : "register", (unsigned long long)a, v, ref, fn);
          break;
        }
        struct timespec ts = {0, 10000};
        nanosleep(&ts, NULL);
      }
      break;
    }
    default: vgpu_error("PM4: unknown opcode 0x%x (header 0x%08x) at dword %u", op, h, i);
    }
    i += len;
  }
  return 0;
}

int vgpu_perf_pm4(struct vgpu_perf *p, uint64_t queue_id, const uint32_t *ib, uint32_t ndw, int depth) {
  pthread_mutex_lock(&p->lock);
  p->queue_id = queue_id;
  int rc = run_ib(p, ib, ndw, depth);
  pthread_mutex_unlock(&p->lock);
  return rc;
}

/* --- agents: one register file per XCC --------------------------------------------
 * Every IB runs once per XCC (PRED_EXEC selects the dwords meant for each),
 * and workgroup i of a dispatch goes to XCC (i mod X), then SE
 * ((i div X) mod S) inside it. The virtual GPUs use this, and so does the
 * standalone interpreter exported for tests (vgpu_test_pm4_*), which runs
 * any architecture of the table without a runtime. */

struct vgpu_test_pm4 {
  unsigned nxcc;
  struct vgpu_perf *xcc[16];
};

static struct vgpu_test_pm4 *agent_new(const struct vgpu_arch *a) {
  struct vgpu_test_pm4 *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->nxcc = a->perf->xcc ? a->perf->xcc : 1;
  if (t->nxcc > 16) t->nxcc = 16;
  for (unsigned x = 0; x < t->nxcc; x++) {
    t->xcc[x] = vgpu_perf_new(a->perf, a->gfx_level, a->max_clock_mhz);
    if (!t->xcc[x]) return NULL;
    t->xcc[x]->xcc_id = x;
  }
  return t;
}

static int agent_pm4(struct vgpu_test_pm4 *t, uint64_t queue_id, const uint32_t *ib, uint32_t ndw, int depth) {
  int rc = 0;
  for (unsigned x = 0; x < t->nxcc; x++) rc |= vgpu_perf_pm4(t->xcc[x], queue_id, ib, ndw, depth);
  return rc;
}

static void agent_dispatch(struct vgpu_test_pm4 *t, const struct vgpu_dispatch_info *d) {
  uint64_t wgsize = (uint64_t)d->wg[0] * d->wg[1] * d->wg[2];
  uint64_t wpg = (wgsize + d->wave_size - 1) / d->wave_size;
  for (unsigned x = 0; x < t->nxcc; x++) {
    struct vgpu_dispatch_info dx = *d;
    dx.workgroups = d->workgroups / t->nxcc + (x < d->workgroups % t->nxcc ? 1 : 0);
    dx.waves = dx.workgroups * wpg;
    vgpu_perf_dispatch(t->xcc[x], &dx);
  }
}

VGPU_EXPORT struct vgpu_test_pm4 *vgpu_test_pm4_new(const char *label) {
  const struct vgpu_arch *a;
  for (size_t k = 0; (a = vgpu_arch_at(k)); k++)
    if (!strcmp(a->perf->label, label)) return agent_new(a);
  return NULL;
}

VGPU_EXPORT int vgpu_test_pm4_run(struct vgpu_test_pm4 *t, const uint32_t *ib, uint32_t ndw) { return agent_pm4(t, 0, ib, ndw, 0); }

VGPU_EXPORT void vgpu_test_pm4_dispatch(struct vgpu_test_pm4 *t, uint32_t grid, uint32_t wg) {
  struct vgpu_dispatch_info d;
  memset(&d, 0, sizeof d);
  d.grid[0] = grid;
  d.grid[1] = d.grid[2] = 1;
  d.wg[0] = wg ? wg : 1;
  d.wg[1] = d.wg[2] = 1;
  d.wave_size = 64;
  d.workgroups = (grid + d.wg[0] - 1) / d.wg[0];
  d.waves = d.workgroups * ((d.wg[0] + 63) / 64);
  d.duration_ns = 2000 + 8 * d.waves; /* the default duration model */
  agent_dispatch(t, &d);
}

/* --- the virtual GPUs' agents ---------------------------------------------------- */

static struct vgpu_test_pm4 *gpus[VGPU_MAX_GPUS];
static pthread_mutex_t gpus_lock = PTHREAD_MUTEX_INITIALIZER;

static struct vgpu_test_pm4 *agent_of(unsigned gpu) {
  if (gpu >= vgpu_cfg.gpus) return NULL;
  pthread_mutex_lock(&gpus_lock);
  struct vgpu_test_pm4 **pp = &gpus[gpu];
  if (!*pp) *pp = agent_new(vgpu_cfg.arch);
  pthread_mutex_unlock(&gpus_lock);
  return *pp;
}

void vgpu_perf_on_dispatch(unsigned gpu, const struct vgpu_dispatch_info *d) {
  struct vgpu_test_pm4 *t = agent_of(gpu);
  if (t) agent_dispatch(t, d);
}

int vgpu_pm4_execute(unsigned gpu, uint64_t queue_id, const uint32_t *ib, uint32_t ndw, int depth) {
  struct vgpu_test_pm4 *t = agent_of(gpu);
  return t ? agent_pm4(t, queue_id, ib, ndw, depth) : -1;
}
