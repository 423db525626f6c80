/* Internal interfaces of the virtual GPU (a libhsakmt.so.1 replacement).
 * Everything here is private to the library; only hsaKmt* symbols and the
 * vgpu_test_* hooks are exported (see libhsakmt.map). */
#ifndef VGPU_H
#define VGPU_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <hsakmt.h>

#define VGPU_MAX_GPUS 8
#define VGPU_MAX_NODES (VGPU_MAX_GPUS + 1)

/* Static description of one emulated architecture. */
struct vgpu_arch {
  const char *name;       /* gfx90a */
  unsigned major, minor, stepping;
  uint16_t device_id;
  const char *marketing;  /* becomes HIP's device name */
  unsigned se;            /* shader engines */
  unsigned sa_per_se;     /* shader arrays per SE */
  unsigned cu;            /* compute units */
  unsigned waves_per_simd;
  unsigned wave_size;     /* default wave size */
  bool sramecc;
  uint32_t gb_addr_config;
  unsigned gfx_level;     /* 9 or 10: selects PM4 and SDMA flavours */
  unsigned tcc_instances; /* L2 channels, for TCC counters */
  unsigned max_clock_mhz;
  uint64_t vram_bytes;
  const struct vgpu_perf_arch *perf; /* perf-counter register file layout */
};

const struct vgpu_arch *vgpu_arch_lookup(const char *name);

/* Run configuration, read once from ROCPROF_VGPU_* variables. */
enum vgpu_clock_mode { VGPU_CLOCK_REAL = 0, VGPU_CLOCK_VIRTUAL = 1 };

struct vgpu_scale_rule {
  char pattern[256];
  double factor;
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
};

extern struct vgpu_config vgpu_cfg;
void vgpu_config_init(void);

/* Clocks. GPU ticks are 100 MHz (ns / 10); the system clock is ns. */
#define VGPU_GPU_TICK_NS 10
uint64_t vgpu_now_ns(void);            /* system clock: CLOCK_BOOTTIME or virtual */
uint64_t vgpu_gpu_ticks(void);         /* vgpu_now_ns() / 10 */
uint64_t vgpu_virtual_advance(uint64_t ns); /* virtual mode: returns time before advance */
void vgpu_sleep_until_ns(uint64_t ns); /* real mode only */

/* Memory range table. */
struct vgpu_range {
  uintptr_t base;
  uint64_t size;
  bool allocated;         /* by us (vs registered user memory) */
  bool mapped;
  uint32_t node;
  HsaMemFlags flags;
  void *user_data;
  uint32_t nodes[VGPU_MAX_NODES];
  uint32_t nnodes;
};
bool vgpu_mem_lookup(uintptr_t addr, struct vgpu_range *out);
bool vgpu_mem_is_ours(uintptr_t addr, uint64_t len);

/* Events. */
void vgpu_event_signal_id(uint32_t event_id);

/* Signals (amd_signal_t) completion with timestamps and interrupt. */
void vgpu_signal_complete(uint64_t signal_handle, bool profiling, uint64_t start_ticks,
                          uint64_t end_ticks);

/* Logging: one JSON object per line. */
void vgpu_logf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vgpu_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Topology helpers. */
unsigned vgpu_node_count(void);
bool vgpu_node_is_gpu(uint32_t node);

/* Kernel names from code objects in memory. */
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
void vgpu_perf_on_dispatch(uint32_t node, const struct vgpu_dispatch_info *d);
int vgpu_pm4_execute(uint32_t node, uint64_t queue_id, const uint32_t *ib, uint32_t ndw, int depth);

/* Kernel emulation (ROCR and ROCclr blit kernels). Returns a short tag of
 * what was emulated, or NULL. */
const char *vgpu_blit_emulate(uint64_t kernel_object, const char *name, void *kernarg,
                              const struct vgpu_dispatch_info *d);



/* ROCclr (HIP) blit kernels, recognised by name. */
const char *vgpu_rocclr_blit(const char *name, void *kernarg, const struct vgpu_dispatch_info *d);
int vgpu_config_failed(void);
#endif
