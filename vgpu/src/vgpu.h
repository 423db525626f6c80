/* Internal interfaces of the virtual GPU: a plain-C LD_PRELOAD library that
 * plays the Linux kernel's side of the ROCm stack. The unmodified thunk of
 * any ROCm version (shared libhsakmt.so.1 or linked into ROCR) opens
 * /dev/kfd and /dev/dri/renderD<n>, reads the KFD topology in sysfs, issues
 * KFD ioctls and mmaps device memory; this library answers all of that and
 * runs a software command processor behind the queues it creates. Only the
 * libc/libdrm entry points in interpose.c and drm.c and the vgpu_test_*
 * hooks are exported (see vgpu.map). */
#ifndef VGPU_H
#define VGPU_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Symbols the library exports (all others are hidden; vgpu.map lists them). */
#define VGPU_EXPORT __attribute__((visibility("default")))

#define VGPU_MAX_GPUS 8
#define VGPU_MAX_NODES (VGPU_MAX_GPUS + 1)

/* Static description of one emulated architecture (topology.c). */
struct vgpu_arch {
  const char *name;       /* gfx90a */
  unsigned major, minor, stepping;
  uint16_t device_id;
  const char *marketing;  /* becomes HIP's device name */
  const char *asic;       /* KFD's node "name" file */
  unsigned family_id;     /* libdrm AMDGPU_FAMILY_* */
  unsigned xcc;           /* compute dies (XCCs) per agent */
  unsigned se;            /* shader engines, all XCCs together */
  unsigned sa_per_se;     /* shader arrays per SE */
  unsigned cu;            /* compute units, all XCCs together */
  unsigned cu_per_sa_max; /* KFD's cu_per_simd_array (harvesting rounds up) */
  unsigned waves_per_simd;
  unsigned wave_size;     /* default wave size */
  bool sramecc;
  uint32_t gb_addr_config;
  unsigned gfx_level;     /* 9, 10 or 11: selects PM4 and SDMA flavours */
  unsigned tcc_instances; /* L2 channels, for TCC counters */
  unsigned max_clock_mhz;
  uint64_t vram_bytes;
  const struct vgpu_perf_arch *perf; /* perf-counter register file layout */
};

const struct vgpu_arch *vgpu_arch_lookup(const char *name);
const struct vgpu_arch *vgpu_arch_at(size_t i); /* NULL past the last */
const char *vgpu_arch_names(void); /* "gfx90a (default), gfx908, ..." */
unsigned vgpu_simd_per_cu(const struct vgpu_arch *a);

/* Run configuration, read once from ROCPROF_VGPU_* variables (config.c). */
enum vgpu_clock_mode { VGPU_CLOCK_REAL = 0, VGPU_CLOCK_VIRTUAL = 1 };

struct vgpu_scale_rule {
  char pattern[256];
  uint64_t grid_x; /* only dispatches of this grid size (x, work-items); 0: any */
  double factor;
};

/* ROCPROF_VGPU_TOPOLOGY_FAULT: a KFD topology broken on purpose, for the
 * tests of what the profiler says when the GPU stack finds no GPU. */
enum vgpu_topology_fault {
  VGPU_FAULT_NONE = 0,
  VGPU_FAULT_NO_GPU,     /* "no-gpu": only the CPU node; hsa_init succeeds, without a GPU agent */
  VGPU_FAULT_UNREADABLE, /* "unreadable": the KFD topology is missing from sysfs; hsa_init fails */
  /* "host-cpu-caches": the CPU node lists no cache, as before the virtual GPU
   * listed them, so the thunks read /sys/devices/system/cpu/cpuN/cache (on a
   * host without it, ROCm 5.2's hsa_init fails: the field's case). */
  VGPU_FAULT_HOST_CPU_CACHES,
};

struct vgpu_config {
  const struct vgpu_arch *arch;
  unsigned gpus;
  enum vgpu_clock_mode clock;
  uint64_t kernel_base_ns;    /* modelled duration: base + per_wave * waves */
  uint64_t kernel_wave_ns;
  unsigned nscale;
  struct vgpu_scale_rule scale[16];
  bool log;                   /* ROCPROF_VGPU_LOG is open */
  bool verbose;               /* errors also to stderr */
  bool stats;                 /* ROCPROF_VGPU_STATS: the queue threads' CPU time at exit */
  enum vgpu_topology_fault topology_fault; /* ROCPROF_VGPU_TOPOLOGY_FAULT (tests) */
};

extern struct vgpu_config vgpu_cfg;
void vgpu_config_init(void);
int vgpu_config_failed(void);

/* Clocks. GPU ticks are 100 MHz (ns / 10); the system clock is ns. */
#define VGPU_GPU_TICK_NS 10
#define VGPU_GPU_CLOCK_KHZ (1000000 / VGPU_GPU_TICK_NS)
uint64_t vgpu_now_ns(void);            /* system clock: CLOCK_BOOTTIME or virtual */
uint64_t vgpu_gpu_ticks(void);         /* vgpu_now_ns() / 10 */
uint64_t vgpu_virtual_advance(uint64_t ns); /* virtual mode: returns time before advance */
void vgpu_sleep_until_ns(uint64_t ns); /* real mode only */

/* Logging: one JSON object per line (config.c). vgpu_unknown reports an
 * interface the emulation does not serve, once per name, on stderr and in
 * the log. */
void vgpu_log_write(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A log line (ROCPROF_VGPU_LOG). A macro so that, with no log open, its
 * arguments are not even evaluated: most pass getpid(), a system call
 * (~0.5 us in a VM), and the PM4 interpreter logs every register access,
 * ~50 of them per counted dispatch. */
#define vgpu_logf(...)                                                                                          \
  do {                                                                                                          \
    if (vgpu_cfg.log) vgpu_log_write(__VA_ARGS__);                                                              \
  } while (0)
void vgpu_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vgpu_unknown(const char *what, const char *name, const char *answer);

/* The real libc functions behind the interposed ones (interpose.c). */
int vgpu_real_open(const char *path, int flags, mode_t mode);
int vgpu_real_close(int fd);
void *vgpu_real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);

/* Device files (devices.c): the fds this process opened on /dev/kfd and
 * the render nodes, and what stat() says about those paths. */
enum vgpu_fd_kind { VGPU_FD_NONE = 0, VGPU_FD_KFD = 1, VGPU_FD_RENDER = 2 /* + gpu index */ };
int vgpu_device_open(const char *path, int flags, bool *handled);
int vgpu_fd_kind(int fd);                 /* VGPU_FD_* (RENDER + g for GPU g) */
void vgpu_fd_forget(int fd);
int vgpu_fd_register(int fd, int kind);
bool vgpu_device_stat(const char *path, struct stat *st);
bool vgpu_fd_stat(int fd, struct stat *st);
int vgpu_render_open(unsigned gpu, int flags); /* a new fd on GPU gpu's render node */

/* Sysfs (sysfs.c): KFD topology paths are served from a generated tree. */
const char *vgpu_sysfs_redirect(const char *path, char *buf, size_t n);

/* Topology values shared by sysfs, the ioctls and libdrm (topology.c). */
uint32_t vgpu_gpu_id(unsigned gpu);              /* KFD gpu_id of GPU g (0-based) */
int vgpu_gpu_index(uint32_t gpu_id);             /* -1 if unknown */
unsigned vgpu_render_minor(unsigned gpu);        /* 128 + g */
int vgpu_topology_write(int dirfd);              /* the sysfs tree, under dirfd */
uint64_t vgpu_topology_hash(void);               /* of everything the tree holds */

/* The KFD ioctl interface (kfd.c) and the DRM one (drm.c). */
int vgpu_kfd_ioctl(unsigned long req, void *arg);
int vgpu_drm_ioctl(unsigned gpu, unsigned long req, void *arg);

/* Memory: buffer objects (memory.c). GPU virtual addresses equal CPU
 * addresses for VRAM and GTT buffers (the library maps them there); user
 * memory registered at another GPU address is translated. */
#define VGPU_GPU_ANY UINT32_MAX
int vgpu_mem_alloc(void *args);
int vgpu_mem_free(void *args);
int vgpu_mem_map(void *args, bool map);
int vgpu_mem_available(void *args);
void *vgpu_mem_mmap(int kind, void *addr, size_t len, int prot, int flags, off_t off);
void *vgpu_host(uint64_t gpu_va);           /* CPU address the GPU reaches at gpu_va */
bool vgpu_mem_known(uint64_t gpu_va, uint64_t len, bool device_only);
bool vgpu_mem_range(uint64_t gpu_va, uint64_t *base, uint64_t *size); /* the buffer holding gpu_va */
void *vgpu_events_page(void); /* the event page when the thunk brings none */
void *vgpu_mem_by_handle(uint64_t handle, uint64_t *size);
uint64_t vgpu_special_mmap_offset(int type, unsigned gpu); /* KFD_MMAP_TYPE_* offsets */
/* DMA-buf export (KFD) and the GEM objects imported from it on a render
 * node (libdrm, drm.c): handles, GPU mappings (GEM_VA), mmap offsets. */
int vgpu_mem_export_dmabuf(void *args);
int vgpu_mem_import_dmabuf(unsigned gpu, int fd, uint32_t *gem, uint64_t *size);
int vgpu_mem_gem_close(unsigned gpu, uint32_t gem);
int vgpu_mem_gem_va(unsigned gpu, uint32_t gem, uint64_t offset, uint64_t size, uint64_t va, bool map);
/* A buffer's UMD metadata (libdrm's struct amdgpu_bo_metadata, as bytes):
 * set stores *len bytes; get copies what was set and sets *len (0: none). */
#define VGPU_BO_METADATA_MAX 280
int vgpu_mem_gem_metadata(unsigned gpu, uint32_t gem, void *md, size_t *len, bool set);
int vgpu_mem_gem_mmap_offset(unsigned gpu, uint32_t gem, uint64_t *off);

/* Events (events.c). */
int vgpu_event_create(void *args);
int vgpu_event_destroy(void *args);
int vgpu_event_set_ioctl(void *args);
int vgpu_event_reset(void *args);
int vgpu_event_wait(void *args);
void vgpu_event_signal_id(uint32_t event_id);

/* Queues and the command processor (queues.c). */
int vgpu_queue_create(void *args, size_t size);
int vgpu_queue_destroy(void *args);
int vgpu_queue_update(void *args);
bool vgpu_queue_exists(uint32_t queue_id);
unsigned vgpu_queue_count(void); /* live queues of this process */
void vgpu_signal_complete(uint64_t signal_handle, bool profiling, uint64_t start_ticks,
                          uint64_t end_ticks);

/* Process life: a forked child starts with no KFD state, like a new KFD
 * process (it must reopen /dev/kfd). */
void vgpu_forget_process_state(void);
void vgpu_memory_after_fork(void);
void vgpu_events_after_fork(void);
void vgpu_queues_after_fork(void);

/* PC sampling (pcsample.c): the control ioctl, the trap-memory area the
 * runtime installs with its trap handler, and the samples of a dispatch
 * while a session is started (written as ROCR's second-level trap handler
 * writes them). */
int vgpu_pc_sample(void *args);
void vgpu_pc_sample_after_fork(void);
void vgpu_pcs_set_tma(unsigned gpu, uint64_t tma_addr);
struct vgpu_dispatch_info;
bool vgpu_pcs_active(unsigned gpu);
/* Writes the dispatch's samples; in real mode it returns once the last
 * sampling instant (at most end_ns) has passed. */
void vgpu_pcs_dispatch(unsigned gpu, uint32_t queue_id, uint64_t ring_packets, uint64_t index,
                       const struct vgpu_dispatch_info *d, uint64_t start_ns, uint64_t end_ns);
uint64_t vgpu_mem_doorbell_va(unsigned gpu); /* the doorbell page's GPU address, 0 if unknown */
/* The command processor's view of GPU gpu's doorbell page (1024 x 64 bits,
 * slot = queue id), NULL if it cannot be mapped. */
volatile uint64_t *vgpu_mem_doorbells(unsigned gpu);

/* Kernels, from code objects in memory (kernels.c): the name, and for the
 * runtimes' blit kernels the explicit arguments (offset, size) in order. */
#define VGPU_KERNEL_MAX_ARGS 16
struct vgpu_kernel {
  const char *name;
  /* The machine code (PC sampling): entry address, the function symbol's
   * size (0 if the code object has none), and the byte offsets of its
   * first instructions from the entry, in order (gfx9 encodings). */
  uint64_t entry, code_size;
  uint32_t *insn;
  unsigned ninsn;
  bool has_args;
  unsigned nargs;
  struct {
    uint32_t offset, size;
  } args[VGPU_KERNEL_MAX_ARGS];
};
const struct vgpu_kernel *vgpu_kernel_info(uint64_t kernel_object);
const char *vgpu_kernel_name(uint64_t kernel_object);
void vgpu_kernel_names_forget(uintptr_t base, uint64_t size);

/* One kernel dispatch as the models see it. */
struct vgpu_dispatch_info {
  uint64_t kernel_object;
  const char *name;
  uint32_t grid[3], wg[3];
  uint32_t wave_size;
  uint64_t workgroups, waves, workitems;
  uint32_t vgprs, sgprs, lds, scratch, kernarg_size;
  uint64_t duration_ns;
};
void vgpu_perf_on_dispatch(unsigned gpu, const struct vgpu_dispatch_info *d);
int vgpu_pm4_execute(unsigned gpu, uint64_t queue_id, const uint32_t *ib, uint32_t ndw, int depth);

/* Kernel emulation (ROCR and ROCclr blit kernels). Returns a short tag of
 * what was emulated, or NULL. */
const char *vgpu_blit_emulate(uint64_t kernel_object, const struct vgpu_kernel *k, void *kernarg,
                              const struct vgpu_dispatch_info *d);
const char *vgpu_rocclr_blit(const struct vgpu_kernel *k, void *kernarg, const struct vgpu_dispatch_info *d);
#endif
