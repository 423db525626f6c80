/* PC sampling's control ioctl (AMDKFD_IOC_PC_SAMPLE, ROCm's driver): the
 * configurations a GPU offers, and the sessions a process creates, starts,
 * stops and destroys on it. No sample is generated yet (docs/pc-sampling.md
 * says what delivering them would take); this is the bookkeeping and the
 * answers, with the driver's error numbers:
 *
 *   every op but QUERY/CREATE on an unknown trace id   EINVAL
 *   an unknown gpu_id or op                             EINVAL
 *   QUERY on a GPU without PC sampling                  EOPNOTSUPP
 *   QUERY with too small an array                       ENOSPC (count needed returned)
 *   CREATE with num_sample_info != 1                    EINVAL
 *   CREATE of a configuration the GPU does not offer    EOPNOTSUPP
 *   CREATE of a second, different configuration         EEXIST (the current one written back)
 *   START of a started session, STOP of a stopped one   EALREADY
 *   DESTROY of a started session                        EBUSY
 *
 * Sessions with the same configuration share it (the driver counts its
 * users); the configuration is released with its last session. While one
 * exists, a query without VGPU_PCS_QUERY_FULL reports only it. The state is
 * per GPU of this process (a real driver's is per device, shared by every
 * process: one process is all the virtual GPU ever sees). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "kfd_uapi.h"
#include "vgpu.h"

/* Host trap: an interval in microseconds, from 1 to any. */
static const struct vgpu_pc_sample_info hosttrap_us = {
    .interval_min = 1, .interval_max = UINT64_MAX, .method = VGPU_PCS_METHOD_HOSTTRAP, .type = VGPU_PCS_TYPE_TIME_US};
/* Stochastic (hardware) sampling of MI300: shader-clock cycles, a power of
 * two from 256 to 2^31. */
static const struct vgpu_pc_sample_info stochastic_cycles = {.interval_min = 256,
                                                             .interval_max = 1ull << 31,
                                                             .flags = VGPU_PCS_FLAG_POWER_OF_2,
                                                             .method = VGPU_PCS_METHOD_STOCHASTIC,
                                                             .type = VGPU_PCS_TYPE_CLOCK_CYCLES};

/* The configurations of the emulated architecture, in the driver's order:
 * gfx90a (GC 9.4.2) host trap; gfx942 (GC 9.4.3) host trap and stochastic;
 * the others none. */
static unsigned formats(const struct vgpu_pc_sample_info *out[2]) {
  const char *n = vgpu_cfg.arch ? vgpu_cfg.arch->name : "";
  if (!strcmp(n, "gfx90a")) {
    out[0] = &hosttrap_us;
    return 1;
  }
  if (!strcmp(n, "gfx942")) {
    out[0] = &hosttrap_us;
    out[1] = &stochastic_cycles;
    return 2;
  }
  return 0;
}

#define MAX_SESSIONS 64

struct session {
  uint32_t id; /* 0: free slot */
  bool started;
};

struct gpu_pcs {
  unsigned users;                      /* sessions sharing `current` */
  struct vgpu_pc_sample_info current;  /* valid while users > 0 */
  uint32_t next_id;                    /* ids are handed out cyclically from 1 */
  struct session s[MAX_SESSIONS];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gpu_pcs gpus[VGPU_MAX_GPUS];

static struct session *find(struct gpu_pcs *p, uint32_t id) {
  if (!id) return NULL;
  for (unsigned i = 0; i < MAX_SESSIONS; i++)
    if (p->s[i].id == id) return &p->s[i];
  return NULL;
}

static int query(struct gpu_pcs *p, struct vgpu_pc_sample_args *a) {
  const struct vgpu_pc_sample_info *f[2];
  unsigned n = formats(f);
  if (!n) return -EOPNOTSUPP;
  bool current_only = !(a->flags & VGPU_PCS_QUERY_FULL) && p->users;
  if (current_only) n = 1;
  if (!a->sample_info_ptr || !a->num_sample_info) {
    a->num_sample_info = n;
    return 0;
  }
  if (a->num_sample_info < n) {
    a->num_sample_info = n;
    return -ENOSPC;
  }
  struct vgpu_pc_sample_info *out = (void *)(uintptr_t)a->sample_info_ptr;
  if (current_only) {
    out[0] = p->current;
  } else {
    for (unsigned i = 0; i < n; i++) out[i] = *f[i];
  }
  a->num_sample_info = n;
  return 0;
}

static bool offered(const struct vgpu_pc_sample_info *in) {
  const struct vgpu_pc_sample_info *f[2];
  unsigned n = formats(f);
  for (unsigned i = 0; i < n; i++) {
    if (in->method != f[i]->method || in->type != f[i]->type) continue;
    if (in->interval < f[i]->interval_min || in->interval > f[i]->interval_max) continue;
    if ((f[i]->flags & VGPU_PCS_FLAG_POWER_OF_2) && (in->interval & (in->interval - 1))) continue;
    return true;
  }
  return false;
}

static bool same_config(const struct vgpu_pc_sample_info *x, const struct vgpu_pc_sample_info *y) {
  return x->interval == y->interval && x->method == y->method && x->type == y->type;
}

static int create(struct gpu_pcs *p, struct vgpu_pc_sample_args *a) {
  if (a->num_sample_info != 1) return -EINVAL;
  if (!a->sample_info_ptr) return -EFAULT;
  struct vgpu_pc_sample_info *io = (void *)(uintptr_t)a->sample_info_ptr;
  struct vgpu_pc_sample_info in = *io;
  if (!offered(&in)) return -EOPNOTSUPP;
  if (p->users && !same_config(&p->current, &in)) {
    *io = p->current;
    return -EEXIST;
  }
  struct session *slot = NULL;
  for (unsigned i = 0; i < MAX_SESSIONS && !slot; i++)
    if (!p->s[i].id) slot = &p->s[i];
  if (!slot) return -ENOMEM;
  uint32_t id = p->next_id ? p->next_id : 1;
  while (find(p, id)) id = id == INT32_MAX ? 1 : id + 1;
  p->next_id = id == INT32_MAX ? 1 : id + 1;
  *slot = (struct session){.id = id};
  if (!p->users++) {
    p->current = in;
    p->current.interval_min = p->current.interval_max = p->current.flags = 0;
    const struct vgpu_pc_sample_info *f[2];
    unsigned n = formats(f);
    for (unsigned i = 0; i < n; i++)
      if (f[i]->method == in.method && f[i]->type == in.type) {
        p->current.interval_min = f[i]->interval_min;
        p->current.interval_max = f[i]->interval_max;
        p->current.flags = f[i]->flags;
      }
  }
  a->trace_id = id;
  return 0;
}

int vgpu_pc_sample(void *argp) {
  struct vgpu_pc_sample_args *a = argp;
  int g = vgpu_gpu_index(a->gpu_id);
  if (g < 0) return -EINVAL;
  pthread_mutex_lock(&lock);
  struct gpu_pcs *p = &gpus[g];
  struct session *s = NULL;
  int rc;
  if (a->op != VGPU_PCS_OP_QUERY_CAPABILITIES && a->op != VGPU_PCS_OP_CREATE) {
    s = find(p, a->trace_id);
    if (!s) {
      rc = -EINVAL;
      goto out;
    }
  }
  switch (a->op) {
  case VGPU_PCS_OP_QUERY_CAPABILITIES:
    rc = query(p, a);
    break;
  case VGPU_PCS_OP_CREATE:
    rc = create(p, a);
    break;
  case VGPU_PCS_OP_DESTROY:
    if (s->started) {
      rc = -EBUSY;
      break;
    }
    s->id = 0;
    p->users--;
    rc = 0;
    break;
  case VGPU_PCS_OP_START:
    rc = s->started ? -EALREADY : 0;
    s->started = true;
    break;
  case VGPU_PCS_OP_STOP:
    rc = s->started ? 0 : -EALREADY;
    s->started = false;
    break;
  default:
    rc = -EINVAL;
  }
out:
  pthread_mutex_unlock(&lock);
  static const char *const ops[] = {"query", "create", "destroy", "start", "stop"};
  vgpu_logf("{\"type\":\"pc_sample\",\"pid\":%d,\"gpu\":%d,\"op\":\"%s\",\"trace_id\":%u,\"result\":%d}", (int)getpid(),
            g, a->op < 5 ? ops[a->op] : "unknown", a->trace_id, rc);
  return rc;
}

/* A forked child is a new KFD process, without sessions. */
void vgpu_pc_sample_after_fork(void) {
  pthread_mutex_init(&lock, NULL);
  memset(gpus, 0, sizeof gpus);
}
