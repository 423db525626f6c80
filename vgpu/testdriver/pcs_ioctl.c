/* pcs_ioctl: AMDKFD_IOC_PC_SAMPLE and RUNTIME_ENABLE straight on the
 * emulated /dev/kfd (run with the virtual GPU preloaded; no ROCm library
 * involved). Checks every answer and errno against amdkfd's and prints one
 * "ok <step>" line per group of checks; the first mismatch prints what was
 * expected and exits 1. The architecture is the environment's
 * (ROCPROF_VGPU_ARCH): gfx90a offers host trap, gfx942 host trap and
 * stochastic, any other none. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct info {
  uint64_t interval, interval_min, interval_max, flags;
  uint32_t method, type;
};
struct args {
  uint64_t ptr;
  uint32_t num, op, gpu_id, trace_id, flags, reserved;
};
struct runtime_enable {
  uint64_t r_debug;
  uint32_t mode_mask, caps;
};
#define PC_SAMPLE _IOWR('K', 0x85, struct args)
#define RUNTIME_ENABLE _IOWR('K', 0x25, struct runtime_enable)
enum { QUERY, CREATE, DESTROY, START, STOP };
enum { HOSTTRAP = 1, STOCHASTIC = 2 };
enum { TIME_US, CYCLES, INSTRUCTIONS };

static int kfd;
static uint32_t gpu;

static int pcs(uint32_t op, uint32_t trace, struct info *p, uint32_t n, struct args *out) {
  struct args a = {.ptr = (uintptr_t)p, .num = n, .op = op, .gpu_id = gpu, .trace_id = trace};
  int rc = ioctl(kfd, PC_SAMPLE, &a);
  if (out) *out = a;
  return rc < 0 ? errno : 0;
}

#define EXPECT(cond, ...)                          \
  do {                                             \
    if (!(cond)) {                                 \
      printf("FAIL line %d: ", __LINE__);          \
      printf(__VA_ARGS__);                         \
      printf("\n");                                \
      exit(1);                                     \
    }                                              \
  } while (0)
#define EXPECT_ERR(got, want) EXPECT((got) == (want), "errno %d (%s), want %d (%s)", got, strerror(got), want, strerror(want))

int main(void) {
  kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
  EXPECT(kfd >= 0, "open /dev/kfd: %s", strerror(errno));
  FILE *f = fopen("/sys/devices/virtual/kfd/kfd/topology/nodes/1/gpu_id", "r");
  EXPECT(f && fscanf(f, "%u", &gpu) == 1, "no GPU node");
  fclose(f);
  const char *arch = getenv("ROCPROF_VGPU_ARCH") ? getenv("ROCPROF_VGPU_ARCH") : "gfx90a";
  unsigned want = !strcmp(arch, "gfx90a") ? 1 : !strcmp(arch, "gfx942") ? 2 : 0;

  /* RUNTIME_ENABLE: enable, enable again (EBUSY), disable, enable. */
  struct runtime_enable re = {.mode_mask = 1};
  EXPECT(ioctl(kfd, RUNTIME_ENABLE, &re) == 0, "runtime enable: %s", strerror(errno));
  EXPECT_ERR(ioctl(kfd, RUNTIME_ENABLE, &re) < 0 ? errno : 0, EBUSY);
  re.mode_mask = 0;
  EXPECT(ioctl(kfd, RUNTIME_ENABLE, &re) == 0, "runtime disable: %s", strerror(errno));
  re.mode_mask = 3;
  EXPECT(ioctl(kfd, RUNTIME_ENABLE, &re) == 0 && re.caps == 0, "runtime enable again: %s", strerror(errno));
  printf("ok runtime-enable\n");

  struct args out;
  struct info caps[4];
  memset(caps, 0, sizeof caps);
  if (!want) {
    EXPECT_ERR(pcs(QUERY, 0, NULL, 0, &out), EOPNOTSUPP);
    printf("ok unsupported\n");
    return 0;
  }

  /* Query: the count alone, too small an array, then the list. */
  EXPECT_ERR(pcs(QUERY, 0, NULL, 0, &out), 0);
  EXPECT(out.num == want, "count %u, want %u", out.num, want);
  if (want > 1) {
    EXPECT_ERR(pcs(QUERY, 0, caps, 1, &out), ENOSPC);
    EXPECT(out.num == want, "ENOSPC count %u", out.num);
  }
  EXPECT_ERR(pcs(QUERY, 0, caps, 4, &out), 0);
  EXPECT(out.num == want, "listed %u", out.num);
  EXPECT(caps[0].method == HOSTTRAP && caps[0].type == TIME_US && caps[0].interval_min == 1 &&
             caps[0].interval_max == UINT64_MAX && caps[0].flags == 0,
         "host trap entry %u/%u %llu..%llu flags %llu", caps[0].method, caps[0].type,
         (unsigned long long)caps[0].interval_min, (unsigned long long)caps[0].interval_max,
         (unsigned long long)caps[0].flags);
  if (want > 1)
    EXPECT(caps[1].method == STOCHASTIC && caps[1].type == CYCLES && caps[1].interval_min == 256 &&
               caps[1].interval_max == 1ull << 31 && caps[1].flags == 1,
           "stochastic entry %u/%u %llu..%llu flags %llu", caps[1].method, caps[1].type,
           (unsigned long long)caps[1].interval_min, (unsigned long long)caps[1].interval_max,
           (unsigned long long)caps[1].flags);
  printf("ok query\n");

  /* Create: what the GPU does not offer, and a bad count. */
  struct info bad = {.interval = 0, .method = HOSTTRAP, .type = TIME_US};
  EXPECT_ERR(pcs(CREATE, 0, &bad, 1, NULL), EOPNOTSUPP); /* interval below the minimum */
  bad = (struct info){.interval = 10, .method = HOSTTRAP, .type = INSTRUCTIONS};
  EXPECT_ERR(pcs(CREATE, 0, &bad, 1, NULL), EOPNOTSUPP); /* a unit host trap does not have */
  bad = (struct info){.interval = 1000, .method = STOCHASTIC, .type = CYCLES};
  EXPECT_ERR(pcs(CREATE, 0, &bad, 1, NULL), EOPNOTSUPP); /* not a power of two, or no stochastic */
  struct info ht = {.interval = 100, .method = HOSTTRAP, .type = TIME_US};
  EXPECT_ERR(pcs(CREATE, 0, &ht, 2, NULL), EINVAL);
  printf("ok create-refused\n");

  /* Unknown trace ids and GPU. */
  EXPECT_ERR(pcs(START, 12345, NULL, 0, NULL), EINVAL);
  EXPECT_ERR(pcs(STOP, 12345, NULL, 0, NULL), EINVAL);
  EXPECT_ERR(pcs(DESTROY, 12345, NULL, 0, NULL), EINVAL);
  uint32_t saved = gpu;
  gpu = 0xdead;
  EXPECT_ERR(pcs(QUERY, 0, NULL, 0, NULL), EINVAL);
  gpu = saved;
  EXPECT_ERR(pcs(7, 0, NULL, 0, NULL), EINVAL);
  printf("ok unknown-ids\n");

  /* A session's life: create, start, start again, destroy while started,
   * stop, stop again, destroy, destroy again. */
  EXPECT_ERR(pcs(CREATE, 0, &ht, 1, &out), 0);
  uint32_t id1 = out.trace_id;
  EXPECT(id1 != 0, "trace id 0");
  EXPECT_ERR(pcs(START, id1, NULL, 0, NULL), 0);
  EXPECT_ERR(pcs(START, id1, NULL, 0, NULL), EALREADY);
  EXPECT_ERR(pcs(DESTROY, id1, NULL, 0, NULL), EBUSY);
  EXPECT_ERR(pcs(STOP, id1, NULL, 0, NULL), 0);
  EXPECT_ERR(pcs(STOP, id1, NULL, 0, NULL), EALREADY);
  printf("ok session\n");

  /* While it exists: the same configuration is shared (a second id), a
   * different one is EEXIST with the current one written back, and a plain
   * query lists only the current one (a full query everything). */
  struct info same = ht;
  EXPECT_ERR(pcs(CREATE, 0, &same, 1, &out), 0);
  uint32_t id2 = out.trace_id;
  EXPECT(id2 != 0 && id2 != id1, "second id %u (first %u)", id2, id1);
  struct info other = {.interval = 50, .method = HOSTTRAP, .type = TIME_US};
  EXPECT_ERR(pcs(CREATE, 0, &other, 1, NULL), EEXIST);
  EXPECT(other.interval == 100 && other.method == HOSTTRAP, "current config not written back: %llu",
         (unsigned long long)other.interval);
  memset(caps, 0, sizeof caps);
  EXPECT_ERR(pcs(QUERY, 0, caps, 4, &out), 0);
  EXPECT(out.num == 1 && caps[0].interval == 100 && caps[0].method == HOSTTRAP && caps[0].interval_min == 1,
         "current-only query: %u entries, interval %llu", out.num, (unsigned long long)caps[0].interval);
  struct args full = {.ptr = (uintptr_t)caps, .num = 4, .op = QUERY, .gpu_id = gpu, .flags = 1};
  EXPECT(ioctl(kfd, PC_SAMPLE, &full) == 0 && full.num == want, "full query: %u entries", full.num);
  printf("ok shared\n");

  EXPECT_ERR(pcs(DESTROY, id1, NULL, 0, NULL), 0);
  EXPECT_ERR(pcs(DESTROY, id1, NULL, 0, NULL), EINVAL);
  EXPECT_ERR(pcs(DESTROY, id2, NULL, 0, NULL), 0);
  /* Released with its last session: a different configuration is accepted. */
  struct info next = want > 1 ? (struct info){.interval = 1 << 20, .method = STOCHASTIC, .type = CYCLES} : other;
  EXPECT_ERR(pcs(CREATE, 0, &next, 1, &out), 0);
  EXPECT(out.trace_id != id1 && out.trace_id != id2, "id %u reused at once", out.trace_id);
  EXPECT_ERR(pcs(DESTROY, out.trace_id, NULL, 0, NULL), 0);
  printf("ok released\n");
  return 0;
}
