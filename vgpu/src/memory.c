/* Memory: KFD buffer objects.
 *
 * VRAM and GTT buffers are ranges of one sparse memfd (pages exist only once
 * touched; a freed range is punched out). When a buffer gets a GPU virtual
 * address, this library maps its range there at once, replacing the
 * PROT_NONE reservation the thunk made, so the GPU address is a CPU address
 * the command processor can use, even for VRAM the thunk never maps for
 * the CPU. The thunk's own mmap of the render node (at the buffer's
 * "mmap offset") maps the same pages again, with PROT_NONE raised to
 * read/write for the same reason.
 *
 * User memory (USERPTR) is the application's own pages. Allocations the
 * thunk makes that way use the same address for the GPU; memory the
 * application registers gets a GPU address elsewhere, which the command
 * processor translates back with vgpu_host() (a short sorted table, empty
 * and skipped in most runs).
 *
 * Doorbell, MMIO-remap and event pages are small memfd ranges served by
 * mmap on /dev/kfd at the offsets KFD uses (type in bits 62-63, gpu_id in
 * bits 46-61). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/kfd_ioctl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kfd_uapi.h"
#include "vgpu.h"

#define PAGE 4096ull
#define ALIGN_UP(x) (((x) + PAGE - 1) & ~(PAGE - 1))

/* Offsets the render node's mmap uses for buffers: DRM's fake-offset space
 * starts at 4 GiB. */
#define BO_MMAP_BASE (1ull << 32)
#define MEMFD_SPAN (1ull << 44) /* 16 TiB of offsets: eight GPUs' worth of VRAM */

enum bo_kind { BO_DEVICE, BO_USER_SAME_VA, BO_USER_ALIASED, BO_DOORBELL, BO_MMIO };

struct bo {
  bool live;      /* the memory exists (KFD handle, or a GEM handle imported from it) */
  bool kfd_freed; /* FREE_MEMORY_OF_GPU done; kept alive by GEM handles */
  enum bo_kind kind;
  unsigned gpu;
  uint32_t flags;
  uint64_t va, size;
  uint64_t backing; /* memfd offset (BO_DEVICE) or CPU address (BO_USER_*) */
  uint32_t mapped;  /* bit g: mapped to GPU g */
  unsigned gems;    /* GEM handles (DMA-buf imports) referring to it */
};

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static struct bo *bos;
static size_t nbos, capbos;
static int memfd = -1;

/* Makes room for one more element in a growable array of *cap elements
 * holding n. */
static int grow(void *arrp, size_t *cap, size_t n, size_t elem) {
  void **arr = arrp;
  if (n < *cap) return 0;
  size_t nc = *cap ? *cap * 2 : 256;
  void *p = realloc(*arr, nc * elem);
  if (!p) return -1;
  *arr = p;
  *cap = nc;
  return 0;
}

/* UMD metadata (amdgpu_bo_set_metadata / amdgpu_bo_query_info): amdgpu
 * keeps it with the buffer, so every import of it sees it. ROCR 7 tags a
 * buffer it exports for IPC (hipIpcGetMemHandle, which RCCL calls for every
 * buffer it shares between GPUs) with a random number there and checks it
 * when the handle is opened. Kept by buffer slot; forgotten with the
 * buffer (meta_forget). */
struct bo_meta {
  size_t slot;
  size_t len;
  unsigned char md[VGPU_BO_METADATA_MAX];
};
static struct bo_meta *metas;
static size_t nmetas, capmetas;

static void meta_forget(size_t slot) {
  for (size_t i = 0; i < nmetas; i++)
    if (metas[i].slot == slot) {
      metas[i] = metas[--nmetas];
      return;
    }
}

/* --- the memfd's offset space: first fit over a sorted free list ---------------- */

struct extent {
  uint64_t off, len;
};
static struct extent *freel;
static size_t nfree, capfree;

static int memfd_ready(void) {
  if (memfd >= 0) return 0;
  int fd = memfd_create("vgpu-memory", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, (off_t)MEMFD_SPAN)) {
    vgpu_error("cannot create the virtual GPU's memory file: %s", strerror(errno));
    if (fd >= 0) vgpu_real_close(fd);
    return -1;
  }
  if (grow(&freel, &capfree, 0, sizeof *freel)) return -1;
  nfree = 1;
  freel[0] = (struct extent){0, MEMFD_SPAN};
  memfd = fd;
  return 0;
}

static int64_t extent_alloc(uint64_t len) {
  for (size_t i = 0; i < nfree; i++) {
    if (freel[i].len < len) continue;
    uint64_t off = freel[i].off;
    freel[i].off += len;
    freel[i].len -= len;
    if (!freel[i].len) {
      memmove(&freel[i], &freel[i + 1], (nfree - i - 1) * sizeof *freel);
      nfree--;
    }
    return (int64_t)off;
  }
  return -1;
}

static void extent_free(uint64_t off, uint64_t len) {
  fallocate(memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len);
  size_t i = 0;
  while (i < nfree && freel[i].off < off) i++;
  bool prev = i > 0 && freel[i - 1].off + freel[i - 1].len == off;
  bool next = i < nfree && off + len == freel[i].off;
  if (prev && next) {
    freel[i - 1].len += len + freel[i].len;
    memmove(&freel[i], &freel[i + 1], (nfree - i - 1) * sizeof *freel);
    nfree--;
  } else if (prev) {
    freel[i - 1].len += len;
  } else if (next) {
    freel[i].off = off;
    freel[i].len += len;
  } else {
    if (grow(&freel, &capfree, nfree, sizeof *freel)) return; /* lost to reuse, not to correctness */
    memmove(&freel[i + 1], &freel[i], (nfree - i) * sizeof *freel);
    freel[i] = (struct extent){off, len};
    nfree++;
  }
}

/* --- GPU address ranges, for lookups from the command processor --------------- */

struct range {
  uint64_t va, end;
  int64_t delta; /* host address - GPU address */
  bool device;   /* allocated by the runtime (not memory the app registered) */
};
static struct range *ranges;
static size_t nranges, capranges;
static _Atomic size_t naliased; /* ranges with delta != 0 */

static size_t range_upper(uint64_t va) { /* first range with start > va */
  size_t lo = 0, hi = nranges;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (ranges[mid].va <= va) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static int range_add(uint64_t va, uint64_t size, int64_t delta, bool device) {
  if (grow(&ranges, &capranges, nranges, sizeof *ranges)) return -1;
  size_t i = range_upper(va);
  memmove(&ranges[i + 1], &ranges[i], (nranges - i) * sizeof *ranges);
  ranges[i] = (struct range){va, va + size, delta, device};
  nranges++;
  if (delta) naliased++;
  return 0;
}

static void range_remove(uint64_t va) {
  size_t i = range_upper(va);
  if (!i || ranges[i - 1].va != va) return;
  if (ranges[i - 1].delta) naliased--;
  memmove(&ranges[i - 1], &ranges[i], (nranges - i) * sizeof *ranges);
  nranges--;
}

static const struct range *range_find(uint64_t va) {
  size_t i = range_upper(va);
  if (!i || va >= ranges[i - 1].end) return NULL;
  return &ranges[i - 1];
}

void *vgpu_host(uint64_t va) {
  if (!atomic_load_explicit(&naliased, memory_order_relaxed)) return (void *)(uintptr_t)va;
  pthread_rwlock_rdlock(&lock);
  const struct range *r = range_find(va);
  int64_t d = r ? r->delta : 0;
  pthread_rwlock_unlock(&lock);
  return (void *)(uintptr_t)(va + (uint64_t)d);
}

bool vgpu_mem_known(uint64_t va, uint64_t len, bool device_only) {
  pthread_rwlock_rdlock(&lock);
  const struct range *r = range_find(va);
  bool ok = r && va + len <= r->end && (!device_only || r->device);
  pthread_rwlock_unlock(&lock);
  return ok;
}

bool vgpu_mem_range(uint64_t va, uint64_t *base, uint64_t *size) {
  pthread_rwlock_rdlock(&lock);
  const struct range *r = range_find(va);
  if (r) {
    *base = r->va;
    *size = r->end - r->va;
  }
  pthread_rwlock_unlock(&lock);
  return r != NULL;
}

/* --- buffer objects ------------------------------------------------------------- */

static uint64_t handle_of(size_t slot) { return ((uint64_t)vgpu_gpu_id(bos[slot].gpu) << 32) | (slot + 1); }

static struct bo *bo_by_handle(uint64_t handle) {
  uint64_t slot = (handle & 0xffffffffu) - 1;
  if (slot >= nbos || !bos[slot].live || bos[slot].kfd_freed || handle_of(slot) != handle) return NULL;
  return &bos[slot];
}

static long new_slot(void) {
  for (size_t i = 0; i < nbos; i++)
    if (!bos[i].live) return (long)i;
  if (grow(&bos, &capbos, nbos, sizeof *bos)) return -1;
  return (long)nbos++;
}

static uint64_t vram_used(unsigned gpu) {
  uint64_t used = 0;
  for (size_t i = 0; i < nbos; i++)
    if (bos[i].live && bos[i].gpu == gpu && (bos[i].flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM)) used += bos[i].size;
  return used;
}

int vgpu_mem_alloc(void *argp) {
  struct kfd_ioctl_alloc_memory_of_gpu_args *a = argp;
  int g = vgpu_gpu_index(a->gpu_id);
  if (g < 0 || !a->size) return -EINVAL;
  uint64_t size = ALIGN_UP(a->size);
  uint32_t f = a->flags;
  struct bo b = {.live = true, .gpu = (unsigned)g, .flags = f, .va = a->va_addr, .size = size};
  int rc = 0;
  pthread_rwlock_wrlock(&lock);
  if (f & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL) {
    b.kind = BO_DOORBELL;
  } else if (f & KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP) {
    b.kind = BO_MMIO;
    a->mmap_offset = vgpu_special_mmap_offset(KFD_MMAP_TYPE_MMIO_V, (unsigned)g);
  } else if (f & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR) {
    b.backing = a->mmap_offset; /* the CPU address of the user pages */
    b.kind = b.backing == b.va ? BO_USER_SAME_VA : BO_USER_ALIASED;
  } else if (f & (KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_GTT)) {
    b.kind = BO_DEVICE;
    if ((f & KFD_IOC_ALLOC_MEM_FLAGS_VRAM) && vram_used(b.gpu) + size > vgpu_cfg.arch->vram_bytes) {
      rc = -ENOMEM;
      goto out;
    }
    int64_t off = memfd_ready() ? -1 : extent_alloc(size);
    if (off < 0) {
      rc = -ENOMEM;
      goto out;
    }
    b.backing = (uint64_t)off;
    a->mmap_offset = BO_MMAP_BASE + b.backing;
    if (b.va) {
      void *p = vgpu_real_mmap((void *)(uintptr_t)b.va, size, PROT_READ | PROT_WRITE | PROT_EXEC,
                               MAP_SHARED | MAP_FIXED, memfd, (off_t)b.backing);
      if (p == MAP_FAILED) {
        extent_free(b.backing, size);
        rc = -ENOMEM;
        goto out;
      }
      /* As KFD's mappings: a forked child does not share the GPU's memory. */
      madvise(p, size, MADV_DONTFORK);
    }
  } else {
    rc = -EINVAL;
    goto out;
  }
  long slot = new_slot();
  if (slot < 0 || (b.va && b.kind != BO_DOORBELL && b.kind != BO_MMIO &&
                   range_add(b.va, size, b.kind == BO_USER_ALIASED ? (int64_t)(b.backing - b.va) : 0,
                             b.kind != BO_USER_ALIASED))) {
    if (b.kind == BO_DEVICE) extent_free(b.backing, size);
    rc = -ENOMEM;
    goto out;
  }
  bos[slot] = b;
  a->handle = handle_of((size_t)slot);
out:
  pthread_rwlock_unlock(&lock);
  vgpu_logf("{\"type\":\"alloc\",\"pid\":%d,\"gpu\":%d,\"flags\":%u,\"va\":%llu,\"bytes\":%llu,\"handle\":%llu,"
            "\"result\":%d}",
            (int)getpid(), g, f, (unsigned long long)b.va, (unsigned long long)size,
            (unsigned long long)(rc ? 0 : a->handle), rc);
  return rc;
}

int vgpu_mem_free(void *argp) {
  struct kfd_ioctl_free_memory_of_gpu_args *a = argp;
  pthread_rwlock_wrlock(&lock);
  struct bo *b = bo_by_handle(a->handle);
  if (!b) {
    pthread_rwlock_unlock(&lock);
    return -EINVAL;
  }
  struct bo copy = *b;
  if (copy.va && copy.kind != BO_DOORBELL && copy.kind != BO_MMIO) range_remove(copy.va);
  if (copy.gems) {
    /* Imported as a GEM object: the memory lives until its last handle
     * is closed, as a kernel BO lives while referenced. */
    b->kfd_freed = true;
  } else {
    meta_forget((size_t)(b - bos));
    b->live = false;
    if (copy.kind == BO_DEVICE) extent_free(copy.backing, copy.size);
  }
  pthread_rwlock_unlock(&lock);
  if (copy.va) vgpu_kernel_names_forget((uintptr_t)copy.va, copy.size);
  return 0;
}

int vgpu_mem_map(void *argp, bool map) {
  struct kfd_ioctl_map_memory_to_gpu_args *a = argp; /* same layout as unmap */
  uint32_t ids[VGPU_MAX_GPUS];
  uint32_t n = a->n_devices;
  if (n > VGPU_MAX_GPUS || a->n_success > n) return -EINVAL;
  memcpy(ids, (void *)(uintptr_t)a->device_ids_array_ptr, n * sizeof *ids);
  pthread_rwlock_wrlock(&lock);
  struct bo *b = bo_by_handle(a->handle);
  int rc = b ? 0 : -EINVAL;
  for (uint32_t i = a->n_success; b && i < n; i++) {
    int g = vgpu_gpu_index(ids[i]);
    if (g < 0) {
      rc = -EINVAL;
      break;
    }
    if (map) b->mapped |= 1u << g;
    else b->mapped &= ~(1u << g);
    a->n_success = i + 1;
  }
  pthread_rwlock_unlock(&lock);
  return rc;
}

int vgpu_mem_available(void *argp) {
  struct kfd_ioctl_get_available_memory_args *a = argp;
  int g = vgpu_gpu_index(a->gpu_id);
  if (g < 0) return -EINVAL;
  pthread_rwlock_rdlock(&lock);
  uint64_t used = vram_used((unsigned)g);
  pthread_rwlock_unlock(&lock);
  a->available = vgpu_cfg.arch->vram_bytes - used;
  return 0;
}

void *vgpu_mem_by_handle(uint64_t handle, uint64_t *size) {
  pthread_rwlock_rdlock(&lock);
  struct bo *b = bo_by_handle(handle);
  void *p = b && b->va ? vgpu_host(b->va) : NULL;
  if (b && size) *size = b->size;
  pthread_rwlock_unlock(&lock);
  return p;
}

/* --- DMA-buf export and GEM objects (ROCR's virtual memory API) ------------------
 *
 * KFD 1.12 exports a buffer as a DMA-buf; 1.15 lets the process map it in
 * its compute VM through the render node (PRIME import, GEM_VA). ROCR's
 * hsa_amd_vmem_* path does exactly that: a buffer allocated without an
 * address is exported, imported through libdrm (amdgpu_bo_import, answered
 * in drm.c), placed at a reserved GPU address with amdgpu_bo_va_op, and
 * mapped for the CPU by mmap of the render node at the offset GEM_MMAP
 * reports.
 *
 * A DMA-buf fd is a memfd of the buffer's size (so lseek reports the size,
 * as on a kernel DMA-buf), recognised on import by its inode; its own mmap
 * is not served, and it is not usable in another process. A GEM handle
 * holds the buffer alive, as a kernel GEM reference does. A GPU mapping
 * (GEM_VA) does not touch the CPU's page tables at that address: the GPU
 * address translates, for the command processor, to a private CPU view of
 * the buffer's pages, so the CPU reaches the range only when the runtime
 * maps it for the CPU, as on hardware. */

struct dmabuf {
  dev_t dev;
  ino_t ino;
  uint64_t handle; /* the KFD handle exported */
};
static struct dmabuf *dmabufs;
static size_t ndmabufs, capdmabufs;

struct gem {
  bool live;
  unsigned gpu; /* the device (render node) it was imported on */
  size_t slot;  /* the buffer */
  unsigned refs;
};
static struct gem *gems;
static size_t ngems, capgems;

struct vamap {
  unsigned gpu;
  uint32_t gem;
  uint64_t va, size;
  void *view; /* the command processor's CPU view of the mapped pages */
};
static struct vamap *vamaps;
static size_t nvamaps, capvamaps;

static void release_if_unreferenced(struct bo *b) {
  if (!b->kfd_freed || b->gems) return;
  meta_forget((size_t)(b - bos));
  b->live = false;
  b->kfd_freed = false;
  if (b->kind == BO_DEVICE) extent_free(b->backing, b->size);
}

int vgpu_mem_export_dmabuf(void *argp) {
  struct vgpu_export_dmabuf_args *a = argp;
  pthread_rwlock_wrlock(&lock);
  struct bo *b = bo_by_handle(a->handle);
  int rc = 0;
  if (!b) rc = -EINVAL;
  else if (b->kind == BO_USER_SAME_VA || b->kind == BO_USER_ALIASED) rc = -EPERM; /* amdgpu: no userptr export */
  else if (b->kind != BO_DEVICE) rc = -EINVAL;
  int fd = -1;
  struct stat st;
  if (!rc) {
    fd = memfd_create("vgpu-dmabuf", (a->flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
    if (fd < 0 || ftruncate(fd, (off_t)b->size) || fstat(fd, &st)) rc = fd < 0 ? -EMFILE : -ENOMEM;
  }
  if (!rc) {
    /* Forget exports of buffers that no longer exist. */
    size_t j = 0;
    for (size_t i = 0; i < ndmabufs; i++) {
      uint64_t slot = (dmabufs[i].handle & 0xffffffffu) - 1;
      if (slot < nbos && bos[slot].live && handle_of(slot) == dmabufs[i].handle) dmabufs[j++] = dmabufs[i];
    }
    ndmabufs = j;
    if (grow(&dmabufs, &capdmabufs, ndmabufs, sizeof *dmabufs)) rc = -ENOMEM;
    else dmabufs[ndmabufs++] = (struct dmabuf){st.st_dev, st.st_ino, a->handle};
  }
  if (rc && fd >= 0) vgpu_real_close(fd);
  else if (!rc) a->dmabuf_fd = (uint32_t)fd;
  pthread_rwlock_unlock(&lock);
  return rc;
}

static struct gem *gem_get(unsigned gpu, uint32_t h) {
  if (!h || h > ngems || !gems[h - 1].live || gems[h - 1].gpu != gpu) return NULL;
  return &gems[h - 1];
}

int vgpu_mem_import_dmabuf(unsigned gpu, int fd, uint32_t *gem, uint64_t *size) {
  struct stat st;
  if (fstat(fd, &st)) return -EBADF;
  pthread_rwlock_wrlock(&lock);
  int rc = -EINVAL; /* not a DMA-buf this process exported, or its buffer is gone */
  for (size_t i = 0; i < ndmabufs; i++) {
    if (dmabufs[i].dev != st.st_dev || dmabufs[i].ino != st.st_ino) continue;
    uint64_t slot = (dmabufs[i].handle & 0xffffffffu) - 1;
    if (slot >= nbos || !bos[slot].live || handle_of(slot) != dmabufs[i].handle) break;
    /* One GEM handle per buffer and device, counted (PRIME import). */
    size_t g = ngems;
    for (size_t j = 0; j < ngems; j++)
      if (gems[j].live && gems[j].gpu == gpu && gems[j].slot == slot) g = j;
    if (g == ngems) {
      for (g = 0; g < ngems && gems[g].live; g++) {
      }
      if (g == ngems) {
        if (grow(&gems, &capgems, ngems, sizeof *gems)) {
          rc = -ENOMEM;
          break;
        }
        ngems++;
      }
      gems[g] = (struct gem){true, gpu, (size_t)slot, 0};
      bos[slot].gems++;
    }
    gems[g].refs++;
    *gem = (uint32_t)(g + 1);
    *size = bos[slot].size;
    rc = 0;
    break;
  }
  pthread_rwlock_unlock(&lock);
  return rc;
}

static bool vamap_shares_range(size_t skip, uint64_t va) {
  for (size_t i = 0; i < nvamaps; i++)
    if (i != skip && vamaps[i].va == va) return true;
  return false;
}

static void vamap_remove(size_t i) {
  struct vamap m = vamaps[i];
  if (!vamap_shares_range(i, m.va)) {
    range_remove(m.va);
  } else {
    /* Another GPU keeps the range: translate through its view. */
    size_t r = range_upper(m.va);
    for (size_t j = 0; j < nvamaps; j++)
      if (j != i && vamaps[j].va == m.va) ranges[r - 1].delta = (int64_t)((uintptr_t)vamaps[j].view - m.va);
  }
  memmove(&vamaps[i], &vamaps[i + 1], (nvamaps - i - 1) * sizeof *vamaps);
  nvamaps--;
  munmap(m.view, m.size);
}

int vgpu_mem_gem_close(unsigned gpu, uint32_t h) {
  pthread_rwlock_wrlock(&lock);
  struct gem *g = gem_get(gpu, h);
  int rc = g ? 0 : -EINVAL;
  if (g && --g->refs == 0) {
    /* Closing the last handle removes the object's mappings from the VM. */
    for (size_t i = nvamaps; i-- > 0;)
      if (vamaps[i].gpu == gpu && vamaps[i].gem == h) vamap_remove(i);
    struct bo *b = &bos[g->slot];
    g->live = false;
    b->gems--;
    release_if_unreferenced(b);
  }
  pthread_rwlock_unlock(&lock);
  return rc;
}

int vgpu_mem_gem_va(unsigned gpu, uint32_t h, uint64_t offset, uint64_t size, uint64_t va, bool map) {
  pthread_rwlock_wrlock(&lock);
  struct gem *g = gem_get(gpu, h);
  int rc = 0;
  if (!g) {
    rc = -ENOENT;
    goto out;
  }
  if (!map) {
    rc = -ENOENT; /* no mapping of this object at va */
    for (size_t i = 0; i < nvamaps; i++)
      if (vamaps[i].gpu == gpu && vamaps[i].gem == h && vamaps[i].va == va) {
        vamap_remove(i);
        rc = 0;
        break;
      }
    goto out;
  }
  struct bo *b = &bos[g->slot];
  if (!size || (va | offset | size) & (PAGE - 1) || offset + size > b->size || offset + size < offset ||
      b->kind != BO_DEVICE) {
    rc = -EINVAL;
    goto out;
  }
  /* A range already mapped in this GPU's VM is refused, as amdgpu does. */
  for (size_t i = 0; i < nvamaps; i++)
    if (vamaps[i].gpu == gpu && va < vamaps[i].va + vamaps[i].size && vamaps[i].va < va + size) {
      rc = -EINVAL;
      goto out;
    }
  /* The command processor translates one address space for all GPUs: the
   * same object at the same place in another GPU's VM shares the entry;
   * anything else there (another buffer) is beyond this emulation. */
  bool shared = false;
  for (size_t i = 0; i < nvamaps; i++)
    if (vamaps[i].va == va && vamaps[i].size == size && gems[vamaps[i].gem - 1].slot == g->slot) shared = true;
  size_t r = range_upper(va + size - 1);
  if (!shared && r && ranges[r - 1].end > va) {
    vgpu_unknown("GPU mapping", "GEM_VA over an address another buffer holds for another GPU", "-EINVAL");
    rc = -EINVAL;
    goto out;
  }
  void *view = vgpu_real_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, (off_t)(b->backing + offset));
  if (view == MAP_FAILED) {
    rc = -ENOMEM;
    goto out;
  }
  madvise(view, size, MADV_DONTFORK);
  if (grow(&vamaps, &capvamaps, nvamaps, sizeof *vamaps) ||
      (!shared && range_add(va, size, (int64_t)((uintptr_t)view - va), true))) {
    munmap(view, size);
    rc = -ENOMEM;
    goto out;
  }
  vamaps[nvamaps++] = (struct vamap){gpu, h, va, size, view};
out:
  pthread_rwlock_unlock(&lock);
  vgpu_logf("{\"type\":\"gem_va\",\"pid\":%d,\"gpu\":%u,\"op\":\"%s\",\"gem\":%u,\"va\":%llu,\"offset\":%llu,"
            "\"bytes\":%llu,\"result\":%d}",
            (int)getpid(), gpu, map ? "map" : "unmap", h, (unsigned long long)va, (unsigned long long)offset,
            (unsigned long long)size, rc);
  return rc;
}

int vgpu_mem_gem_metadata(unsigned gpu, uint32_t h, void *md, size_t *len, bool set) {
  pthread_rwlock_wrlock(&lock);
  struct gem *g = gem_get(gpu, h);
  int rc = g ? 0 : -EINVAL;
  if (g) {
    size_t i = 0;
    while (i < nmetas && metas[i].slot != g->slot) i++;
    if (!set) {
      *len = i < nmetas ? metas[i].len : 0; /* never set: none, as amdgpu */
      if (*len) memcpy(md, metas[i].md, *len);
    } else if (*len > VGPU_BO_METADATA_MAX) {
      rc = -EINVAL;
    } else if (i == nmetas && grow(&metas, &capmetas, nmetas, sizeof *metas)) {
      rc = -ENOMEM;
    } else {
      if (i == nmetas) nmetas++;
      metas[i].slot = g->slot;
      metas[i].len = *len;
      memcpy(metas[i].md, md, *len);
    }
  }
  pthread_rwlock_unlock(&lock);
  return rc;
}

int vgpu_mem_gem_mmap_offset(unsigned gpu, uint32_t h, uint64_t *off) {
  pthread_rwlock_rdlock(&lock);
  struct gem *g = gem_get(gpu, h);
  int rc = g && bos[g->slot].kind == BO_DEVICE ? 0 : -ENOENT;
  if (!rc) *off = BO_MMAP_BASE + bos[g->slot].backing;
  pthread_rwlock_unlock(&lock);
  return rc;
}

uint64_t vgpu_mem_doorbell_va(unsigned gpu) {
  uint64_t va = 0;
  pthread_rwlock_rdlock(&lock);
  for (size_t i = 0; i < nbos && !va; i++)
    if (bos[i].live && bos[i].kind == BO_DOORBELL && bos[i].gpu == gpu) va = bos[i].va;
  pthread_rwlock_unlock(&lock);
  return va;
}

/* --- pages served through /dev/kfd ------------------------------------------------ */

/* Per GPU: doorbells (1024 x 8 bytes), the MMIO-remap page; per process:
 * the event page (KFD_SIGNAL_EVENT_LIMIT slots), used only when the thunk
 * does not supply its own buffer. Allocated on first use. */
static int64_t doorbell_off[VGPU_MAX_GPUS], mmio_off[VGPU_MAX_GPUS], events_off = -1;
static bool special_init;

static int64_t special(int64_t *slot, uint64_t len) {
  if (*slot < 0 && !memfd_ready()) *slot = extent_alloc(len);
  return *slot;
}

uint64_t vgpu_special_mmap_offset(int type, unsigned gpu) {
  uint64_t off = (uint64_t)type << KFD_MMAP_TYPE_SHIFT_V;
  if (type != KFD_MMAP_TYPE_EVENTS_V) off |= ((uint64_t)vgpu_gpu_id(gpu) & 0xffff) << KFD_MMAP_GPU_ID_SHIFT_V;
  return off;
}

void *vgpu_mem_mmap(int kind, void *addr, size_t len, int prot, int flags, off_t off) {
  uint64_t o = (uint64_t)off, memoff;
  if (!prot) prot = PROT_READ | PROT_WRITE; /* the command processor reaches the GPU's memory here */
  pthread_rwlock_wrlock(&lock);
  if (!special_init) {
    for (unsigned g = 0; g < VGPU_MAX_GPUS; g++) doorbell_off[g] = mmio_off[g] = -1;
    special_init = true;
  }
  int64_t got = -1;
  uint64_t avail = 0;
  if (kind == VGPU_FD_KFD) {
    unsigned type = (unsigned)(o >> KFD_MMAP_TYPE_SHIFT_V);
    int g = vgpu_gpu_index((uint32_t)((o >> KFD_MMAP_GPU_ID_SHIFT_V) & 0xffff));
    if (type == KFD_MMAP_TYPE_DOORBELL_V && g >= 0) got = special(&doorbell_off[g], avail = 8192);
    else if (type == KFD_MMAP_TYPE_MMIO_V && g >= 0) got = special(&mmio_off[g], avail = PAGE);
    else if (type == KFD_MMAP_TYPE_EVENTS_V) got = special(&events_off, avail = KFD_SIGNAL_EVENT_LIMIT * 8);
  } else {
    memoff = o - BO_MMAP_BASE;
    for (size_t i = 0; i < nbos; i++)
      if (bos[i].live && bos[i].kind == BO_DEVICE && memoff >= bos[i].backing &&
          memoff < bos[i].backing + bos[i].size) {
        got = (int64_t)memoff;
        avail = bos[i].backing + bos[i].size - memoff;
        break;
      }
  }
  void *p = MAP_FAILED;
  if (got >= 0 && len <= avail) {
    p = vgpu_real_mmap(addr, len, prot, (flags & ~MAP_PRIVATE) | MAP_SHARED, memfd, (off_t)got);
  } else {
    errno = EINVAL;
  }
  pthread_rwlock_unlock(&lock);
  if (p == MAP_FAILED)
    vgpu_logf("{\"type\":\"mmap_refused\",\"pid\":%d,\"fd_kind\":%d,\"offset\":%llu,\"bytes\":%zu}", (int)getpid(),
              kind, (unsigned long long)o, len);
  return p;
}

/* The doorbell page of GPU gpu as the command processor reads it: its own
 * mapping of the memfd range the thunk maps through /dev/kfd (the same
 * pages, so a doorbell store of the runtime is seen here), 1024 64-bit
 * doorbells, slot = KFD queue id. Made on first use; NULL if it cannot be. */
static volatile uint64_t *doorbell_map[VGPU_MAX_GPUS];

volatile uint64_t *vgpu_mem_doorbells(unsigned gpu) {
  if (gpu >= VGPU_MAX_GPUS) return NULL;
  pthread_rwlock_wrlock(&lock);
  if (!special_init) {
    for (unsigned g = 0; g < VGPU_MAX_GPUS; g++) doorbell_off[g] = mmio_off[g] = -1;
    special_init = true;
  }
  if (!doorbell_map[gpu]) {
    int64_t off = special(&doorbell_off[gpu], 8192);
    void *p = off < 0 ? MAP_FAILED
                      : vgpu_real_mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, (off_t)off);
    if (p != MAP_FAILED) {
      madvise(p, 8192, MADV_DONTFORK);
      doorbell_map[gpu] = p;
    }
  }
  volatile uint64_t *d = doorbell_map[gpu];
  pthread_rwlock_unlock(&lock);
  return d;
}

/* The event page when the thunk supplied none (the APU path of KFD). */
void *vgpu_events_page(void) {
  pthread_rwlock_wrlock(&lock);
  int64_t off = special(&events_off, KFD_SIGNAL_EVENT_LIMIT * 8);
  void *p = MAP_FAILED;
  if (off >= 0)
    p = vgpu_real_mmap(NULL, KFD_SIGNAL_EVENT_LIMIT * 8, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, (off_t)off);
  pthread_rwlock_unlock(&lock);
  return p == MAP_FAILED ? NULL : p;
}

/* After fork: the child is a new KFD process with no buffers, and must not
 * allocate from the parent's memory file. Locks are reinitialised because
 * another thread may have held them at the fork. */
void vgpu_memory_after_fork(void) {
  pthread_rwlock_init(&lock, NULL);
  if (memfd >= 0) vgpu_real_close(memfd);
  memfd = -1;
  free(freel);
  freel = NULL;
  nfree = capfree = 0;
  nbos = 0;
  ndmabufs = ngems = nvamaps = 0;
  nranges = 0;
  naliased = 0;
  special_init = false;
  events_off = -1;
  memset(doorbell_map, 0, sizeof doorbell_map); /* MADV_DONTFORK: not in the child */
}
