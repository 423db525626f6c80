/*
 * roctx.c: rocprof-go's ROCTx library (librocprofiler-sdk-roctx.so.1, and
 * the same code as the legacy libroctx64.so.4 when built with
 * ROCTX_LEGACY).
 *
 * It records nothing: profiling is the preload library's job, whose
 * interposers (internal/hsa/preload/roctx_*.c) come first in symbol lookup
 * under LD_PRELOAD. Here each call only keeps the state its return value
 * reports, so an application behaves the same with and without the
 * profiler.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef ROCTX_LEGACY
#include "roctracer/roctx.h"
#else
#include "rocprofiler-sdk-roctx/roctx.h"
#endif

static __thread int t_level;
static uint64_t g_range_id; /* atomic */

void roctxMarkA(const char *message) { (void)message; }

int roctxRangePushA(const char *message)
{
    (void)message;
    return t_level++;
}

int roctxRangePop(void)
{
    if (t_level == 0)
        return -1;
    return --t_level;
}

roctx_range_id_t roctxRangeStartA(const char *message)
{
    (void)message;
    return __atomic_add_fetch(&g_range_id, 1, __ATOMIC_RELAXED);
}

void roctxRangeStop(roctx_range_id_t id) { (void)id; }

int roctxProfilerPause(roctx_thread_id_t tid)
{
    (void)tid;
    return 0;
}

int roctxProfilerResume(roctx_thread_id_t tid)
{
    (void)tid;
    return 0;
}

int roctxNameOsThread(const char *name)
{
    (void)name;
    return 0;
}

int roctxNameHsaAgent(const char *name, const struct hsa_agent_s *agent)
{
    (void)name;
    (void)agent;
    return 0;
}

int roctxNameHipDevice(const char *name, int device_id)
{
    (void)name;
    (void)device_id;
    return 0;
}

int roctxNameHipStream(const char *name, const struct ihipStream_t *stream)
{
    (void)name;
    (void)stream;
    return 0;
}

int roctxGetThreadId(roctx_thread_id_t *tid)
{
    *tid = (roctx_thread_id_t)syscall(SYS_gettid);
    return 0;
}

#ifdef ROCTX_LEGACY
uint32_t roctx_version_major(void) { return ROCTX_LEGACY_VERSION_MAJOR; }
uint32_t roctx_version_minor(void) { return ROCTX_LEGACY_VERSION_MINOR; }
#endif
