/*
 * roctracer/roctx.h: the legacy (roctracer) ROCTx include path. Applications
 * written for roctracer's libroctx64 build against it unchanged and link
 * rocprof-go's libroctx64.so (same API, plus the version queries below).
 */
#ifndef ROCPROF_GO_LEGACY_ROCTX_H
#define ROCPROF_GO_LEGACY_ROCTX_H

#include "../rocprofiler-sdk-roctx/roctx.h"

#define ROCTX_LEGACY_VERSION_MAJOR 4
#define ROCTX_LEGACY_VERSION_MINOR 1

ROCTX_EXTERN_C_INIT
uint32_t roctx_version_major(void) ROCTX_API;
uint32_t roctx_version_minor(void) ROCTX_API;
ROCTX_EXTERN_C_FINI

#endif /* ROCPROF_GO_LEGACY_ROCTX_H */
