/* The render nodes as the thunks reach them: through libdrm. Every thunk
 * asks libdrm for a device handle on the render node it opened, for the
 * marketing name and family (amdgpu_query_gpu_info), and for the fd libdrm
 * keeps (amdgpu_device_get_fd), which it then passes to ACQUIRE_VM. These
 * calls are answered here, at the libdrm level, so no DRM ioctl reaches the
 * fake fd; calls on devices that are not virtual pass to the real libdrm.
 * A DRM ioctl that still arrives is reported and refused. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libdrm/amdgpu.h>
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

/* ROCR imports DMA-buf handles (IPC, graphics interop) through libdrm. The
 * virtual GPU has no DMA-buf: refuse, as importing a foreign buffer fails.
 * The other amdgpu_bo_* calls ROCR makes take a buffer from this import,
 * so they never see the virtual device. */
EXPORT int amdgpu_bo_import(amdgpu_device_handle h, enum amdgpu_bo_handle_type type, uint32_t shared,
                            struct amdgpu_bo_import_result *out) {
  if (ours(h) < 0) {
    int (*f)(amdgpu_device_handle, enum amdgpu_bo_handle_type, uint32_t, struct amdgpu_bo_import_result *) =
        next("amdgpu_bo_import");
    return f ? f(h, type, shared, out) : -EINVAL;
  }
  vgpu_unknown("libdrm function", "amdgpu_bo_import (DMA-buf import)", "-EINVAL");
  return -EINVAL;
}

int vgpu_drm_ioctl(unsigned gpu, unsigned long req, void *arg) {
  (void)gpu;
  (void)arg;
  char name[48];
  snprintf(name, sizeof name, "0x%02x (request 0x%lx)", (unsigned)_IOC_NR(req), req);
  vgpu_unknown("DRM ioctl", name, "EINVAL");
  errno = EINVAL;
  return -1;
}
