/*
 * roctx.h: rocprof-go's ROCTx API: markers, ranges and profiler control
 * calls an application uses to annotate its own timeline.
 *
 * Source- and binary-compatible with rocprofiler-sdk-roctx: an application
 * built against this header links either librocprofiler-sdk-roctx.so from
 * rocprof-go (build/lib) or AMD's. On its own the library only keeps range
 * nesting and ids; under `rocprof-go --marker-trace` the profiler's preload
 * library intercepts every call and records it.
 */
#ifndef ROCPROF_GO_ROCTX_H
#define ROCPROF_GO_ROCTX_H

#include <stddef.h>
#include <stdint.h>

#include "defines.h"
#include "types.h"
#include "version.h"

/* Opaque types of the runtimes whose objects can be named. */
struct hsa_agent_s;
struct ihipStream_t;

ROCTX_EXTERN_C_INIT

/* An instantaneous event carrying `message`. */
void roctxMarkA(const char *message) ROCTX_API ROCTX_NONNULL(1);

/* Opens a range nested in the calling thread's open ranges; returns its
 * nesting level (0 for the outermost). */
int roctxRangePushA(const char *message) ROCTX_API ROCTX_NONNULL(1);

/* Closes the calling thread's innermost open range; returns the level it was
 * opened at, or a negative value when no range was open. */
int roctxRangePop(void) ROCTX_API;

/* Opens a range that any thread may close with roctxRangeStop; returns its
 * id (never 0). */
roctx_range_id_t roctxRangeStartA(const char *message) ROCTX_API ROCTX_NONNULL(1);

/* Closes the range roctxRangeStartA returned `id` for. */
void roctxRangeStop(roctx_range_id_t id) ROCTX_API;

/* Asks the profiler to stop (Pause) or restart (Resume) collecting; tid 0
 * means the whole process. Return 0 on success. */
int roctxProfilerPause(roctx_thread_id_t tid) ROCTX_API;
int roctxProfilerResume(roctx_thread_id_t tid) ROCTX_API;

/* Name the calling OS thread, an HSA agent, a HIP device or a HIP stream in
 * the profiler's output. They do not rename anything themselves. Return 0
 * on success. */
int roctxNameOsThread(const char *name) ROCTX_API ROCTX_NONNULL(1);
int roctxNameHsaAgent(const char *name, const struct hsa_agent_s *agent) ROCTX_API
    ROCTX_NONNULL(1, 2);
int roctxNameHipDevice(const char *name, int device_id) ROCTX_API ROCTX_NONNULL(1);
int roctxNameHipStream(const char *name, const struct ihipStream_t *stream) ROCTX_API
    ROCTX_NONNULL(1);

/* Stores the calling thread's id as the profiler sees it (the OS tid). */
int roctxGetThreadId(roctx_thread_id_t *tid) ROCTX_API ROCTX_NONNULL(1);

ROCTX_EXTERN_C_FINI

#ifndef roctxMark
#define roctxMark(message) roctxMarkA(message)
#endif
#ifndef roctxRangePush
#define roctxRangePush(message) roctxRangePushA(message)
#endif
#ifndef roctxRangeStart
#define roctxRangeStart(message) roctxRangeStartA(message)
#endif

#endif /* ROCPROF_GO_ROCTX_H */
