/*
 * hip_stream.h: the HIP stream a thread is submitting to, for the HSA shim.
 *
 * While a traced HIP call that takes a hipStream_t runs, the preload library
 * remembers that stream handle in thread-local storage, next to the thread's
 * current correlation id (rpg_correlation_current()). The shim's dispatch and
 * copy interceptors run on the same thread underneath that call and read it
 * to fill rpg_kernel_dispatch_rec.stream_id / rpg_memory_copy_rec.stream_id.
 *
 * The value is the raw hipStream_t (an ihipStream_t pointer): 0 is the null
 * (default) stream and is also what a thread outside any HIP call sees. The
 * output side numbers distinct handles in order of first appearance, as
 * rocprofv3 numbers streams. Calls without a stream argument (hipMemcpy,
 * hipMalloc, ...) run on the null stream, so 0 is right for them too.
 */
#ifndef RPG_HIP_STREAM_H
#define RPG_HIP_STREAM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"))) uint64_t rpg_hip_current_stream(void);

#ifdef __cplusplus
}
#endif
#endif /* RPG_HIP_STREAM_H */
