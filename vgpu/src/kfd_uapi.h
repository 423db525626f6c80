/* The parts of the KFD user API (linux/kfd_ioctl.h) newer than the
 * kernel headers the library is built with, and the kernel-internal mmap
 * offset encoding. Values are the kernel's (amdkfd, kfd_ioctl.h 1.17 and
 * kfd_priv.h); the system header supplies everything up to its version.
 * Structs that grew are redeclared whole, under a vgpu_ name, because an
 * ioctl is matched by number and serves the size the caller passed. */
#ifndef VGPU_KFD_UAPI_H
#define VGPU_KFD_UAPI_H
#include <linux/kfd_ioctl.h>

/* The interface version this emulation answers: 1.14 has event ages (a
 * waiter cannot miss a signal between its checks), 1.12 DMA-buf export and
 * 1.15 mappings of imported buffers in the compute VM through the render
 * node (GEM_VA), which ROCR requires for its virtual memory API. 1.16 adds
 * the contiguous-VRAM allocation flag (accepted: every emulated buffer is
 * one piece) and is the version from which the thunks of ROCR 6.4+ issue
 * the PC-sampling ioctl. 1.17 (SDMA queues by engine id) is not served. */
#define VGPU_KFD_MAJOR 1
#define VGPU_KFD_MINOR 16

/* kfd_priv.h: mmap offsets on /dev/kfd. */
#define KFD_MMAP_TYPE_SHIFT_V 62
#define KFD_MMAP_TYPE_DOORBELL_V 3
#define KFD_MMAP_TYPE_EVENTS_V 2
#define KFD_MMAP_TYPE_RESERVED_MEM_V 1
#define KFD_MMAP_TYPE_MMIO_V 0
#define KFD_MMAP_GPU_ID_SHIFT_V 46

/* Ioctl numbers (the low byte of the request) this emulation knows. */
enum {
  KFD_NR_GET_VERSION = 0x01,
  KFD_NR_CREATE_QUEUE = 0x02,
  KFD_NR_DESTROY_QUEUE = 0x03,
  KFD_NR_SET_MEMORY_POLICY = 0x04,
  KFD_NR_GET_CLOCK_COUNTERS = 0x05,
  KFD_NR_GET_PROCESS_APERTURES = 0x06,
  KFD_NR_UPDATE_QUEUE = 0x07,
  KFD_NR_CREATE_EVENT = 0x08,
  KFD_NR_DESTROY_EVENT = 0x09,
  KFD_NR_SET_EVENT = 0x0a,
  KFD_NR_RESET_EVENT = 0x0b,
  KFD_NR_WAIT_EVENTS = 0x0c,
  KFD_NR_DBG_REGISTER_DEPRECATED = 0x0d,
  KFD_NR_DBG_UNREGISTER_DEPRECATED = 0x0e,
  KFD_NR_DBG_ADDRESS_WATCH_DEPRECATED = 0x0f,
  KFD_NR_DBG_WAVE_CONTROL_DEPRECATED = 0x10,
  KFD_NR_SET_SCRATCH_BACKING_VA = 0x11,
  KFD_NR_GET_TILE_CONFIG = 0x12,
  KFD_NR_SET_TRAP_HANDLER = 0x13,
  KFD_NR_GET_PROCESS_APERTURES_NEW = 0x14,
  KFD_NR_ACQUIRE_VM = 0x15,
  KFD_NR_ALLOC_MEMORY_OF_GPU = 0x16,
  KFD_NR_FREE_MEMORY_OF_GPU = 0x17,
  KFD_NR_MAP_MEMORY_TO_GPU = 0x18,
  KFD_NR_UNMAP_MEMORY_FROM_GPU = 0x19,
  KFD_NR_SET_CU_MASK = 0x1a,
  KFD_NR_GET_QUEUE_WAVE_STATE = 0x1b,
  KFD_NR_GET_DMABUF_INFO = 0x1c,
  KFD_NR_IMPORT_DMABUF = 0x1d,
  KFD_NR_ALLOC_QUEUE_GWS = 0x1e,
  KFD_NR_SMI_EVENTS = 0x1f,
  KFD_NR_SVM = 0x20,
  KFD_NR_SET_XNACK_MODE = 0x21,
  KFD_NR_CRIU_OP = 0x22,
  KFD_NR_AVAILABLE_MEMORY = 0x23,
  KFD_NR_EXPORT_DMABUF = 0x24,
  KFD_NR_RUNTIME_ENABLE = 0x25,
  KFD_NR_DBG_TRAP = 0x26,
  /* ROCm's out-of-tree driver; ROCm 5.2's thunk also probes 0x82 (its old
   * number for the debugger's trap ioctl). */
  KFD_NR_IPC_IMPORT_HANDLE = 0x80,
  KFD_NR_IPC_EXPORT_HANDLE = 0x81,
  KFD_NR_DBG_TRAP_LEGACY = 0x82,
  KFD_NR_CROSS_MEMORY_COPY = 0x83,
  KFD_NR_RLC_SPM = 0x84,
  KFD_NR_PC_SAMPLE = 0x85,
};

/* CREATE_QUEUE as of 1.17 (ROCm 5.2's thunk passes the first 88 bytes). */
struct vgpu_create_queue_args {
  __u64 ring_base_address;
  __u64 write_pointer_address;
  __u64 read_pointer_address;
  __u64 doorbell_offset;
  __u32 ring_size;
  __u32 gpu_id;
  __u32 queue_type;
  __u32 queue_percentage;
  __u32 queue_priority;
  __u32 queue_id;
  __u64 eop_buffer_address;
  __u64 eop_buffer_size;
  __u64 ctx_save_restore_address;
  __u32 ctx_save_restore_size;
  __u32 ctl_stack_size;
  __u32 sdma_engine_id; /* 1.17 */
  __u32 pad;
};
#define KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID_V 0x4

/* EXPORT_DMABUF (1.12). */
struct vgpu_export_dmabuf_args {
  __u64 handle;    /* to KFD */
  __u32 flags;     /* to KFD: O_CLOEXEC */
  __u32 dmabuf_fd; /* from KFD */
};

/* Event data as of 1.14: signal events carry an age in and out. */
struct vgpu_signal_event_data {
  __u64 last_event_age;
};
struct vgpu_event_data {
  union {
    struct kfd_hsa_memory_exception_data memory_exception_data;
    struct kfd_hsa_hw_exception_data hw_exception_data;
    struct vgpu_signal_event_data signal_event_data;
  };
  __u64 kfd_event_data_ext;
  __u32 event_id;
  __u32 pad;
};
_Static_assert(sizeof(struct vgpu_event_data) == sizeof(struct kfd_event_data), "event data size");

/* RUNTIME_ENABLE (1.13): the runtime announces itself (and whether the
 * trap temporaries are to be set up); the answer carries capability bits. */
struct vgpu_runtime_enable_args {
  __u64 r_debug;
  __u32 mode_mask;
  __u32 capabilities_mask;
};
#define VGPU_RUNTIME_ENABLE_MODE_ENABLE 1u
#define VGPU_RUNTIME_ENABLE_MODE_TTMP_SAVE 2u

/* PC_SAMPLE (ROCm's driver; the thunk's kfd_ioctl.h 1.17). One argument
 * struct for every operation; sample_info_ptr points at an array of
 * vgpu_pc_sample_info (one element for CREATE). */
struct vgpu_pc_sample_info {
  __u64 interval;     /* in: the requested interval; out (query): 0 or the current one */
  __u64 interval_min; /* out */
  __u64 interval_max; /* out */
  __u64 flags;        /* out: VGPU_PCS_FLAG_* */
  __u32 method;       /* VGPU_PCS_METHOD_* */
  __u32 type;         /* VGPU_PCS_TYPE_* (the interval's unit) */
};
struct vgpu_pc_sample_args {
  __u64 sample_info_ptr;
  __u32 num_sample_info; /* in: array length; out (query): entries written or needed */
  __u32 op;              /* VGPU_PCS_OP_* */
  __u32 gpu_id;
  __u32 trace_id;        /* out of CREATE, in for the others */
  __u32 flags;           /* query: VGPU_PCS_QUERY_FULL */
  __u32 reserved;
};
_Static_assert(sizeof(struct vgpu_pc_sample_info) == 40, "kfd_pc_sample_info is 40 bytes");
_Static_assert(sizeof(struct vgpu_pc_sample_args) == 32, "kfd_ioctl_pc_sample_args is 32 bytes");
enum {
  VGPU_PCS_OP_QUERY_CAPABILITIES = 0,
  VGPU_PCS_OP_CREATE = 1,
  VGPU_PCS_OP_DESTROY = 2,
  VGPU_PCS_OP_START = 3,
  VGPU_PCS_OP_STOP = 4,
};
enum { VGPU_PCS_METHOD_HOSTTRAP = 1, VGPU_PCS_METHOD_STOCHASTIC = 2 };
enum { VGPU_PCS_TYPE_TIME_US = 0, VGPU_PCS_TYPE_CLOCK_CYCLES = 1, VGPU_PCS_TYPE_INSTRUCTIONS = 2 };
#define VGPU_PCS_FLAG_POWER_OF_2 1ull
#define VGPU_PCS_QUERY_FULL 1u
#endif
