/*
 * hip_stream.h: the HIP stream a thread is submitting to, for the HSA shim.
 *
 * While a traced HIP call that takes a hipStream_t runs, the preload library
 * remembers that stream handle in thread-local storage, next to the thread's
 * current correlation id (rpg_correlation_current()). The shim's dispatch and
 * copy interceptors run on the same thread underneath that call and read it
 * to fill rpg_kernel_dispatch_rec.stream_id / rpg_memory_copy_rec.stream_id.
 *
 * The value is rocprofv3's stream id, not the handle: 0 for the null
 * (default) stream — also what a thread outside any HIP call, or in a call
 * without a stream argument (hipMemcpy, hipMalloc, ...), sees — and 1, 2, ...
 * for the other streams in order of first use (hip_stream.c).
 * rpg_hip_stream_id numbers any hipStream_t the same way (for the ROCTx
 * stream-naming call and for tools).
 */
#ifndef RPG_HIP_STREAM_H
#define RPG_HIP_STREAM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"))) uint64_t rpg_hip_current_stream(void);
__attribute__((visibility("default"))) uint64_t rpg_hip_stream_id(uint64_t handle);

#ifdef __cplusplus
}
#endif
#endif /* RPG_HIP_STREAM_H */
