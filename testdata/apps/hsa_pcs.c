/* hsa_pcs: what ROCR's PC-sampling extension (hsa_ven_amd_pcs_*, ROCR 6.4
 * and later) says about each GPU agent. Prints "pcs=absent" when the
 * runtime does not offer the extension, else per GPU its name and one line
 * per configuration the runtime reports:
 *   gpu 0 name=gfx90a configs=1
 *   config method=host_trap unit=time min=1 max=18446744073709551615 flags=0
 * With the argument "session", it also creates, starts, stops and destroys
 * a session with each GPU's first configuration at its smallest interval,
 * printing "session ok" for each.
 *
 * Built against every runtime of the matrix, so it declares the extension's
 * interface itself (the header exists only from ROCm 6.2 on; the layouts
 * are those of hsa_ven_amd_pc_sampling.h 1.00) and finds the functions by
 * name in the runtime (ROCR exports them; its extension table for
 * 0x203 leaves the iterate entry unset and answers an error, so tools take
 * them from the HSA API table or by name). */
#include "hsa_app.h"

#include <dlfcn.h>
#include <inttypes.h>

typedef struct {
  int method; /* 0 host trap, 1 stochastic */
  int units;  /* 0 microseconds, 1 cycles, 2 instructions */
  size_t min_interval;
  size_t max_interval;
  uint64_t flags; /* 1: the interval must be a power of two */
} pcs_config;

typedef struct {
  uint64_t handle;
} pcs_handle;

typedef hsa_status_t (*config_cb)(const pcs_config *, void *);
typedef void (*data_ready_cb)(void *, size_t, size_t, hsa_status_t (*)(void *, size_t, void *), void *);

typedef struct {
  hsa_status_t (*iterate)(hsa_agent_t, config_cb, void *);
  hsa_status_t (*create)(hsa_agent_t, int, int, size_t, size_t, size_t, data_ready_cb, void *, pcs_handle *);
  hsa_status_t (*destroy)(pcs_handle);
  hsa_status_t (*start)(pcs_handle);
  hsa_status_t (*stop)(pcs_handle);
} pcs_table;

static pcs_table tbl;
static hsa_agent_t gpus[16];
static unsigned ngpus;

static hsa_status_t all_gpus(hsa_agent_t a, void *d) {
  (void)d;
  hsa_device_type_t t;
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  if (t == HSA_DEVICE_TYPE_GPU && ngpus < 16) gpus[ngpus++] = a;
  return HSA_STATUS_SUCCESS;
}

static const char *method_name(int m) { return m == 0 ? "host_trap" : m == 1 ? "stochastic" : "?"; }
static const char *unit_name(int u) { return u == 0 ? "time" : u == 1 ? "cycles" : u == 2 ? "instructions" : "?"; }

static pcs_config seen[8];
static unsigned nseen;

static hsa_status_t keep(const pcs_config *c, void *d) {
  (void)d;
  if (nseen < 8) seen[nseen++] = *c;
  return HSA_STATUS_SUCCESS;
}

static void on_data(void *d, size_t size, size_t lost, hsa_status_t (*copy)(void *, size_t, void *), void *h) {
  (void)d, (void)size, (void)lost, (void)copy, (void)h;
}

int main(int argc, char **argv) {
  (void)gpu_cb, (void)submit, (void)hdr; /* hsa_app.h's helpers this app does not need */
  int session = argc > 1 && !strcmp(argv[1], "session");
  CHECK(hsa_init());
  *(void **)&tbl.iterate = dlsym(RTLD_DEFAULT, "hsa_ven_amd_pcs_iterate_configuration");
  *(void **)&tbl.create = dlsym(RTLD_DEFAULT, "hsa_ven_amd_pcs_create");
  *(void **)&tbl.destroy = dlsym(RTLD_DEFAULT, "hsa_ven_amd_pcs_destroy");
  *(void **)&tbl.start = dlsym(RTLD_DEFAULT, "hsa_ven_amd_pcs_start");
  *(void **)&tbl.stop = dlsym(RTLD_DEFAULT, "hsa_ven_amd_pcs_stop");
  if (!tbl.iterate || !tbl.create || !tbl.destroy || !tbl.start || !tbl.stop) {
    printf("pcs=absent\n");
    hsa_shut_down();
    return 0;
  }
  CHECK(hsa_iterate_agents(all_gpus, NULL));
  for (unsigned g = 0; g < ngpus; g++) {
    char name[64] = {0};
    CHECK(hsa_agent_get_info(gpus[g], HSA_AGENT_INFO_NAME, name));
    nseen = 0;
    hsa_status_t s = tbl.iterate(gpus[g], keep, NULL);
    if (s != HSA_STATUS_SUCCESS) {
      printf("gpu %u name=%s iterate=0x%x\n", g, name, s);
      continue;
    }
    printf("gpu %u name=%s configs=%u\n", g, name, nseen);
    for (unsigned i = 0; i < nseen; i++)
      printf("config method=%s unit=%s min=%zu max=%zu flags=%" PRIu64 "\n", method_name(seen[i].method),
             unit_name(seen[i].units), seen[i].min_interval, seen[i].max_interval, seen[i].flags);
    if (session && nseen) {
      pcs_handle h;
      /* 64 samples of either kind (64 bytes each) in the client's buffer. */
      CHECK(tbl.create(gpus[g], seen[0].method, seen[0].units, seen[0].min_interval, 1000, 4096, on_data, NULL, &h));
      CHECK(tbl.start(h));
      CHECK(tbl.stop(h));
      CHECK(tbl.destroy(h));
      printf("session ok\n");
    }
  }
  CHECK(hsa_shut_down());
  return 0;
}
