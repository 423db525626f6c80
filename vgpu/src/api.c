/* Thunk entry points that are not about memory, events, topology or
 * queues: open/close, version, and the exports ROCR 5.2.3 never calls. */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>

#include "vgpu.h"

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static int open_count;
static bool configured;

HSAKMT_STATUS HSAKMTAPI hsaKmtOpenKFD(void) {
  pthread_mutex_lock(&open_lock);
  if (!configured) {
    vgpu_config_init();
    configured = true;
    vgpu_logf("{\"type\":\"open\",\"pid\":%d,\"arch\":\"%s\",\"gpus\":%u,\"clock\":\"%s\"}", (int)getpid(),
              vgpu_cfg.arch->name, vgpu_cfg.gpus, vgpu_cfg.clock == VGPU_CLOCK_VIRTUAL ? "virtual" : "real");
  }
  HSAKMT_STATUS st = HSAKMT_STATUS_SUCCESS;
  if (vgpu_config_failed()) st = HSAKMT_STATUS_ERROR;
  else open_count++;
  pthread_mutex_unlock(&open_lock);
  return st;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtCloseKFD(void) {
  pthread_mutex_lock(&open_lock);
  HSAKMT_STATUS st = open_count > 0 ? HSAKMT_STATUS_SUCCESS : HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED;
  if (open_count > 0) open_count--;
  pthread_mutex_unlock(&open_lock);
  return st;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtGetVersion(HsaVersionInfo *v) {
  if (!v) return HSAKMT_STATUS_INVALID_PARAMETER;
  v->KernelInterfaceMajorVersion = 1;
  v->KernelInterfaceMinorVersion = 8;
  return HSAKMT_STATUS_SUCCESS;
}

/* NOT_SUPPORTED sends ROCR down its legacy trap-handler path. */
HSAKMT_STATUS HSAKMTAPI hsaKmtRuntimeEnable(void *rDebug, bool setupTtmp) {
  (void)rDebug;
  (void)setupTtmp;
  return HSAKMT_STATUS_NOT_SUPPORTED;
}
HSAKMT_STATUS HSAKMTAPI hsaKmtRuntimeDisable(void) { return HSAKMT_STATUS_SUCCESS; }

HSAKMT_STATUS HSAKMTAPI hsaKmtGetXNACKMode(HSAint32 *enable) {
  if (enable) *enable = 0;
  return HSAKMT_STATUS_SUCCESS;
}
HSAKMT_STATUS HSAKMTAPI hsaKmtSetXNACKMode(HSAint32 enable) {
  (void)enable;
  return HSAKMT_STATUS_SUCCESS;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtSetTrapHandler(HSAuint32 node, void *base, HSAuint64 size, void *buf,
                                             HSAuint64 bufsize) {
  (void)node;
  (void)base;
  (void)size;
  (void)buf;
  (void)bufsize;
  return HSAKMT_STATUS_SUCCESS;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtSetMemoryPolicy(HSAuint32 node, HSAuint32 def, HSAuint32 alt, void *a,
                                              HSAuint64 s) {
  (void)node;
  (void)def;
  (void)alt;
  (void)a;
  (void)s;
  return HSAKMT_STATUS_SUCCESS;
}

#define UNSUPPORTED(sig) \
  HSAKMT_STATUS HSAKMTAPI sig { return HSAKMT_STATUS_NOT_SUPPORTED; }

UNSUPPORTED(hsaKmtSVMSetAttr(void *s, HSAuint64 n, unsigned int na, HSA_SVM_ATTRIBUTE *a))
UNSUPPORTED(hsaKmtSVMGetAttr(void *s, HSAuint64 n, unsigned int na, HSA_SVM_ATTRIBUTE *a))
UNSUPPORTED(hsaKmtRegisterGraphicsHandleToNodes(HSAuint64 h, HsaGraphicsResourceInfo *i, HSAuint64 n,
                                                HSAuint32 *a))
UNSUPPORTED(hsaKmtShareMemory(void *a, HSAuint64 s, HsaSharedMemoryHandle *h))
UNSUPPORTED(hsaKmtRegisterSharedHandle(const HsaSharedMemoryHandle *h, void **a, HSAuint64 *s))
UNSUPPORTED(hsaKmtRegisterSharedHandleToNodes(const HsaSharedMemoryHandle *h, void **a, HSAuint64 *s,
                                              HSAuint64 n, HSAuint32 *na))
UNSUPPORTED(hsaKmtDbgRegister(HSAuint32 n))
UNSUPPORTED(hsaKmtDbgUnregister(HSAuint32 n))
UNSUPPORTED(hsaKmtDbgWavefrontControl(HSAuint32 n, HSA_DBG_WAVEOP o, HSA_DBG_WAVEMODE m, HSAuint32 t,
                                      HsaDbgWaveMessage *w))
UNSUPPORTED(hsaKmtDbgAddressWatch(HSAuint32 n, HSAuint32 c, HSA_DBG_WATCH_MODE m[], void *a[],
                                  HSAuint64 mk[], HsaEvent *e[]))
UNSUPPORTED(hsaKmtGetKernelDebugTrapVersionInfo(HSAuint32 *maj, HSAuint32 *min))
UNSUPPORTED(hsaKmtGetQueueInfo(HSA_QUEUEID q, HsaQueueInfo *i))
UNSUPPORTED(hsaKmtMapGraphicHandle(HSAuint32 n, HSAuint64 d, HSAuint64 r, HSAuint64 o, HSAuint64 s,
                                   HSAuint64 *f))
UNSUPPORTED(hsaKmtUnmapGraphicHandle(HSAuint32 n, HSAuint64 f, HSAuint64 s))
UNSUPPORTED(hsaKmtPmcGetCounterProperties(HSAuint32 n, HsaCounterProperties **p))
UNSUPPORTED(hsaKmtPmcRegisterTrace(HSAuint32 n, HSAuint32 c, HsaCounter *cs, HsaPmcTraceRoot *r))
UNSUPPORTED(hsaKmtPmcUnregisterTrace(HSAuint32 n, HSATraceId t))
UNSUPPORTED(hsaKmtPmcAcquireTraceAccess(HSAuint32 n, HSATraceId t))
UNSUPPORTED(hsaKmtPmcReleaseTraceAccess(HSAuint32 n, HSATraceId t))
UNSUPPORTED(hsaKmtPmcStartTrace(HSATraceId t, void *b, HSAuint64 s))
UNSUPPORTED(hsaKmtPmcQueryTrace(HSATraceId t))
UNSUPPORTED(hsaKmtPmcStopTrace(HSATraceId t))
UNSUPPORTED(hsaKmtProcessVMRead(HSAuint32 p, HsaMemoryRange *l, HSAuint64 lc, HsaMemoryRange *r,
                                HSAuint64 rc, HSAuint64 *c))
UNSUPPORTED(hsaKmtProcessVMWrite(HSAuint32 p, HsaMemoryRange *l, HSAuint64 lc, HsaMemoryRange *r,
                                 HSAuint64 rc, HSAuint64 *c))
UNSUPPORTED(hsaKmtSPMAcquire(HSAuint32 n))
UNSUPPORTED(hsaKmtSPMRelease(HSAuint32 n))
UNSUPPORTED(hsaKmtSPMSetDestBuffer(HSAuint32 n, HSAuint32 s, HSAuint32 *t, HSAuint32 *b, void *d,
                                   bool *l))
