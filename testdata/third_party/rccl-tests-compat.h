/* Force-included (-include) when building the vendored rccl-tests
 * (testdata/third_party/rccl-tests, unmodified) against Debian's RCCL:
 * what those sources of 2024 assume that later headers changed. */
#include <string.h> /* common.h calls strcmp; newer HIP headers no longer include it */
#include <rccl/rccl.h>

/* RCCL 7 (NCCL 2.24 and later) renamed the FP8 types that common.h's
 * wordSize() names. */
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
#define ncclFp8E4M3 ncclFloat8e4m3
#define ncclFp8E5M2 ncclFloat8e5m2
#endif
