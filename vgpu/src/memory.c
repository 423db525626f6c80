/* Memory: every "device" allocation is anonymous host memory with GPU VA ==
 * CPU VA. A sorted range table (read by packet threads) remembers what was
 * allocated or registered, for QueryPointerInfo and for deciding which
 * kernel objects are ours to emulate. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vgpu.h"

struct entry {
  struct vgpu_range r;
  unsigned refs; /* registrations of the same user range */
};

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static struct entry *tab;
static size_t ntab, captab;

/* Index of the last entry with base <= addr, or -1. Caller holds lock. */
static long find_le(uintptr_t addr) {
  long lo = 0, hi = (long)ntab - 1, ans = -1;
  while (lo <= hi) {
    long mid = (lo + hi) / 2;
    if (tab[mid].r.base <= addr) {
      ans = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return ans;
}

static long find_containing(uintptr_t addr) {
  /* Registered ranges may nest inside allocations, so look back a little. */
  long i = find_le(addr);
  for (long k = i; k >= 0 && k > i - 8; k--)
    if (addr >= tab[k].r.base && addr - tab[k].r.base < (tab[k].r.size ? tab[k].r.size : 1)) return k;
  return -1;
}

static int insert(const struct vgpu_range *r) {
  if (ntab == captab) {
    size_t nc = captab ? captab * 2 : 256;
    struct entry *n = realloc(tab, nc * sizeof *n);
    if (!n) return -1;
    tab = n;
    captab = nc;
  }
  long i = find_le(r->base) + 1;
  memmove(&tab[i + 1], &tab[i], (ntab - (size_t)i) * sizeof *tab);
  tab[i].r = *r;
  tab[i].refs = 1;
  ntab++;
  return 0;
}

static void remove_at(long i) {
  memmove(&tab[i], &tab[i + 1], (ntab - (size_t)i - 1) * sizeof *tab);
  ntab--;
}

static long find_exact(uintptr_t base, bool allocated) {
  long i = find_le(base);
  for (; i >= 0 && tab[i].r.base == base; i--)
    if (tab[i].r.allocated == allocated) return i;
  return -1;
}

bool vgpu_mem_lookup(uintptr_t addr, struct vgpu_range *out) {
  pthread_rwlock_rdlock(&lock);
  long i = find_containing(addr);
  if (i >= 0 && out) *out = tab[i].r;
  pthread_rwlock_unlock(&lock);
  return i >= 0;
}

bool vgpu_mem_is_ours(uintptr_t addr, uint64_t len) {
  struct vgpu_range r;
  if (!vgpu_mem_lookup(addr, &r) || !r.allocated) return false;
  return addr + len <= r.base + r.size;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtAllocMemory(HSAuint32 node, HSAuint64 size, HsaMemFlags flags,
                                          void **addr) {
  if (!addr || !size) return HSAKMT_STATUS_INVALID_PARAMETER;
  if (node >= vgpu_node_count()) return HSAKMT_STATUS_INVALID_NODE_UNIT;
  size = (size + 4095) & ~4095ull;
  int mflags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  void *hint = NULL;
  if (flags.ui32.FixedAddress) {
    hint = *addr;
    mflags |= MAP_FIXED_NOREPLACE;
  }
  void *p = mmap(hint, size, PROT_READ | PROT_WRITE | PROT_EXEC, mflags, -1, 0);
  if (p == MAP_FAILED) return HSAKMT_STATUS_NO_MEMORY;
  if (hint && p != hint) {
    munmap(p, size);
    return HSAKMT_STATUS_NO_MEMORY;
  }
  struct vgpu_range r = {.base = (uintptr_t)p, .size = size, .allocated = true, .node = node, .flags = flags};
  pthread_rwlock_wrlock(&lock);
  int rc = insert(&r);
  pthread_rwlock_unlock(&lock);
  if (rc) {
    munmap(p, size);
    return HSAKMT_STATUS_NO_MEMORY;
  }
  *addr = p;
  return HSAKMT_STATUS_SUCCESS;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtFreeMemory(void *addr, HSAuint64 size) {
  pthread_rwlock_wrlock(&lock);
  long i = find_exact((uintptr_t)addr, true);
  uint64_t sz = i >= 0 ? tab[i].r.size : size;
  if (i >= 0) remove_at(i);
  pthread_rwlock_unlock(&lock);
  if (i < 0) return HSAKMT_STATUS_INVALID_PARAMETER;
  vgpu_kernel_names_forget((uintptr_t)addr, sz);
  munmap(addr, sz);
  return HSAKMT_STATUS_SUCCESS;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtRegisterMemoryWithFlags(void *addr, HSAuint64 size, HsaMemFlags flags) {
  if (!addr || !size) return HSAKMT_STATUS_INVALID_PARAMETER;
  pthread_rwlock_wrlock(&lock);
  long i = find_containing((uintptr_t)addr);
  HSAKMT_STATUS st = HSAKMT_STATUS_SUCCESS;
  if (i >= 0 && tab[i].r.allocated) {
    /* Registering our own allocation is a no-op. */
  } else if ((i = find_exact((uintptr_t)addr, false)) >= 0 && tab[i].r.size == size) {
    tab[i].refs++;
  } else {
    struct vgpu_range r = {.base = (uintptr_t)addr, .size = size, .allocated = false, .node = 0, .flags = flags};
    if (insert(&r)) st = HSAKMT_STATUS_NO_MEMORY;
  }
  pthread_rwlock_unlock(&lock);
  return st;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtRegisterMemory(void *addr, HSAuint64 size) {
  HsaMemFlags f = {0};
  return hsaKmtRegisterMemoryWithFlags(addr, size, f);
}

HSAKMT_STATUS HSAKMTAPI hsaKmtRegisterMemoryToNodes(void *addr, HSAuint64 size, HSAuint64 n,
                                                    HSAuint32 *nodes) {
  (void)n;
  (void)nodes;
  return hsaKmtRegisterMemory(addr, size);
}

HSAKMT_STATUS HSAKMTAPI hsaKmtDeregisterMemory(void *addr) {
  pthread_rwlock_wrlock(&lock);
  long i = find_exact((uintptr_t)addr, false);
  if (i >= 0 && --tab[i].refs == 0) remove_at(i);
  pthread_rwlock_unlock(&lock);
  /* Deregistering one of our allocations never frees it. */
  return HSAKMT_STATUS_SUCCESS;
}

static void set_nodes(struct vgpu_range *r, HSAuint64 n, const HSAuint32 *nodes) {
  r->nnodes = 0;
  if (n && nodes) {
    for (HSAuint64 k = 0; k < n && r->nnodes < VGPU_MAX_NODES; k++) r->nodes[r->nnodes++] = nodes[k];
  } else if (vgpu_node_is_gpu(r->node)) {
    r->nodes[r->nnodes++] = r->node;
  } else {
    for (uint32_t g = 1; g <= vgpu_cfg.gpus; g++) r->nodes[r->nnodes++] = g;
  }
}

HSAKMT_STATUS HSAKMTAPI hsaKmtMapMemoryToGPUNodes(void *addr, HSAuint64 size, HSAuint64 *gpuva,
                                                  HsaMemMapFlags mf, HSAuint64 n, HSAuint32 *nodes) {
  (void)size;
  (void)mf;
  pthread_rwlock_wrlock(&lock);
  long i = find_containing((uintptr_t)addr);
  if (i >= 0) {
    tab[i].r.mapped = true;
    set_nodes(&tab[i].r, n, nodes);
  }
  pthread_rwlock_unlock(&lock);
  if (gpuva) *gpuva = (HSAuint64)(uintptr_t)addr;
  return HSAKMT_STATUS_SUCCESS;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtMapMemoryToGPU(void *addr, HSAuint64 size, HSAuint64 *gpuva) {
  HsaMemMapFlags mf = {0};
  return hsaKmtMapMemoryToGPUNodes(addr, size, gpuva, mf, 0, NULL);
}

HSAKMT_STATUS HSAKMTAPI hsaKmtUnmapMemoryToGPU(void *addr) {
  pthread_rwlock_wrlock(&lock);
  long i = find_containing((uintptr_t)addr);
  if (i >= 0) tab[i].r.mapped = false;
  pthread_rwlock_unlock(&lock);
  return HSAKMT_STATUS_SUCCESS;
}

/* Node arrays handed out by QueryPointerInfo must stay valid after the call,
 * so they are interned here and never freed. */
static const HSAuint32 *intern_nodes(const uint32_t *nodes, uint32_t n) {
  static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  static HSAuint32 *pool[512];
  static uint32_t poolsz[512];
  static unsigned npool;
  pthread_mutex_lock(&m);
  for (unsigned k = 0; k < npool; k++)
    if (poolsz[k] == n && !memcmp(pool[k], nodes, n * sizeof *nodes)) {
      pthread_mutex_unlock(&m);
      return pool[k];
    }
  HSAuint32 *p = calloc(n ? n : 1, sizeof *p);
  if (p) memcpy(p, nodes, n * sizeof *nodes);
  if (p && npool < 512) {
    pool[npool] = p;
    poolsz[npool++] = n;
  }
  pthread_mutex_unlock(&m);
  return p;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtQueryPointerInfo(const void *ptr, HsaPointerInfo *info) {
  if (!info) return HSAKMT_STATUS_INVALID_PARAMETER;
  memset(info, 0, sizeof *info);
  struct vgpu_range r;
  if (!vgpu_mem_lookup((uintptr_t)ptr, &r)) {
    info->Type = HSA_POINTER_UNKNOWN;
    return HSAKMT_STATUS_ERROR;
  }
  info->Type = r.allocated ? HSA_POINTER_ALLOCATED : HSA_POINTER_REGISTERED_USER;
  info->Node = r.node;
  info->MemFlags = r.flags;
  info->CPUAddress = (void *)r.base;
  info->GPUAddress = r.base;
  info->SizeInBytes = r.size;
  uint32_t nodes[VGPU_MAX_NODES];
  uint32_t n = r.nnodes;
  memcpy(nodes, r.nodes, sizeof nodes);
  if (!n) {
    struct vgpu_range tmp = r;
    set_nodes(&tmp, 0, NULL);
    n = tmp.nnodes;
    memcpy(nodes, tmp.nodes, sizeof nodes);
  }
  const HSAuint32 *arr = intern_nodes(nodes, n);
  info->NRegisteredNodes = n;
  info->RegisteredNodes = arr;
  info->NMappedNodes = r.mapped ? n : 0;
  info->MappedNodes = arr;
  info->UserData = r.user_data;
  return HSAKMT_STATUS_SUCCESS;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtSetMemoryUserData(const void *ptr, void *data) {
  pthread_rwlock_wrlock(&lock);
  long i = find_containing((uintptr_t)ptr);
  if (i >= 0) tab[i].r.user_data = data;
  pthread_rwlock_unlock(&lock);
  return i >= 0 ? HSAKMT_STATUS_SUCCESS : HSAKMT_STATUS_INVALID_PARAMETER;
}
