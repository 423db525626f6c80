/* The KFD ioctl interface. Requests are matched by number, never by the
 * full request code: the argument size is part of the code and older
 * thunks pass smaller structs (ROCm 5.2's CREATE_QUEUE is 88 bytes, newer
 * ones 96). The caller's bytes are copied into a zeroed buffer of the
 * newest layout, the handler sees that, and exactly the caller's size is
 * copied back, as the kernel's own dispatcher does.
 *
 * Each known ioctl is either served, or answered as a driver without the
 * feature answers (the errno amdkfd returns then); either way it is logged.
 * An ioctl this table does not know is reported once on stderr. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "kfd_uapi.h"
#include "vgpu.h"

#define KFD_IOCTL_BASE_CHAR 'K'

static int get_version(void *argp) {
  struct kfd_ioctl_get_version_args *a = argp;
  a->major_version = VGPU_KFD_MAJOR;
  a->minor_version = VGPU_KFD_MINOR;
  return 0;
}

static int gpu_or_einval(uint32_t gpu_id) { return vgpu_gpu_index(gpu_id) < 0 ? -EINVAL : 0; }

/* LDS and scratch apertures as gfx9+ KFD reports them (the upper 32 bits
 * become amd_queue_t's aperture bases); GPUVM covers the 47-bit user
 * address space, so the thunk manages GPU addresses as CPU addresses. */
static void fill_aperture(struct kfd_process_device_apertures *ap, unsigned g) {
  memset(ap, 0, sizeof *ap);
  ap->lds_base = 1ull << 48;
  ap->lds_limit = ap->lds_base + 0xffffffffull;
  ap->scratch_base = 2ull << 48;
  ap->scratch_limit = ap->scratch_base + 0xffffffffull;
  ap->gpuvm_base = 1ull << 16;
  ap->gpuvm_limit = (1ull << 47) - 1;
  ap->gpu_id = vgpu_gpu_id(g);
}

static int get_apertures_new(void *argp) {
  struct kfd_ioctl_get_process_apertures_new_args *a = argp;
  if (!a->kfd_process_device_apertures_ptr) {
    a->num_of_nodes = vgpu_cfg.gpus;
    return 0;
  }
  if (a->num_of_nodes < vgpu_cfg.gpus) return -EINVAL;
  struct kfd_process_device_apertures *out = (void *)(uintptr_t)a->kfd_process_device_apertures_ptr;
  for (unsigned g = 0; g < vgpu_cfg.gpus; g++) fill_aperture(&out[g], g);
  a->num_of_nodes = vgpu_cfg.gpus;
  return 0;
}

static int get_apertures_old(void *argp) {
  struct kfd_ioctl_get_process_apertures_args *a = argp;
  unsigned n = vgpu_cfg.gpus < NUM_OF_SUPPORTED_GPUS ? vgpu_cfg.gpus : NUM_OF_SUPPORTED_GPUS;
  for (unsigned g = 0; g < n; g++) fill_aperture(&a->process_apertures[g], g);
  a->num_of_nodes = n;
  return 0;
}

static int get_clock_counters(void *argp) {
  struct kfd_ioctl_get_clock_counters_args *a = argp;
  /* GPU and system counters come from one clock (CLOCK_BOOTTIME, or the
   * virtual one), so ROCR's linear tick-to-time interpolation is exact. */
  uint64_t ns = vgpu_now_ns();
  struct timespec raw;
  clock_gettime(CLOCK_MONOTONIC_RAW, &raw);
  a->gpu_clock_counter = ns / VGPU_GPU_TICK_NS;
  a->cpu_clock_counter = (uint64_t)raw.tv_sec * 1000000000ull + (uint64_t)raw.tv_nsec;
  a->system_clock_counter = ns;
  a->system_clock_freq = 1000000000ull;
  return 0;
}

static int get_tile_config(void *argp) {
  struct kfd_ioctl_get_tile_config_args *a = argp;
  if (gpu_or_einval(a->gpu_id)) return -EINVAL;
  a->num_tile_configs = 0; /* gfx9 and later have no tile mode tables */
  a->num_macro_tile_configs = 0;
  a->gb_addr_config = vgpu_cfg.arch->gb_addr_config;
  a->num_banks = 16;
  a->num_ranks = 1;
  return 0;
}

static int set_memory_policy(void *argp) {
  return gpu_or_einval(((struct kfd_ioctl_set_memory_policy_args *)argp)->gpu_id);
}
static int set_scratch_backing_va(void *argp) {
  return gpu_or_einval(((struct kfd_ioctl_set_scratch_backing_va_args *)argp)->gpu_id);
}
/* The trap-memory area (TMA) comes with the handler: ROCR 6.4+ puts the
 * addresses of its PC-sampling buffers there (pcsample.c). */
static int set_trap_handler(void *argp) {
  struct kfd_ioctl_set_trap_handler_args *a = argp;
  int g = vgpu_gpu_index(a->gpu_id);
  if (g < 0) return -EINVAL;
  vgpu_pcs_set_tma((unsigned)g, a->tma_addr);
  return 0;
}

static int acquire_vm(void *argp) {
  struct kfd_ioctl_acquire_vm_args *a = argp;
  int g = vgpu_gpu_index(a->gpu_id);
  if (g < 0 || vgpu_fd_kind((int)a->drm_fd) != VGPU_FD_RENDER + g) return -EINVAL;
  return 0;
}

static int set_xnack_mode(void *argp) {
  struct kfd_ioctl_set_xnack_mode_args *a = argp;
  /* Page-fault retry is not emulated: report it off, and refuse turning it
   * on, as KFD does on a GPU without XNACK support. */
  if (a->xnack_enabled < 0) {
    a->xnack_enabled = 0;
    return 0;
  }
  return a->xnack_enabled ? -EPERM : 0;
}

static int set_cu_mask(void *argp) {
  return vgpu_queue_exists(((struct kfd_ioctl_set_cu_mask_args *)argp)->queue_id) ? 0 : -EINVAL;
}

static int alloc_queue_gws(void *argp) {
  struct kfd_ioctl_alloc_queue_gws_args *a = argp;
  if (!vgpu_queue_exists(a->queue_id)) return -EINVAL;
  a->first_gws = 0;
  return 0;
}

/* RUNTIME_ENABLE: ROCR 6.1+ announces itself once, before its first queue
 * (the thunk calls only when every GPU node reports debugger-capable
 * firmware, which the topology does). As amdkfd: a second enable while
 * enabled is EBUSY, an enable after queues exist EEXIST; disabling always
 * succeeds. No capability bit is reported (no core dumps). A runtime that
 * enabled itself creates its queues with an exception event and installs the
 * trap handler that reports exceptions through KFD, and is the one to which
 * ROCR 6.4+ offers PC sampling. */
static pthread_mutex_t runtime_lock = PTHREAD_MUTEX_INITIALIZER;
static bool runtime_enabled;

static int runtime_enable(void *argp) {
  struct vgpu_runtime_enable_args *a = argp;
  int rc = 0;
  pthread_mutex_lock(&runtime_lock);
  if (!(a->mode_mask & VGPU_RUNTIME_ENABLE_MODE_ENABLE)) {
    runtime_enabled = false;
  } else if (runtime_enabled) {
    rc = -EBUSY;
  } else if (vgpu_queue_count() > 0) {
    rc = -EEXIST;
  } else {
    runtime_enabled = true;
  }
  a->capabilities_mask = 0;
  pthread_mutex_unlock(&runtime_lock);
  return rc;
}

static int mem_alloc(void *a) { return vgpu_mem_alloc(a); }
static int mem_free(void *a) { return vgpu_mem_free(a); }
static int mem_map(void *a) { return vgpu_mem_map(a, true); }
static int mem_unmap(void *a) { return vgpu_mem_map(a, false); }
static int queue_create(void *a) { return vgpu_queue_create(a, sizeof(struct vgpu_create_queue_args)); }

struct kfd_ioctl_def {
  const char *name;
  int (*serve)(void *args);
  int absent_errno; /* when serve is NULL: what a driver without it answers */
  unsigned size;    /* newest argument struct */
};

#define SERVED(nr, fn, type) [nr] = {#nr, fn, 0, sizeof(type)}
#define ABSENT(nr, err) [nr] = {#nr, NULL, err, 0}

static const struct kfd_ioctl_def table[256] = {
    SERVED(KFD_NR_GET_VERSION, get_version, struct kfd_ioctl_get_version_args),
    SERVED(KFD_NR_CREATE_QUEUE, queue_create, struct vgpu_create_queue_args),
    SERVED(KFD_NR_DESTROY_QUEUE, vgpu_queue_destroy, struct kfd_ioctl_destroy_queue_args),
    SERVED(KFD_NR_SET_MEMORY_POLICY, set_memory_policy, struct kfd_ioctl_set_memory_policy_args),
    SERVED(KFD_NR_GET_CLOCK_COUNTERS, get_clock_counters, struct kfd_ioctl_get_clock_counters_args),
    SERVED(KFD_NR_GET_PROCESS_APERTURES, get_apertures_old, struct kfd_ioctl_get_process_apertures_args),
    SERVED(KFD_NR_UPDATE_QUEUE, vgpu_queue_update, struct kfd_ioctl_update_queue_args),
    SERVED(KFD_NR_CREATE_EVENT, vgpu_event_create, struct kfd_ioctl_create_event_args),
    SERVED(KFD_NR_DESTROY_EVENT, vgpu_event_destroy, struct kfd_ioctl_destroy_event_args),
    SERVED(KFD_NR_SET_EVENT, vgpu_event_set_ioctl, struct kfd_ioctl_set_event_args),
    SERVED(KFD_NR_RESET_EVENT, vgpu_event_reset, struct kfd_ioctl_reset_event_args),
    SERVED(KFD_NR_WAIT_EVENTS, vgpu_event_wait, struct kfd_ioctl_wait_events_args),
    ABSENT(KFD_NR_DBG_REGISTER_DEPRECATED, EINVAL),
    ABSENT(KFD_NR_DBG_UNREGISTER_DEPRECATED, EINVAL),
    ABSENT(KFD_NR_DBG_ADDRESS_WATCH_DEPRECATED, EINVAL),
    ABSENT(KFD_NR_DBG_WAVE_CONTROL_DEPRECATED, EINVAL),
    SERVED(KFD_NR_SET_SCRATCH_BACKING_VA, set_scratch_backing_va, struct kfd_ioctl_set_scratch_backing_va_args),
    SERVED(KFD_NR_GET_TILE_CONFIG, get_tile_config, struct kfd_ioctl_get_tile_config_args),
    SERVED(KFD_NR_SET_TRAP_HANDLER, set_trap_handler, struct kfd_ioctl_set_trap_handler_args),
    SERVED(KFD_NR_GET_PROCESS_APERTURES_NEW, get_apertures_new, struct kfd_ioctl_get_process_apertures_new_args),
    SERVED(KFD_NR_ACQUIRE_VM, acquire_vm, struct kfd_ioctl_acquire_vm_args),
    SERVED(KFD_NR_ALLOC_MEMORY_OF_GPU, mem_alloc, struct kfd_ioctl_alloc_memory_of_gpu_args),
    SERVED(KFD_NR_FREE_MEMORY_OF_GPU, mem_free, struct kfd_ioctl_free_memory_of_gpu_args),
    SERVED(KFD_NR_MAP_MEMORY_TO_GPU, mem_map, struct kfd_ioctl_map_memory_to_gpu_args),
    SERVED(KFD_NR_UNMAP_MEMORY_FROM_GPU, mem_unmap, struct kfd_ioctl_unmap_memory_from_gpu_args),
    SERVED(KFD_NR_SET_CU_MASK, set_cu_mask, struct kfd_ioctl_set_cu_mask_args),
    ABSENT(KFD_NR_GET_QUEUE_WAVE_STATE, EINVAL),
    ABSENT(KFD_NR_GET_DMABUF_INFO, EINVAL),
    ABSENT(KFD_NR_IMPORT_DMABUF, EINVAL),
    SERVED(KFD_NR_ALLOC_QUEUE_GWS, alloc_queue_gws, struct kfd_ioctl_alloc_queue_gws_args),
    ABSENT(KFD_NR_SMI_EVENTS, EINVAL),
    ABSENT(KFD_NR_SVM, EPERM), /* KFD built without SVM support */
    SERVED(KFD_NR_SET_XNACK_MODE, set_xnack_mode, struct kfd_ioctl_set_xnack_mode_args),
    ABSENT(KFD_NR_CRIU_OP, EINVAL),
    SERVED(KFD_NR_AVAILABLE_MEMORY, vgpu_mem_available, struct kfd_ioctl_get_available_memory_args),
    SERVED(KFD_NR_EXPORT_DMABUF, vgpu_mem_export_dmabuf, struct vgpu_export_dmabuf_args),
    SERVED(KFD_NR_RUNTIME_ENABLE, runtime_enable, struct vgpu_runtime_enable_args),
    ABSENT(KFD_NR_DBG_TRAP, EINVAL),
    ABSENT(KFD_NR_IPC_IMPORT_HANDLE, EINVAL),
    ABSENT(KFD_NR_IPC_EXPORT_HANDLE, EINVAL),
    ABSENT(KFD_NR_DBG_TRAP_LEGACY, EINVAL),
    ABSENT(KFD_NR_CROSS_MEMORY_COPY, EINVAL),
    ABSENT(KFD_NR_RLC_SPM, EINVAL),
    SERVED(KFD_NR_PC_SAMPLE, vgpu_pc_sample, struct vgpu_pc_sample_args),
};

/* Largest argument struct copied through the stack buffer. */
#define MAX_ARGS 256

int vgpu_kfd_ioctl(unsigned long req, void *arg) {
  unsigned nr = _IOC_NR(req), size = _IOC_SIZE(req);
  const struct kfd_ioctl_def *d = _IOC_TYPE(req) == KFD_IOCTL_BASE_CHAR ? &table[nr] : NULL;
  if (!d || !d->name) {
    char name[48];
    snprintf(name, sizeof name, "0x%02x (request 0x%lx)", nr, req);
    vgpu_unknown("KFD ioctl", name, "EINVAL");
    errno = EINVAL;
    return -1;
  }
  if (!d->serve) {
    vgpu_logf("{\"type\":\"ioctl_absent\",\"pid\":%d,\"name\":\"%s\",\"errno\":%d}", (int)getpid(), d->name + 7,
              d->absent_errno);
    errno = d->absent_errno;
    return -1;
  }
  if (size > MAX_ARGS || !arg) {
    errno = EINVAL;
    return -1;
  }
  unsigned char buf[MAX_ARGS] __attribute__((aligned(8)));
  memset(buf, 0, sizeof buf);
  memcpy(buf, arg, size);
  int rc = d->serve(buf);
  memcpy(arg, buf, size);
  if (rc < 0) {
    vgpu_logf("{\"type\":\"ioctl_failed\",\"pid\":%d,\"name\":\"%s\",\"errno\":%d}", (int)getpid(), d->name + 7, -rc);
    errno = -rc;
    return -1;
  }
  return rc;
}

/* A forked child is a new KFD process: no buffers, events or queues (the
 * threads behind the parent's queues do not exist in it). The thunk closes
 * and reopens /dev/kfd there, as it does on hardware. */
void vgpu_forget_process_state(void) {
  vgpu_memory_after_fork();
  vgpu_events_after_fork();
  vgpu_queues_after_fork();
  vgpu_pc_sample_after_fork();
  pthread_mutex_init(&runtime_lock, NULL);
  runtime_enabled = false;
}
