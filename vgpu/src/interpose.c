/* The libc entry points through which any thunk reaches the kernel: open
 * and friends for /dev/kfd, the render nodes and the KFD sysfs tree, stat
 * for the device nodes, ioctl and mmap on the device fds, close and dup.
 * Everything else passes straight to libc. These run on every such call in
 * the process, so the test for "is this ours" is a few compares: an
 * absolute path starting with /dev/ or /sys/, or an fd in the device table.
 *
 * glibc's own internal calls (fopen's open, malloc's mmap) do not come
 * through here, which is why fopen, opendir and the stat family are
 * interposed themselves. The fortified (__open_2) and pre-2.33
 * (__xstat) entry points are covered too: Debian builds with
 * _FORTIFY_SOURCE and old binaries still call __xstat. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "vgpu.h"

#define EXPORT VGPU_EXPORT

/* Resolves the next definition of a symbol once (a racing second lookup
 * finds the same pointer, so no lock is needed). */
#define REAL(ret, name, params)                                        \
  static ret(*real_##name) params;                                     \
  static ret(*get_##name(void)) params {                               \
    if (!real_##name) real_##name = (ret(*) params)dlsym(RTLD_NEXT, #name); \
    return real_##name;                                                \
  }

REAL(int, open, (const char *, int, ...))
REAL(int, open64, (const char *, int, ...))
REAL(int, openat, (int, const char *, int, ...))
REAL(int, openat64, (int, const char *, int, ...))
REAL(int, __open_2, (const char *, int))
REAL(int, __open64_2, (const char *, int))
REAL(int, __openat_2, (int, const char *, int))
REAL(int, __openat64_2, (int, const char *, int))
REAL(FILE *, fopen, (const char *, const char *))
REAL(FILE *, fopen64, (const char *, const char *))
REAL(DIR *, opendir, (const char *))
REAL(int, stat, (const char *, struct stat *))
REAL(int, stat64, (const char *, struct stat64 *))
REAL(int, lstat, (const char *, struct stat *))
REAL(int, lstat64, (const char *, struct stat64 *))
REAL(int, fstat, (int, struct stat *))
REAL(int, fstat64, (int, struct stat64 *))
REAL(int, fstatat, (int, const char *, struct stat *, int))
REAL(int, fstatat64, (int, const char *, struct stat64 *, int))
REAL(int, statx, (int, const char *, int, unsigned, struct statx *))
REAL(int, access, (const char *, int))
REAL(int, faccessat, (int, const char *, int, int))
REAL(int, eaccess, (const char *, int))
REAL(int, euidaccess, (const char *, int))
REAL(ssize_t, readlink, (const char *, char *, size_t))
REAL(int, close, (int))
REAL(int, dup, (int))
REAL(int, dup2, (int, int))
REAL(int, dup3, (int, int, int))
REAL(int, ioctl, (int, unsigned long, ...))
REAL(void *, mmap, (void *, size_t, int, int, int, off_t))
REAL(void *, mmap64, (void *, size_t, int, int, int, off64_t))

int vgpu_real_open(const char *path, int flags, mode_t mode) { return get_open()(path, flags, mode); }
int vgpu_real_close(int fd) { return get_close()(fd); }
void *vgpu_real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  return get_mmap()(addr, len, prot, flags, fd, off);
}

/* --- paths ------------------------------------------------------------------ */

/* Device paths (/dev/...) we answer, and sysfs paths (/sys/..., and
 * /proc/modules) we redirect: a few compares are all a hot path pays. */
static bool maybe_ours(const char *p) {
  return p && p[0] == '/' &&
         ((p[1] == 'd' && p[2] == 'e' && p[3] == 'v' && p[4] == '/') ||
          (p[1] == 's' && p[2] == 'y' && p[3] == 's' && p[4] == '/') || (p[1] == 'p' && !strcmp(p, "/proc/modules")));
}

/* The path to hand to libc: the sysfs tree's copy, or the path itself. */
static const char *route(const char *p, char *buf, size_t n) {
  if (!maybe_ours(p) || p[1] == 'd') return p;
  const char *r = vgpu_sysfs_redirect(p, buf, n);
  return r ? r : p;
}

static bool is_dirfd_relative(int dirfd, const char *p) { return dirfd != AT_FDCWD && p && p[0] != '/'; }

/* --- open ------------------------------------------------------------------- */

static mode_t mode_arg(int flags, va_list ap) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

static int open_common(int dirfd, const char *path, int flags, mode_t mode, bool at, bool is64) {
  char buf[512];
  if (maybe_ours(path) && !is_dirfd_relative(dirfd, path)) {
    if (path[1] == 'd') {
      bool handled = false;
      int fd = vgpu_device_open(path, flags, &handled);
      if (handled) return fd;
    } else {
      path = route(path, buf, sizeof buf);
    }
  }
  if (at) return is64 ? get_openat64()(dirfd, path, flags, mode) : get_openat()(dirfd, path, flags, mode);
  return is64 ? get_open64()(path, flags, mode) : get_open()(path, flags, mode);
}

EXPORT int open(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t m = mode_arg(flags, ap);
  va_end(ap);
  return open_common(AT_FDCWD, path, flags, m, false, false);
}
EXPORT int open64(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t m = mode_arg(flags, ap);
  va_end(ap);
  return open_common(AT_FDCWD, path, flags, m, false, true);
}
EXPORT int openat(int dirfd, const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t m = mode_arg(flags, ap);
  va_end(ap);
  return open_common(dirfd, path, flags, m, true, false);
}
EXPORT int openat64(int dirfd, const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t m = mode_arg(flags, ap);
  va_end(ap);
  return open_common(dirfd, path, flags, m, true, true);
}
/* The fortified forms never carry O_CREAT (the compiler routes those to
 * open proper), so a mode is never needed. */
EXPORT int __open_2(const char *path, int flags) {
  if (!maybe_ours(path)) return get___open_2()(path, flags);
  return open_common(AT_FDCWD, path, flags, 0, false, false);
}
EXPORT int __open64_2(const char *path, int flags) {
  if (!maybe_ours(path)) return get___open64_2()(path, flags);
  return open_common(AT_FDCWD, path, flags, 0, false, true);
}
EXPORT int __openat_2(int dirfd, const char *path, int flags) {
  if (!maybe_ours(path)) return get___openat_2()(dirfd, path, flags);
  return open_common(dirfd, path, flags, 0, true, false);
}
EXPORT int __openat64_2(int dirfd, const char *path, int flags) {
  if (!maybe_ours(path)) return get___openat64_2()(dirfd, path, flags);
  return open_common(dirfd, path, flags, 0, true, true);
}

static FILE *fopen_common(const char *path, const char *mode, bool is64) {
  char buf[512];
  if (maybe_ours(path) && path[1] == 'd') {
    bool handled = false;
    int fd = vgpu_device_open(path, strchr(mode, '+') || mode[0] != 'r' ? O_RDWR : O_RDONLY, &handled);
    if (handled) {
      if (fd < 0) return NULL;
      FILE *f = fdopen(fd, mode);
      if (!f) close(fd);
      return f;
    }
  }
  path = route(path, buf, sizeof buf);
  return is64 ? get_fopen64()(path, mode) : get_fopen()(path, mode);
}
EXPORT FILE *fopen(const char *path, const char *mode) { return fopen_common(path, mode, false); }
EXPORT FILE *fopen64(const char *path, const char *mode) { return fopen_common(path, mode, true); }

EXPORT DIR *opendir(const char *path) {
  char buf[512];
  return get_opendir()(route(path, buf, sizeof buf));
}

/* --- stat ------------------------------------------------------------------- */

/* struct stat and struct stat64 are the same layout on 64-bit Linux. */
_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "64-bit stat layout");

static bool fake_path_stat(const char *path, void *st) {
  return maybe_ours(path) && path[1] == 'd' && vgpu_device_stat(path, (struct stat *)st);
}
static bool fake_fd_stat(int fd, void *st) { return vgpu_fd_kind(fd) && vgpu_fd_stat(fd, (struct stat *)st); }

#define STAT_PATH(name, st_t)                                 \
  EXPORT int name(const char *path, st_t *st) {               \
    char buf[512];                                            \
    if (fake_path_stat(path, st)) return 0;                   \
    return get_##name()(route(path, buf, sizeof buf), st);    \
  }
STAT_PATH(stat, struct stat)
STAT_PATH(stat64, struct stat64)
STAT_PATH(lstat, struct stat)
STAT_PATH(lstat64, struct stat64)

EXPORT int fstat(int fd, struct stat *st) { return fake_fd_stat(fd, st) ? 0 : get_fstat()(fd, st); }
EXPORT int fstat64(int fd, struct stat64 *st) { return fake_fd_stat(fd, st) ? 0 : get_fstat64()(fd, st); }

static int fstatat_common(int dirfd, const char *path, void *st, int flags, bool is64) {
  char buf[512];
  if ((flags & AT_EMPTY_PATH) && path && !path[0] && fake_fd_stat(dirfd, st)) return 0;
  if (!is_dirfd_relative(dirfd, path)) {
    if (fake_path_stat(path, st)) return 0;
    path = route(path, buf, sizeof buf);
  }
  return is64 ? get_fstatat64()(dirfd, path, st, flags) : get_fstatat()(dirfd, path, st, flags);
}
EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags) {
  return fstatat_common(dirfd, path, st, flags, false);
}
EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags) {
  return fstatat_common(dirfd, path, st, flags, true);
}

/* Pre-2.33 glibc entry points, still called by binaries linked against it.
 * On x86-64 their struct is the one of stat(2) whatever the version, so
 * they are served by the entry points above (dlsym could not even find
 * libc's own: they are compat-only symbols now). */
EXPORT int __xstat(int ver, const char *path, struct stat *st) { return (void)ver, stat(path, st); }
EXPORT int __xstat64(int ver, const char *path, struct stat64 *st) { return (void)ver, stat64(path, st); }
EXPORT int __lxstat(int ver, const char *path, struct stat *st) { return (void)ver, lstat(path, st); }
EXPORT int __lxstat64(int ver, const char *path, struct stat64 *st) { return (void)ver, lstat64(path, st); }
EXPORT int __fxstat(int ver, int fd, struct stat *st) { return (void)ver, fstat(fd, st); }
EXPORT int __fxstat64(int ver, int fd, struct stat64 *st) { return (void)ver, fstat64(fd, st); }
EXPORT int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags) {
  return (void)ver, fstatat(dirfd, path, st, flags);
}
EXPORT int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags) {
  return (void)ver, fstatat64(dirfd, path, st, flags);
}

static void statx_from_stat(const struct stat *s, struct statx *x) {
  memset(x, 0, sizeof *x);
  x->stx_mask = STATX_BASIC_STATS;
  x->stx_mode = (uint16_t)s->st_mode;
  x->stx_nlink = (uint32_t)s->st_nlink;
  x->stx_uid = s->st_uid;
  x->stx_gid = s->st_gid;
  x->stx_rdev_major = major(s->st_rdev);
  x->stx_rdev_minor = minor(s->st_rdev);
  x->stx_blksize = (uint32_t)s->st_blksize;
}

EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *x) {
  char buf[512];
  struct stat s;
  if (((flags & AT_EMPTY_PATH) && !path[0] && fake_fd_stat(dirfd, &s)) ||
      (!is_dirfd_relative(dirfd, path) && fake_path_stat(path, &s))) {
    statx_from_stat(&s, x);
    return 0;
  }
  if (!is_dirfd_relative(dirfd, path)) path = route(path, buf, sizeof buf);
  return get_statx()(dirfd, path, flags, mask, x);
}

/* --- access, readlink ---------------------------------------------------------- */

static int access_common(int dirfd, const char *path, int mode, int flags, int which) {
  char buf[512];
  struct stat s;
  if (!is_dirfd_relative(dirfd, path)) {
    if (fake_path_stat(path, &s)) return 0; /* the device nodes are 0666 */
    path = route(path, buf, sizeof buf);
  }
  switch (which) {
  case 0: return get_access()(path, mode);
  case 1: return get_faccessat()(dirfd, path, mode, flags);
  case 2: return get_eaccess()(path, mode);
  default: return get_euidaccess()(path, mode);
  }
}
EXPORT int access(const char *path, int mode) { return access_common(AT_FDCWD, path, mode, 0, 0); }
EXPORT int faccessat(int dirfd, const char *path, int mode, int flags) {
  return access_common(dirfd, path, mode, flags, 1);
}
EXPORT int eaccess(const char *path, int mode) { return access_common(AT_FDCWD, path, mode, 0, 2); }
EXPORT int euidaccess(const char *path, int mode) { return access_common(AT_FDCWD, path, mode, 0, 3); }

EXPORT ssize_t readlink(const char *path, char *out, size_t n) {
  char buf[512];
  return get_readlink()(route(path, buf, sizeof buf), out, n);
}

/* --- fds: close, dup, ioctl, mmap ----------------------------------------------- */

EXPORT int close(int fd) {
  if (vgpu_fd_kind(fd)) vgpu_fd_forget(fd);
  return get_close()(fd);
}

EXPORT int dup(int fd) {
  int kind = vgpu_fd_kind(fd);
  int n = get_dup()(fd);
  if (kind && n >= 0) vgpu_fd_register(n, kind);
  return n;
}
EXPORT int dup2(int fd, int to) {
  int kind = vgpu_fd_kind(fd);
  if (vgpu_fd_kind(to) && to != fd) vgpu_fd_forget(to);
  int n = get_dup2()(fd, to);
  if (kind && n >= 0) vgpu_fd_register(n, kind);
  return n;
}
EXPORT int dup3(int fd, int to, int flags) {
  int kind = vgpu_fd_kind(fd);
  if (vgpu_fd_kind(to) && to != fd) vgpu_fd_forget(to);
  int n = get_dup3()(fd, to, flags);
  if (kind && n >= 0) vgpu_fd_register(n, kind);
  return n;
}

EXPORT int ioctl(int fd, unsigned long req, ...) {
  va_list ap;
  va_start(ap, req);
  void *arg = va_arg(ap, void *);
  va_end(ap);
  int kind = vgpu_fd_kind(fd);
  if (kind == VGPU_FD_KFD) return vgpu_kfd_ioctl(req, arg);
  if (kind >= VGPU_FD_RENDER) return vgpu_drm_ioctl((unsigned)(kind - VGPU_FD_RENDER), req, arg);
  return get_ioctl()(fd, req, arg);
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  int kind = fd >= 0 ? vgpu_fd_kind(fd) : 0;
  if (kind) return vgpu_mem_mmap(kind, addr, len, prot, flags, off);
  return get_mmap()(addr, len, prot, flags, fd, off);
}
EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off) {
  int kind = fd >= 0 ? vgpu_fd_kind(fd) : 0;
  if (kind) return vgpu_mem_mmap(kind, addr, len, prot, flags, off);
  return get_mmap64()(addr, len, prot, flags, fd, off);
}
