/* The device files: /dev/kfd and one render node per virtual GPU exist for
 * this process only. Opening one returns a real fd (an empty memfd, so that
 * close, dup, fcntl and poll behave) that the fd table marks as ours;
 * ioctl and mmap on it come to the emulation (interpose.c). stat() reports
 * them as the character devices the kernel creates. /dev/accel/... (the NPU
 * nodes ROCR 6.4+ probes) reads as absent: the emulated machine has none.
 *
 * Where the machine has a real GPU, other render nodes stay reachable,
 * but /dev/kfd is always the emulated one: the emulation applies to the
 * whole process (and its children, which inherit LD_PRELOAD). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "vgpu.h"

/* fd -> VGPU_FD_* kind. fds past the table are refused at open time. */
#define MAX_FD 65536
static _Atomic uint8_t kinds[MAX_FD];

int vgpu_fd_kind(int fd) {
  if (fd < 0 || fd >= MAX_FD) return VGPU_FD_NONE;
  return atomic_load_explicit(&kinds[fd], memory_order_relaxed);
}

void vgpu_fd_forget(int fd) {
  if (fd >= 0 && fd < MAX_FD) atomic_store(&kinds[fd], VGPU_FD_NONE);
}

int vgpu_fd_register(int fd, int kind) {
  if (fd < 0 || fd >= MAX_FD) return -1;
  atomic_store(&kinds[fd], (uint8_t)kind);
  return 0;
}

/* KFD's character device has a dynamic major; this is a plausible one. */
#define KFD_MAJOR 234
#define DRM_MAJOR 226

/* Which device a path names: VGPU_FD_KFD, VGPU_FD_RENDER + g, -1 for a
 * render node or accel node that does not exist here, 0 for anything else. */

static int classify(const char *path) {
  if (!strcmp(path, "/dev/kfd")) return VGPU_FD_KFD;
  if (!strncmp(path, "/dev/dri/renderD", 16)) {
    vgpu_config_init();
    char *end;
    long minor = strtol(path + 16, &end, 10);
    if (*end || end == path + 16) return 0;
    for (unsigned g = 0; g < vgpu_cfg.gpus; g++)
      if (minor == (long)vgpu_render_minor(g)) return VGPU_FD_RENDER + (int)g;
    return 0;
  }
  if (!strncmp(path, "/dev/accel/", 11)) return -1;
  return 0;
}

static void register_fork_handler(void) { pthread_atfork(NULL, NULL, vgpu_forget_process_state); }

static int new_device_fd(int kind, int flags) {
  char name[32];
  snprintf(name, sizeof name, kind == VGPU_FD_KFD ? "kfd" : "renderD%u",
           vgpu_render_minor((unsigned)(kind - VGPU_FD_RENDER)));
  int fd = memfd_create(name, (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
  if (fd < 0) return -1;
  if (vgpu_fd_register(fd, kind)) {
    vgpu_real_close(fd);
    errno = EMFILE;
    return -1;
  }
  return fd;
}


int vgpu_device_open(const char *path, int flags, bool *handled) {
  int kind = classify(path);
  *handled = kind != 0;
  if (!kind) return -1;
  vgpu_config_init();
  static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
  pthread_once(&fork_once, register_fork_handler);
  if (kind < 0) {
    errno = ENOENT;
    return -1;
  }
  if (vgpu_config_failed()) {
    errno = EINVAL;
    return -1;
  }
  int fd = new_device_fd(kind, flags);
  vgpu_logf("{\"type\":\"device_open\",\"pid\":%d,\"path\":\"%s\",\"fd\":%d}", (int)getpid(), path, fd);
  return fd;
}

int vgpu_render_open(unsigned gpu, int flags) {
  vgpu_config_init();
  return new_device_fd(VGPU_FD_RENDER + (int)gpu, flags);
}

static void fill_stat(struct stat *st, int kind) {
  memset(st, 0, sizeof *st);
  st->st_mode = S_IFCHR | 0666;
  st->st_nlink = 1;
  st->st_blksize = 4096;
  st->st_rdev = kind == VGPU_FD_KFD ? makedev(KFD_MAJOR, 0)
                                    : makedev(DRM_MAJOR, vgpu_render_minor((unsigned)(kind - VGPU_FD_RENDER)));
  st->st_dev = makedev(0, 5); /* devtmpfs */
  st->st_ino = 1000 + (ino_t)kind;
}

bool vgpu_device_stat(const char *path, struct stat *st) {
  int kind = classify(path);
  if (kind <= 0) return false;
  fill_stat(st, kind);
  return true;
}

bool vgpu_fd_stat(int fd, struct stat *st) {
  int kind = vgpu_fd_kind(fd);
  if (!kind) return false;
  fill_stat(st, kind);
  return true;
}
