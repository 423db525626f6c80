/*
 * version.h: the ROCTx API version this header provides (the version of the
 * rocprofiler-sdk-roctx API it is compatible with).
 */
#ifndef ROCPROF_GO_ROCTX_VERSION_H
#define ROCPROF_GO_ROCTX_VERSION_H

#define ROCTX_VERSION_MAJOR 1
#define ROCTX_VERSION_MINOR 0
#define ROCTX_VERSION_PATCH 0
#define ROCTX_VERSION                                                                          \
    ((ROCTX_VERSION_MAJOR * 10000) + (ROCTX_VERSION_MINOR * 100) + ROCTX_VERSION_PATCH)

#endif /* ROCPROF_GO_ROCTX_VERSION_H */
