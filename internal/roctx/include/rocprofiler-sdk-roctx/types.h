/*
 * types.h: ROCTx handle types (rocprof-go's ROCTx, source-compatible with
 * rocprofiler-sdk-roctx).
 */
#ifndef ROCPROF_GO_ROCTX_TYPES_H
#define ROCPROF_GO_ROCTX_TYPES_H

#include <stdint.h>

/* Names a roctxRangeStartA..roctxRangeStop range, across threads. */
typedef uint64_t roctx_range_id_t;

/* An OS thread id as roctxGetThreadId reports it. */
typedef uint64_t roctx_thread_id_t;

#endif /* ROCPROF_GO_ROCTX_TYPES_H */
