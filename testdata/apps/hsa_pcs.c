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
 * With "samples CODE_OBJECT INTERVAL DISPATCHES WORKITEMS [stochastic]", on
 * the first GPU: loads module_fill from CODE_OBJECT, creates and starts a
 * host-trap session with INTERVAL us (or a stochastic one with INTERVAL
 * shader-clock cycles), dispatches module_fill DISPATCHES times (grid
 * WORKITEMS, workgroups of 64), each waited for, then stops, flushes and
 * destroys the session and prints what data_ready delivered:
 *   samples=N lost=L callbacks=C
 *   per_dispatch=n0,n1,...        samples whose correlation id names each
 *                                 dispatch (doorbell id, packet slot)
 *   foreign=F                     samples naming no dispatch of the app
 *   pc_offset_min=A pc_offset_max=B (from the kernel's entry)
 *   exec_ones=E wg_max=W          all-ones exec masks; largest workgroup x
 *   ts_in_dispatch=T              timestamps (ns: ROCR translates the ticks)
 *                                 within their dispatch's start/end
 *   code_size=S                   the kernel function symbol's size
 * and for stochastic, from the snapshot registers (gfx9 bit fields):
 *   valid=V issued=I dual=D       valid samples, issued, dual-issue VALU
 *   types=c:n,...                 issued samples per instruction type code
 *   reasons=c:n,...               not-issued samples per reason code
 *   wave_count_min=A wave_count_max=B
 *
 * Built against every runtime of the matrix, so it declares the extension's
 * interface itself (the header exists only from ROCm 6.2 on; the layouts
 * are those of hsa_ven_amd_pc_sampling.h 1.00) and finds the functions by
 * name in the runtime (ROCR exports them; its extension table for
 * 0x203 leaves the iterate entry unset and answers an error, so tools take
 * them from the HSA API table or by name). */
#define _GNU_SOURCE
#include "hsa_app.h"

#include <hsa/hsa_ext_amd.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <unistd.h>

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

typedef hsa_status_t (*copy_cb)(void *, size_t, void *);

typedef struct {
  hsa_status_t (*flush)(pcs_handle);
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

static hsa_status_t find_kernarg(hsa_amd_memory_pool_t p, void *d) {
  hsa_amd_segment_t seg;
  uint32_t flags = 0;
  hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg);
  if (seg != HSA_AMD_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
  hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
  if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) {
    *(hsa_amd_memory_pool_t *)d = p;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t cpu_kernarg(hsa_agent_t a, void *d) {
  hsa_device_type_t t;
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  if (t != HSA_DEVICE_TYPE_CPU) return HSA_STATUS_SUCCESS;
  return hsa_amd_agent_iterate_memory_pools(a, find_kernarg, d) == HSA_STATUS_INFO_BREAK ? HSA_STATUS_INFO_BREAK
                                                                                         : HSA_STATUS_SUCCESS;
}

/* The system pool ROCR marks for kernel arguments (fine-grained host memory). */
static hsa_amd_memory_pool_t kernarg_pool(hsa_agent_t gpu) {
  (void)gpu;
  hsa_amd_memory_pool_t p = {0};
  hsa_iterate_agents(cpu_kernarg, &p);
  return p;
}

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

/* --- samples ---------------------------------------------------------------- */

typedef struct { /* perf_sample_hosttrap_v1_t / perf_sample_snapshot_v1_t */
  uint64_t pc, exec_mask;
  uint32_t wg[3], chiplet_and_wave, hw_id, snapshot[3]; /* host trap: reserved */
  uint64_t timestamp, correlation_id;
} pcs_sample;

#define MAX_SAMPLES (1u << 22)
#define MAX_DISPATCHES 4096
static pcs_sample *got;
static size_t ngot, nlost, ncallbacks;

static void keep_data(void *d, size_t size, size_t lost, copy_cb copy, void *h) {
  (void)d;
  ncallbacks++;
  nlost += lost;
  size_t n = size / sizeof(pcs_sample);
  if (ngot + n > MAX_SAMPLES) {
    static pcs_sample scratch[1];
    nlost += n; /* the app's own limit: counted, never silently */
    (void)scratch;
    return;
  }
  copy(h, n * sizeof(pcs_sample), got + ngot);
  ngot += n;
}

static int samples_mode(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: hsa_pcs samples CODE_OBJECT INTERVAL DISPATCHES WORKITEMS [stochastic]\n");
    return 2;
  }
  const char *co = argv[2];
  size_t interval = strtoull(argv[3], NULL, 10);
  unsigned ndisp = (unsigned)strtoul(argv[4], NULL, 10);
  uint32_t items = (uint32_t)strtoul(argv[5], NULL, 10);
  int stochastic = argc > 6 && !strcmp(argv[6], "stochastic");
  if (ndisp > MAX_DISPATCHES) ndisp = MAX_DISPATCHES;
  got = calloc(MAX_SAMPLES, sizeof *got);
  CHECK(hsa_iterate_agents(all_gpus, NULL));
  if (!ngpus) {
    printf("no gpu\n");
    return 1;
  }
  hsa_agent_t gpu = gpus[0];
  /* hipcc --genco writes a clang offload bundle: take its amdgcn ELF */
  FILE *fp = fopen(co, "rb");
  if (!fp) {
    perror(co);
    return 2;
  }
  static char file[1 << 22];
  size_t flen = fread(file, 1, sizeof file, fp);
  fclose(fp);
  const char *elf = file;
  size_t elen = flen;
  if (flen > 32 && !memcmp(file, "__CLANG_OFFLOAD_BUNDLE__", 24)) {
    uint64_t nent, o = 32;
    memcpy(&nent, file + 24, 8);
    for (uint64_t e = 0; e < nent && o + 24 <= flen; e++) {
      uint64_t off, size, idlen;
      memcpy(&off, file + o, 8);
      memcpy(&size, file + o + 8, 8);
      memcpy(&idlen, file + o + 16, 8);
      if (o + 24 + idlen > flen) break;
      if (memmem(file + o + 24, idlen, "amdgcn", 6) && off + size <= flen) elf = file + off, elen = size;
      o += 24 + idlen;
    }
  }
  hsa_code_object_reader_t rd;
  CHECK(hsa_code_object_reader_create_from_memory(elf, elen, &rd));
  hsa_executable_t exe;
  CHECK(hsa_executable_create_alt(HSA_PROFILE_BASE, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exe));
  CHECK(hsa_executable_load_agent_code_object(exe, gpu, rd, NULL, NULL));
  CHECK(hsa_executable_freeze(exe, NULL));
  hsa_executable_symbol_t sym;
  CHECK(hsa_executable_get_symbol_by_name(exe, "module_fill.kd", &gpu, &sym));
  uint64_t ko;
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &ko));
  int64_t entry_off;
  memcpy(&entry_off, (const void *)(uintptr_t)(ko + 16), 8);
  uint64_t entry = ko + (uint64_t)entry_off;

  hsa_queue_t *q;
  CHECK(hsa_queue_create(gpu, 1024, HSA_QUEUE_TYPE_SINGLE, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));
  hsa_amd_profiling_set_profiler_enabled(q, 1);
  uint64_t dbptr = 0;
  /* hsa_amd_queue_get_info (ROCR 6.2+; the samples mode needs PC sampling,
   * 6.4+): by name, so that the app builds against every runtime */
  hsa_status_t (*qinfo)(hsa_queue_t *, int, void *);
  *(void **)&qinfo = dlsym(RTLD_DEFAULT, "hsa_amd_queue_get_info");
  if (!qinfo) {
    printf("pcs=absent\n");
    return 0;
  }
  CHECK(qinfo(q, 1 /* HSA_AMD_QUEUE_INFO_DOORBELL_ID */, &dbptr));
  uint64_t doorbell = (dbptr >> 3) & 0x3ff;

  /* kernarg: int *p, int v, int n (and room for the hidden arguments) */
  void *kernarg = NULL, *buf = NULL;
  hsa_amd_memory_pool_t pool;
  (void)pool;
  CHECK(hsa_amd_memory_pool_allocate(kernarg_pool(gpu), 4096, 0, &kernarg));
  CHECK(hsa_amd_memory_pool_allocate(kernarg_pool(gpu), (size_t)items * 4 + 4096, 0, &buf));
  hsa_amd_agents_allow_access(1, &gpu, NULL, kernarg);
  hsa_amd_agents_allow_access(1, &gpu, NULL, buf);
  memset(kernarg, 0, 4096);
  memcpy(kernarg, &buf, 8);
  int v = 7, n = (int)items;
  memcpy((char *)kernarg + 8, &v, 4);
  memcpy((char *)kernarg + 12, &n, 4);

  pcs_handle h;
  /* host trap in us, or stochastic in cycles */
  CHECK(tbl.create(gpu, stochastic, stochastic, interval, 1000, 1u << 20, keep_data, NULL, &h));
  CHECK(tbl.start(h));
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  static uint64_t slot[MAX_DISPATCHES], t0[MAX_DISPATCHES], t1[MAX_DISPATCHES];
  for (unsigned i = 0; i < ndisp; i++) {
    hsa_signal_store_screlease(done, 1);
    hsa_kernel_dispatch_packet_t p;
    memset(&p, 0, sizeof p);
    p.header = hdr(HSA_PACKET_TYPE_KERNEL_DISPATCH);
    p.setup = 1;
    p.workgroup_size_x = 64;
    p.workgroup_size_y = p.workgroup_size_z = 1;
    p.grid_size_x = items;
    p.grid_size_y = p.grid_size_z = 1;
    p.kernel_object = ko;
    p.kernarg_address = kernarg;
    p.completion_signal = done;
    slot[i] = hsa_queue_load_write_index_relaxed(q) % q->size;
    submit(q, &p);
    while (hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) != 0) {
    }
    hsa_amd_profiling_dispatch_time_t t;
    CHECK(hsa_amd_profiling_get_dispatch_time(gpu, done, &t));
    t0[i] = t.start, t1[i] = t.end;
  }
  CHECK(tbl.stop(h));
  CHECK(tbl.flush(h));
  CHECK(tbl.destroy(h));

  static size_t per[MAX_DISPATCHES];
  size_t foreign = 0, exec_ones = 0, in_time = 0;
  uint64_t omin = UINT64_MAX, omax = 0, wgmax = 0;
  for (size_t k = 0; k < ngot; k++) {
    const pcs_sample *s = &got[k];
    uint64_t db = (s->correlation_id >> 32) & 0x3ff, idx = s->correlation_id & 0x1ffffff;
    unsigned hit = ndisp;
    /* each dispatch was waited for, so a slot names the last dispatch that
     * used it at the sample's time: match by slot and time */
    uint64_t ts = s->timestamp; /* ROCR translates the ticks to system ns */
    for (unsigned i = 0; i < ndisp; i++)
      if (db == doorbell && slot[i] == idx && ts >= t0[i] && ts <= t1[i]) hit = i;
    if (hit == ndisp) {
      foreign++;
    } else {
      per[hit]++;
      in_time++;
    }
    uint64_t off = s->pc - entry;
    if (s->pc < entry) off = UINT64_MAX;
    if (off < omin) omin = off;
    if (off > omax || off == UINT64_MAX) omax = off;
    if (s->exec_mask == UINT64_MAX) exec_ones++;
    if (s->wg[0] > wgmax) wgmax = s->wg[0];
  }
  printf("samples=%zu lost=%zu callbacks=%zu\n", ngot, nlost, ncallbacks);
  printf("per_dispatch=");
  for (unsigned i = 0; i < ndisp; i++) printf("%s%zu", i ? "," : "", per[i]);
  printf("\nforeign=%zu\n", foreign);
  printf("pc_offset_min=%llu pc_offset_max=%llu\n", (unsigned long long)omin, (unsigned long long)omax);
  printf("exec_ones=%zu wg_max=%llu\n", exec_ones, (unsigned long long)wgmax);
  printf("ts_in_dispatch=%zu\n", in_time);
  if (getenv("HSA_PCS_DEBUG") && ngot)
    fprintf(stderr, "doorbell=%llu ptr=0x%llx first: corr=0x%llx ts=%llu slot0=%llu t0=%llu t1=%llu\n",
            (unsigned long long)doorbell, (unsigned long long)dbptr, (unsigned long long)got[0].correlation_id,
            (unsigned long long)got[0].timestamp, (unsigned long long)slot[0], (unsigned long long)t0[0],
            (unsigned long long)t1[0]);
  printf("dispatch_ns=%llu\n", (unsigned long long)(ndisp ? t1[0] - t0[0] : 0));
  if (stochastic) {
    size_t valid = 0, issued = 0, dual = 0, types[16] = {0}, reasons[8] = {0};
    unsigned wcmin = 64, wcmax = 0;
    for (size_t k = 0; k < ngot; k++) {
      uint32_t d = got[k].snapshot[0], wc = got[k].snapshot[1] & 0x3f;
      if (!(d & 1) || (d >> 26 & 1)) continue;
      valid++;
      if (d >> 2 & 1) dual++;
      if (d >> 1 & 1) {
        issued++;
        types[d >> 3 & 0xf]++;
      } else {
        reasons[d >> 7 & 7]++;
      }
      if (wc < wcmin) wcmin = wc;
      if (wc > wcmax) wcmax = wc;
    }
    printf("valid=%zu issued=%zu dual=%zu\ntypes=", valid, issued, dual);
    const char *sep = "";
    for (int c = 0; c < 16; c++)
      if (types[c]) printf("%s%d:%zu", sep, c, types[c]), sep = ",";
    printf("\nreasons=");
    sep = "";
    for (int c = 0; c < 8; c++)
      if (reasons[c]) printf("%s%d:%zu", sep, c, reasons[c]), sep = ",";
    printf("\nwave_count_min=%u wave_count_max=%u\n", valid ? wcmin : 0, wcmax);
  }
  CHECK(hsa_shut_down());
  return 0;
}

int main(int argc, char **argv) {
  (void)gpu_cb, (void)submit, (void)hdr; /* hsa_app.h's helpers this app does not need */
  int session = argc > 1 && !strcmp(argv[1], "session");
  CHECK(hsa_init());
  *(void **)&tbl.flush = dlsym(RTLD_DEFAULT, "hsa_ven_amd_pcs_flush");
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
  if (argc > 1 && !strcmp(argv[1], "samples")) return samples_mode(argc, argv);
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
