/* The render nodes as the thunks reach them: through libdrm. Every thunk
 * asks libdrm for a device handle on the render node it opened, for the
 * marketing name and family (amdgpu_query_gpu_info), and for the fd libdrm
 * keeps (amdgpu_device_get_fd), which it then passes to ACQUIRE_VM. These
 * calls are answered here, at the libdrm level; calls on devices that are
 * not virtual pass to the real libdrm. So are the buffer calls of ROCR's
 * virtual memory API (below), which leaves GEM_MMAP as the one DRM ioctl
 * reaching a virtual render fd; any other is reported and refused. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libdrm/amdgpu.h>
#include <libdrm/amdgpu_drm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "vgpu.h"

#define EXPORT VGPU_EXPORT

/* One device handle per virtual GPU, shared and counted, as libdrm does. */
struct vdev {
  int refs;
  int fd;
};
static struct vdev devs[VGPU_MAX_GPUS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int ours(amdgpu_device_handle h) {
  uintptr_t p = (uintptr_t)h, b = (uintptr_t)devs;
  if (p < b || p >= b + sizeof devs || (p - b) % sizeof devs[0]) return -1;
  return (int)((p - b) / sizeof devs[0]);
}

static void *next(const char *name) {
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) vgpu_unknown("libdrm function (no libdrm loaded)", name, "an error");
  return f;
}

EXPORT int drmOpenRender(int minor) {
  vgpu_config_init();
  for (unsigned g = 0; g < vgpu_cfg.gpus; g++)
    if ((unsigned)minor == vgpu_render_minor(g)) return vgpu_render_open(g, O_RDWR | O_CLOEXEC);
  int (*f)(int) = next("drmOpenRender");
  return f ? f(minor) : -ENODEV;
}

EXPORT int drmClose(int fd) {
  if (vgpu_fd_kind(fd) >= VGPU_FD_RENDER) return close(fd);
  int (*f)(int) = next("drmClose");
  return f ? f(fd) : -EINVAL;
}

EXPORT int amdgpu_device_initialize(int fd, uint32_t *major, uint32_t *minor, amdgpu_device_handle *out) {
  int kind = vgpu_fd_kind(fd);
  if (kind < VGPU_FD_RENDER) {
    int (*f)(int, uint32_t *, uint32_t *, amdgpu_device_handle *) = next("amdgpu_device_initialize");
    return f ? f(fd, major, minor, out) : -ENODEV;
  }
  unsigned g = (unsigned)(kind - VGPU_FD_RENDER);
  pthread_mutex_lock(&lock);
  if (!devs[g].refs) {
    /* libdrm keeps a duplicate of the caller's fd; so does this. */
    devs[g].fd = dup(fd);
    if (devs[g].fd < 0) {
      pthread_mutex_unlock(&lock);
      return -errno;
    }
  }
  devs[g].refs++;
  pthread_mutex_unlock(&lock);
  *major = 3; /* the amdgpu DRM interface version of a 6.x kernel */
  *minor = 57;
  *out = (amdgpu_device_handle)&devs[g];
  return 0;
}

EXPORT int amdgpu_device_deinitialize(amdgpu_device_handle h) {
  int g = ours(h);
  if (g < 0) {
    int (*f)(amdgpu_device_handle) = next("amdgpu_device_deinitialize");
    return f ? f(h) : -EINVAL;
  }
  pthread_mutex_lock(&lock);
  if (devs[g].refs > 0 && --devs[g].refs == 0) {
    close(devs[g].fd);
    devs[g].fd = -1;
  }
  pthread_mutex_unlock(&lock);
  return 0;
}

EXPORT int amdgpu_device_get_fd(amdgpu_device_handle h) {
  int g = ours(h);
  if (g < 0) {
    int (*f)(amdgpu_device_handle) = next("amdgpu_device_get_fd");
    return f ? f(h) : -EINVAL;
  }
  return devs[g].fd;
}

EXPORT const char *amdgpu_get_marketing_name(amdgpu_device_handle h) {
  if (ours(h) < 0) {
    const char *(*f)(amdgpu_device_handle) = next("amdgpu_get_marketing_name");
    return f ? f(h) : NULL;
  }
  return vgpu_cfg.arch->marketing;
}

EXPORT int amdgpu_query_gpu_info(amdgpu_device_handle h, struct amdgpu_gpu_info *info) {
  if (ours(h) < 0) {
    int (*f)(amdgpu_device_handle, struct amdgpu_gpu_info *) = next("amdgpu_query_gpu_info");
    return f ? f(h, info) : -EINVAL;
  }
  const struct vgpu_arch *a = vgpu_cfg.arch;
  memset(info, 0, sizeof *info);
  info->asic_id = a->device_id;
  info->family_id = a->family_id;
  info->ids_flags = 0; /* not AMDGPU_IDS_FLAGS_FUSION: a discrete GPU */
  info->max_engine_clk = a->max_clock_mhz * 1000ull; /* kHz */
  info->max_memory_clk = 1600000;
  info->num_shader_engines = a->se;
  info->num_shader_arrays_per_engine = a->sa_per_se;
  info->gpu_counter_freq = VGPU_GPU_CLOCK_KHZ; /* ROCR's timestamp frequency */
  info->gb_addr_cfg = a->gb_addr_config;
  info->cu_active_number = a->cu;
  info->vram_type = 6; /* AMDGPU_VRAM_TYPE_HBM */
  info->vram_bit_width = 4096;
  return 0;
}

/* Buffer objects imported from a DMA-buf (ROCR's virtual memory API:
 * export through KFD, import here, amdgpu_bo_va_op to place it at a
 * reserved GPU address, amdgpu_bo_export for the GEM handle whose
 * GEM_MMAP offset the CPU mapping uses, amdgpu_bo_free). As libdrm does,
 * importing the same buffer again on a device returns the same object with
 * one more reference. Objects are recognised by address; calls on other
 * objects pass to the real libdrm. */
struct vbo {
  unsigned gpu;
  uint32_t gem;
  uint64_t size;
  unsigned refs;
};
static struct vbo *vbos[4096];

static struct vbo *vbo_of(amdgpu_bo_handle h) {
  for (size_t i = 0; i < sizeof vbos / sizeof vbos[0]; i++)
    if (vbos[i] && (void *)vbos[i] == (void *)h) return vbos[i];
  return NULL;
}

EXPORT int amdgpu_bo_import(amdgpu_device_handle h, enum amdgpu_bo_handle_type type, uint32_t shared,
                            struct amdgpu_bo_import_result *out) {
  int g = ours(h);
  if (g < 0) {
    int (*f)(amdgpu_device_handle, enum amdgpu_bo_handle_type, uint32_t, struct amdgpu_bo_import_result *) =
        next("amdgpu_bo_import");
    return f ? f(h, type, shared, out) : -EINVAL;
  }
  if (type != amdgpu_bo_handle_type_dma_buf_fd) {
    vgpu_unknown("libdrm function", "amdgpu_bo_import of a GEM flink or KMS handle", "-EINVAL");
    return -EINVAL;
  }
  uint32_t gem;
  uint64_t size;
  int rc = vgpu_mem_import_dmabuf((unsigned)g, (int)shared, &gem, &size);
  if (rc) {
    if (rc == -EINVAL) vgpu_unknown("libdrm function", "amdgpu_bo_import of a DMA-buf not exported here", "-EINVAL");
    return rc;
  }
  pthread_mutex_lock(&lock);
  struct vbo *b = NULL;
  size_t free_slot = SIZE_MAX;
  for (size_t i = 0; i < sizeof vbos / sizeof vbos[0]; i++) {
    if (vbos[i] && vbos[i]->gpu == (unsigned)g && vbos[i]->gem == gem) b = vbos[i];
    if (!vbos[i] && free_slot == SIZE_MAX) free_slot = i;
  }
  if (!b && free_slot != SIZE_MAX && (b = calloc(1, sizeof *b))) {
    *b = (struct vbo){(unsigned)g, gem, size, 0};
    vbos[free_slot] = b;
  }
  if (b) b->refs++;
  pthread_mutex_unlock(&lock);
  if (!b) {
    vgpu_mem_gem_close((unsigned)g, gem);
    return -ENOMEM;
  }
  out->buf_handle = (amdgpu_bo_handle)b;
  out->alloc_size = size;
  return 0;
}

EXPORT int amdgpu_bo_export(amdgpu_bo_handle h, enum amdgpu_bo_handle_type type, uint32_t *shared) {
  pthread_mutex_lock(&lock);
  struct vbo *b = vbo_of(h);
  uint32_t gem = b ? b->gem : 0;
  pthread_mutex_unlock(&lock);
  if (!b) {
    int (*f)(amdgpu_bo_handle, enum amdgpu_bo_handle_type, uint32_t *) = next("amdgpu_bo_export");
    return f ? f(h, type, shared) : -EINVAL;
  }
  if (type != amdgpu_bo_handle_type_kms && type != amdgpu_bo_handle_type_kms_noimport) {
    vgpu_unknown("libdrm function", "amdgpu_bo_export as a flink name or DMA-buf", "-EINVAL");
    return -EINVAL;
  }
  *shared = gem; /* the GEM handle on the device's own fd */
  return 0;
}

EXPORT int amdgpu_bo_va_op(amdgpu_bo_handle h, uint64_t offset, uint64_t size, uint64_t addr, uint64_t flags,
                           uint32_t ops) {
  pthread_mutex_lock(&lock);
  struct vbo *b = vbo_of(h);
  struct vbo copy = b ? *b : (struct vbo){0};
  pthread_mutex_unlock(&lock);
  if (!b) {
    int (*f)(amdgpu_bo_handle, uint64_t, uint64_t, uint64_t, uint64_t, uint32_t) = next("amdgpu_bo_va_op");
    return f ? f(h, offset, size, addr, flags, ops) : -EINVAL;
  }
  /* libdrm rounds the size up to pages and maps readable, writable and
   * executable whatever the flags say; so does this. */
  long page = sysconf(_SC_PAGESIZE);
  size = (size + (uint64_t)page - 1) & ~((uint64_t)page - 1);
  if (ops != AMDGPU_VA_OP_MAP && ops != AMDGPU_VA_OP_UNMAP) {
    vgpu_unknown("libdrm function", "amdgpu_bo_va_op other than MAP/UNMAP", "-EINVAL");
    return -EINVAL;
  }
  return vgpu_mem_gem_va(copy.gpu, copy.gem, offset, size, addr, ops == AMDGPU_VA_OP_MAP);
}

EXPORT int amdgpu_bo_free(amdgpu_bo_handle h) {
  pthread_mutex_lock(&lock);
  struct vbo *b = vbo_of(h);
  struct vbo copy = b ? *b : (struct vbo){0};
  if (b && --b->refs == 0) {
    for (size_t i = 0; i < sizeof vbos / sizeof vbos[0]; i++)
      if (vbos[i] == b) vbos[i] = NULL;
    free(b);
  }
  pthread_mutex_unlock(&lock);
  if (!b) {
    int (*f)(amdgpu_bo_handle) = next("amdgpu_bo_free");
    return f ? f(h) : -EINVAL;
  }
  return vgpu_mem_gem_close(copy.gpu, copy.gem);
}

/* Metadata and information of an imported buffer: ROCR 7's IPC export
 * (hsa_amd_ipc_memory_create) imports the DMA-buf it exported, reads the
 * metadata (a buffer exported before keeps its IPC id) or sets a new id;
 * opening the handle compares it. */
_Static_assert(sizeof(struct amdgpu_bo_metadata) <= VGPU_BO_METADATA_MAX, "metadata size");

EXPORT int amdgpu_bo_set_metadata(amdgpu_bo_handle h, struct amdgpu_bo_metadata *info) {
  pthread_mutex_lock(&lock);
  struct vbo *b = vbo_of(h);
  struct vbo copy = b ? *b : (struct vbo){0};
  pthread_mutex_unlock(&lock);
  if (!b) {
    int (*f)(amdgpu_bo_handle, struct amdgpu_bo_metadata *) = next("amdgpu_bo_set_metadata");
    return f ? f(h, info) : -EINVAL;
  }
  /* libdrm refuses more UMD metadata than the ioctl carries. */
  if (!info || info->size_metadata > sizeof info->umd_metadata) return -EINVAL;
  size_t len = sizeof *info;
  return vgpu_mem_gem_metadata(copy.gpu, copy.gem, info, &len, true);
}

EXPORT int amdgpu_bo_query_info(amdgpu_bo_handle h, struct amdgpu_bo_info *info) {
  pthread_mutex_lock(&lock);
  struct vbo *b = vbo_of(h);
  struct vbo copy = b ? *b : (struct vbo){0};
  pthread_mutex_unlock(&lock);
  if (!b) {
    int (*f)(amdgpu_bo_handle, struct amdgpu_bo_info *) = next("amdgpu_bo_query_info");
    return f ? f(h, info) : -EINVAL;
  }
  if (!info) return -EINVAL;
  memset(info, 0, sizeof *info);
  size_t len = 0;
  int rc = vgpu_mem_gem_metadata(copy.gpu, copy.gem, &info->metadata, &len, false);
  if (rc) return rc;
  /* Every buffer a virtual GPU exports is VRAM (user memory is refused). */
  info->alloc_size = copy.size;
  info->phys_alignment = 4096;
  info->preferred_heap = AMDGPU_GEM_DOMAIN_VRAM;
  return 0;
}

/* DRM ioctls on a virtual render fd: only GEM_MMAP arrives (ROCR asks it
 * through drmCommandWriteRead for the CPU mapping of an imported buffer);
 * every other call is answered at the libdrm level above. */
int vgpu_drm_ioctl(unsigned gpu, unsigned long req, void *arg) {
  if (_IOC_TYPE(req) == DRM_IOCTL_BASE && _IOC_NR(req) == DRM_COMMAND_BASE + DRM_AMDGPU_GEM_MMAP && arg &&
      _IOC_SIZE(req) == sizeof(union drm_amdgpu_gem_mmap)) {
    union drm_amdgpu_gem_mmap *a = arg;
    uint64_t off;
    int rc = vgpu_mem_gem_mmap_offset(gpu, a->in.handle, &off);
    if (rc) {
      errno = -rc;
      return -1;
    }
    memset(a, 0, sizeof *a);
    a->out.addr_ptr = off;
    return 0;
  }
  char name[48];
  snprintf(name, sizeof name, "0x%02x (request 0x%lx)", (unsigned)_IOC_NR(req), req);
  vgpu_unknown("DRM ioctl", name, "EINVAL");
  errno = EINVAL;
  return -1;
}
