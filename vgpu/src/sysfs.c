/* The KFD topology in sysfs, served from a generated tree. Reads of
 *   /sys/devices/virtual/kfd/...   (and its alias /sys/class/kfd/...)
 *   /sys/module/amdgpu/...
 *   /proc/modules                  (holds just the amdgpu driver)
 *   /sys/class/drm/...             (the virtual GPUs' cards and render nodes,
 *                                   linked to their PCI functions in the tree)
 * are redirected to a copy written by topology.c, so every thunk reads
 * them with its own fopen/fscanf/opendir code and nothing of it needs to be
 * emulated call by call. The real CPU topology (/sys/devices/system/...,
 * /proc/cpuinfo) stays real.
 *
 * The tree lives in a private per-user directory (created 0700 and checked:
 * owned by this user, no symlink, no group/other access) under
 * $XDG_RUNTIME_DIR or /tmp, named by the hash of its content, so processes
 * with the same configuration share one copy and a different machine or
 * configuration never reads a stale one. It is written to a temporary
 * directory and renamed into place, so a reader never sees half a tree. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vgpu.h"

struct prefix {
  const char *from;
  const char *to; /* below the tree */
};

static const struct prefix prefixes[] = {
    {"/sys/devices/virtual/kfd", "/kfd"},
    {"/sys/class/kfd", "/kfd"},
    {"/sys/module/amdgpu", "/module"},
    {"/proc/modules", "/proc-modules"},
    /* The render nodes are ours, so is their sysfs side (topology.c,
     * drm_device). Its links are relative and resolve inside the tree (to
     * its devices/), so the machine's own /sys/devices stays visible. */
    {"/sys/class/drm", "/class-drm"},
};

static char tree[256];
static int tree_err;
static pthread_once_t tree_once = PTHREAD_ONCE_INIT;

/* A directory only this user can use: lstat (never follow a link), owner,
 * mode. */
static bool private_dir(const char *path) {
  struct stat st;
  return !lstat(path, &st) && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077);
}

static const char *base_dir(void) {
  const char *x = getenv("XDG_RUNTIME_DIR");
  if (x && x[0] == '/' && private_dir(x)) return x;
  return "/tmp";
}

static void remove_tree(int dirfd) {
  DIR *d = fdopendir(dirfd);
  if (!d) {
    close(dirfd);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    if (e->d_type == DT_DIR) {
      int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0) remove_tree(sub);
      unlinkat(dirfd, e->d_name, AT_REMOVEDIR);
    } else {
      unlinkat(dirfd, e->d_name, 0);
    }
  }
  closedir(d);
}

static void make_tree(void) {
  vgpu_config_init();
  char user[200];
  snprintf(user, sizeof user, "%s/rocprof-go-vgpu-%u", base_dir(), (unsigned)geteuid());
  if (mkdir(user, 0700) && errno != EEXIST) {
    tree_err = errno;
    vgpu_error("cannot create %s for the KFD sysfs tree: %s", user, strerror(errno));
    return;
  }
  if (!private_dir(user)) {
    tree_err = EPERM;
    fprintf(stderr,
            "rocprof-go virtual GPU: %s is not a private directory of this user (a symlink, another owner, "
            "or group/other access); remove it or set XDG_RUNTIME_DIR to a private directory\n",
            user);
    return;
  }
  snprintf(tree, sizeof tree, "%s/topology-%016llx", user, (unsigned long long)vgpu_topology_hash());
  struct stat st;
  if (!lstat(tree, &st) && S_ISDIR(st.st_mode)) return;
  char tmp[256];
  snprintf(tmp, sizeof tmp, "%s/.tmp-XXXXXX", user);
  if (!mkdtemp(tmp)) {
    tree_err = errno;
    return;
  }
  int dirfd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dirfd < 0 || vgpu_topology_write(dirfd)) {
    tree_err = errno ? errno : EIO;
    vgpu_error("cannot write the KFD sysfs tree in %s: %s", tmp, strerror(tree_err));
  } else if (rename(tmp, tree) == 0) {
    close(dirfd);
    return;
  } else if (errno != EEXIST && errno != ENOTEMPTY) {
    tree_err = errno; /* a racing process may have renamed its copy first: that one serves */
  }
  if (dirfd >= 0) remove_tree(dirfd);
  rmdir(tmp);
}

const char *vgpu_sysfs_redirect(const char *path, char *buf, size_t n) {
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
    size_t len = strlen(prefixes[i].from);
    if (strncmp(path, prefixes[i].from, len) || (path[len] && path[len] != '/')) continue;
    pthread_once(&tree_once, make_tree);
    if (tree_err) return NULL;
    /* ROCPROF_VGPU_TOPOLOGY_FAULT=unreadable: the KFD's part of sysfs is
     * missing (as in a container given /dev/kfd but not /sys): its paths
     * lead to a name the tree does not hold. */
    const char *to = prefixes[i].to;
    if (vgpu_cfg.topology_fault == VGPU_FAULT_UNREADABLE && !strcmp(to, "/kfd")) to = "/kfd-unreadable";
    int w = snprintf(buf, n, "%s%s%s", tree, to, path + len);
    if (w < 0 || (size_t)w >= n) return NULL;
    if (vgpu_cfg.log && access(buf, F_OK))
      vgpu_logf("{\"type\":\"sysfs_miss\",\"pid\":%d,\"path\":\"%s\"}", (int)getpid(), path);
    return buf;
  }
  return NULL;
}
