/*
 * rpg_recorder.h: the recorder API exported by librocprof-go-preload.so.
 *
 * The preload library is always loaded first (LD_PRELOAD), so the cgo shim
 * (loaded later by the HSA runtime) and the HIP/ROCTx interposers call these
 * functions instead of owning any spool state themselves. Every function is
 * async-signal-tolerant and lock-free on its hot path; none of them may be
 * called before the library's constructor has run (the dynamic loader
 * guarantees that for anything loaded after it).
 *
 * A wrapper costs one branch when its domain is off:
 *
 *     if (!(rpg_domains & RPG_DOMAIN_HSA_CORE)) return real(args);
 *     uint64_t corr = rpg_correlation_next();
 *     uint64_t t0 = rpg_now();
 *     r = real(args);
 *     rpg_record_api(RPG_KIND_HSA_API, RPG_API_HSA_CORE, FN_ID, corr, t0, rpg_now(), NULL, 0);
 *
 * rpg_domains is zero when ROCPROF_GO_SPOOL_DIR is unset, whatever the
 * ROCPROF_*_TRACE variables say: a process outside a profiling run records
 * nothing.
 */
#ifndef RPG_RECORDER_H
#define RPG_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "../../tracing/spool.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RPG_API __attribute__((visibility("default")))

/* Domain bits of rpg_domains (RPG_DOMAIN_*), generated from the domain table
 * (internal/domain). */
#include "rpg_domains_gen.h"

/* Enabled domains, fixed by the constructor. Read it directly. */
extern RPG_API uint32_t rpg_domains;

/* CLOCK_BOOTTIME in nanoseconds; from the invariant TSC once calibrated. */
RPG_API uint64_t rpg_now(void);

/* A new process-unique correlation id: 1, 2, 3, ... (a fork child continues
 * its parent's sequence, so ids stay unique in each process). */
RPG_API uint64_t rpg_correlation_next(void);
/* The calling thread's current correlation id (0 if none): a HIP wrapper
 * sets it around the real call so that dispatches, copies and HSA calls made
 * underneath on the same thread can carry it. Set returns the previous value
 * for the wrapper to restore. */
RPG_API uint64_t rpg_correlation_current(void);
RPG_API uint64_t rpg_correlation_set(uint64_t id);

/* One traced API call from another library (the HSA shim's table wrappers),
 * in two calls instead of five: begin takes the thread's current correlation
 * id (the enclosing HIP call's, 0 if none) as parent, a new id and the start
 * time; end takes the end time and writes the record, with the parent as the
 * argument blob's first u64 when it is not 0. Returns 0, or -1 if dropped.
 *
 *     rpg_api_span s;
 *     rpg_api_begin(&s);
 *     r = real(args);
 *     rpg_api_end(&s, RPG_KIND_HSA_API, RPG_API_HSA_CORE, FN_ID);
 */
typedef struct rpg_api_span {
    uint64_t parent;
    uint64_t correlation_id;
    uint64_t start; /* opaque start stamp: rpg_api_end's business */
} rpg_api_span;
RPG_API void rpg_api_begin(rpg_api_span *s);
RPG_API int rpg_api_end(const rpg_api_span *s, uint16_t kind, uint32_t domain, uint32_t function);

/* Cached OS ids (refreshed in fork children). */
RPG_API uint32_t rpg_tid(void);
RPG_API int32_t rpg_pid(void);

/* Generic two-step write: reserve a record of `size` bytes (header included,
 * rounded up to 8), fill it after the header, then publish. Returns NULL when
 * nothing can be recorded (no spool, disk full, size > RPG_MAX_RECORD); the
 * miss is counted in the spool header. Publish exactly once per reservation,
 * on the same thread, without recording anything in between. */
RPG_API void *rpg_record_reserve(uint16_t kind, uint32_t size);
RPG_API void rpg_record_publish(void *rec);

/* Per-kind helpers. They return 0, or -1 when the record was dropped. */
RPG_API int rpg_record_api(uint16_t kind, uint32_t domain, uint32_t function,
                           uint64_t correlation_id, uint64_t start_ns,
                           uint64_t end_ns, const void *args,
                           uint32_t args_size);
RPG_API int rpg_record_marker(uint32_t domain, uint32_t function,
                              uint64_t correlation_id, uint64_t start_ns,
                              uint64_t end_ns, uint64_t range_id,
                              const char *msg, size_t msg_len);
RPG_API int rpg_record_string(uint32_t table, uint64_t id, const char *s,
                              size_t len);
/* These take a filled record; its header and tid are overwritten (tid with
 * the calling thread's unless the caller set a non-zero one). */
RPG_API int rpg_record_kernel_dispatch(const rpg_kernel_dispatch_rec *r);
RPG_API int rpg_record_memory_copy(const rpg_memory_copy_rec *r);
RPG_API int rpg_record_memory_allocation(const rpg_memory_allocation_rec *r);
RPG_API int rpg_record_scratch_memory(const rpg_scratch_memory_rec *r);
RPG_API int rpg_record_agent_info(const rpg_agent_info_rec *r);
/* Records with a string tail. */
RPG_API int rpg_record_kernel_symbol(const rpg_kernel_symbol_rec *r,
                                     const char *name, size_t name_len);
RPG_API int rpg_record_code_object(const rpg_code_object_rec *r,
                                   const char *uri, size_t uri_len);
RPG_API int rpg_record_counter_sample(const rpg_counter_sample_rec *r,
                                      const rpg_counter_dim *dims,
                                      const char *name, size_t name_len);

/* Non-zero once rpg_now() runs from the TSC (for tests and diagnostics). */
RPG_API int rpg_clock_uses_tsc(void);

/* Path of this process's spool file, or NULL when none was created yet. */
RPG_API const char *rpg_spool_path(void);

#ifdef __cplusplus
}
#endif
#endif /* RPG_RECORDER_H */
