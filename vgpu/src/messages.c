/* Runtime messages the virtual GPU makes frequent, and which it therefore
 * drops.
 *
 * ROCR 5.x and 6.1 print "Warning: (!g_use_interrupt_wait || isIPC()) &&
 * "Use of non-host signal in host signal wait API." ..." (up to ten times a
 * process) whenever a host thread waits on a signal created for GPU
 * consumers only. HIP 5.x creates its kernel-argument pool's signals that
 * way (hsa_signal_create with the GPU agent as the one consumer: eight of
 * them) and waits on one from hipLaunchKernel when it reuses a chunk of
 * the pool the GPU may still read, which is when the app has about a pool
 * of launches in flight. A real GPU usually keeps up with a launch loop;
 * the emulated command processor runs each dispatch in a few microseconds
 * of CPU, slower than HIP submits, so any app with more than ~4000
 * launches reaches it (tiny_kernels 5000: 2 warnings, 30000: 10). The wait
 * is HIP's intended throttle, harmless and not rocprof-go's doing; the
 * message is ROCR's debug note about it (issues ROCm/ROCm#1426, #1436 show
 * it on real GPUs too). Only this exact message is dropped, and only under
 * the virtual GPU; everything else reaches libc unchanged. HIP 6.4 and 7.2
 * do not trigger it. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vgpu.h"

/* glibc's fortified entry point (what ROCR calls: it is built with
 * _FORTIFY_SOURCE); not declared by <stdio.h> without fortification. */
extern int __vfprintf_chk(FILE *stream, int flag, const char *fmt, va_list ap);

static const char nonhost_wait[] =
    "Warning: (!g_use_interrupt_wait || isIPC()) && \"Use of non-host signal in host signal wait API.\"";

/* dropped tells a message to drop by its format string: a prefix compare,
 * the only cost every other fprintf of the process pays. */
static int dropped(FILE *stream, const char *fmt) {
  return stream == stderr && fmt && fmt[0] == 'W' && strncmp(fmt, nonhost_wait, sizeof nonhost_wait - 1) == 0;
}

VGPU_EXPORT int __fprintf_chk(FILE *stream, int flag, const char *fmt, ...) {
  if (dropped(stream, fmt)) return 0;
  va_list ap;
  va_start(ap, fmt);
  int n = __vfprintf_chk(stream, flag, fmt, ap);
  va_end(ap);
  return n;
}

VGPU_EXPORT int fprintf(FILE *stream, const char *fmt, ...) {
  if (dropped(stream, fmt)) return 0;
  va_list ap;
  va_start(ap, fmt);
  int n = vfprintf(stream, fmt, ap);
  va_end(ap);
  return n;
}
