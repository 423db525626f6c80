/*
 * shim.h: what the shim's C, C++ and Go parts share.
 *
 * The recorder (rpg_*) lives in the preload library. Its symbols are declared
 * weak here so that the package also links as an ordinary Go program (go
 * build, go test) and so that OnLoad can refuse to run, instead of crashing,
 * when the preload library is missing from the process.
 */
#ifndef RPG_SHIM_H
#define RPG_SHIM_H

#include <stddef.h>

#include "preload/rpg_env_gen.h" /* the environment contract (internal/cmd/genenv) */
#include <stdint.h>

#include "preload/rpg_recorder.h"

#pragma weak rpg_domains
#pragma weak rpg_now
#pragma weak rpg_correlation_next
#pragma weak rpg_correlation_current
#pragma weak rpg_correlation_set
#pragma weak rpg_api_begin
#pragma weak rpg_api_end
#pragma weak rpg_tid
#pragma weak rpg_pid
#pragma weak rpg_record_reserve
#pragma weak rpg_record_publish
#pragma weak rpg_record_api
#pragma weak rpg_record_marker
#pragma weak rpg_record_string
#pragma weak rpg_record_kernel_dispatch
#pragma weak rpg_record_memory_copy
#pragma weak rpg_record_memory_allocation
#pragma weak rpg_record_scratch_memory
#pragma weak rpg_record_agent_info
#pragma weak rpg_record_kernel_symbol
#pragma weak rpg_record_code_object
#pragma weak rpg_record_counter_sample
#pragma weak rpg_clock_uses_tsc
#pragma weak rpg_spool_path

#ifdef __cplusplus
extern "C" {
#endif
/* The hipStream_t a traced HIP call on this thread submits to (0: null
 * stream or no HIP call); from the preload library's HIP interposers
 * (preload/hip_stream.h). Weak: older preload libraries lack it. */
__attribute__((weak)) uint64_t rpg_hip_current_stream(void);
#ifdef __cplusplus
}
#endif
static inline uint64_t shim_hip_stream(void)
{
    return rpg_hip_current_stream ? rpg_hip_current_stream() : 0;
}

#ifdef __cplusplus
extern "C" {
#endif

#define SHIM_HIDDEN __attribute__((visibility("hidden")))

/* ---- "Go is ready in this pid" ------------------------------------------ */

/* The pid of this process image (refreshed by a pthread_atfork child
 * handler) and the pid in which Go finished its init. A C->Go call is allowed
 * only when they are equal: a fork child has no Go runtime threads. */
extern SHIM_HIDDEN volatile int32_t shim_pid;
extern SHIM_HIDDEN volatile int32_t shim_go_pid;
/* The pid whose dynamic loader ran the shim's constructors: only there does a
 * call into Go wait correctly for the runtime's initialisation. */
extern SHIM_HIDDEN int32_t shim_loaded_pid;
SHIM_HIDDEN void shim_mark_go_ready(void);
/* footprint.c: gives back the pages of the shim's read-only segments that
 * start-up mapped (once OnLoad is done). */
SHIM_HIDDEN void shim_drop_startup_pages(void);
static inline int shim_go_ok(void) { return shim_go_pid != 0 && shim_go_pid == shim_pid; }

/* ---- kernel symbols: kernel_object -> id and register counts ------------- */

typedef struct shim_kernel_info {
    uint64_t kernel_id;
    uint32_t vgpr_count;
    uint32_t agpr_count;
    uint32_t sgpr_count;
    uint32_t group_segment_size; /* static LDS from the descriptor */
} shim_kernel_info;

/* Lock-free for readers (the completion threads); writers are serialised. */
SHIM_HIDDEN void shim_kmap_put(uint64_t kernel_object, const shim_kernel_info *info);
SHIM_HIDDEN int shim_kmap_get(uint64_t kernel_object, shim_kernel_info *out);

/* One kernel symbol of a frozen executable, gathered in C for Go. */
typedef struct shim_symbol {
    uint64_t kernel_object;
    uint32_t agent_node;
    uint32_t kernarg_size;
    uint32_t group_segment_size;
    uint32_t private_segment_size;
    uint32_t vgpr_count;
    uint32_t agpr_count;
    uint32_t sgpr_count;
    uint32_t name_len;
    int32_t entry_offset; /* descriptor's kernel_code_entry_byte_offset; 0 unknown */
    char *name;           /* malloc'ed, freed by the caller */
} shim_symbol;

typedef struct shim_code_object {
    uint64_t handle; /* loaded code object handle */
    uint64_t load_base;
    uint64_t load_size;
    int64_t load_delta;
    uint32_t agent_node;
    uint32_t storage_type;
    uint32_t uri_len;
    char *uri; /* malloc'ed, freed by the caller */
} shim_code_object;

/* Fill up to cap entries; return the total number available (call again
 * with a larger array when it exceeds cap). */
SHIM_HIDDEN int shim_executable_symbols(uint64_t executable, shim_symbol *out, int cap);
SHIM_HIDDEN int shim_executable_code_objects(uint64_t executable, shim_code_object *out, int cap);

/* Kernel-descriptor decoding (descriptor.c), also used by Go tests. */
SHIM_HIDDEN void shim_decode_descriptor(const void *kd, uint32_t gfx_major, uint32_t gfx_minor,
                                        uint32_t *vgpr, uint32_t *agpr, uint32_t *sgpr);

/* Counters the tests and diagnostics read (through the Go exports). */
typedef struct shim_stats {
    uint64_t tables_wrapped[4];   /* functions wrapped per table: core, amd, image, finalizer */
    uint64_t tables_known[4];     /* functions the runtime's table has that we know */
    uint64_t queues_intercepted;
    uint64_t dispatches_recorded; /* completions recorded */
    uint64_t copies;
} shim_stats;
extern SHIM_HIDDEN shim_stats shim_counters;

#ifdef __cplusplus
}
#endif
#endif /* RPG_SHIM_H */
