/*
 * defines.h: linkage and attribute macros of rocprof-go's ROCTx header.
 * Part of rocprof-go's own ROCTx API, source-compatible with
 * rocprofiler-sdk-roctx.
 */
#ifndef ROCPROF_GO_ROCTX_DEFINES_H
#define ROCPROF_GO_ROCTX_DEFINES_H

#ifdef __cplusplus
#define ROCTX_EXTERN_C_INIT extern "C" {
#define ROCTX_EXTERN_C_FINI }
#else
#define ROCTX_EXTERN_C_INIT
#define ROCTX_EXTERN_C_FINI
#endif

#if defined(__GNUC__) || defined(__clang__)
#define ROCTX_API __attribute__((visibility("default")))
#define ROCTX_NONNULL(...) __attribute__((nonnull(__VA_ARGS__)))
#else
#define ROCTX_API
#define ROCTX_NONNULL(...)
#endif

#endif /* ROCPROF_GO_ROCTX_DEFINES_H */
