/* Topology: the emulated architectures and the KFD sysfs tree that
 * describes them (node 0 is the real CPU, GPUs follow). The files hold what
 * the kernel's KFD writes there ("name value" lines); every thunk since ROCm
 * 5.2 parses them, ignoring names it does not know, so newer keys
 * (gfx_target_version, num_xcc, ...) are simply there for the runtimes that
 * read them. Values ROCR asserts on are explained in docs/virtual-gpu.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfregs.h"
#include "vgpu.h"

/* libdrm's AMDGPU_FAMILY_* values. */
enum { FAMILY_AI = 141, FAMILY_NV = 143, FAMILY_GC_11_0_0 = 145 };

/* GbAddrConfig 0x2a114042 is the gfx9 golden value from amdgpu's
 * gfx_v9_0.c (256-byte pipe interleave, which ROCR's image addrlib asserts).
 * SE/SA/CU counts match the AQLprofile golden agents in blocks.json; MI300X
 * is 8 XCCs of 4 SEs with 38 of 40 CUs enabled per XCC. */
static const struct vgpu_arch arches[] = {
    {.name = "gfx90a", .major = 9, .minor = 0, .stepping = 10, .device_id = 0x740f,
     .marketing = "AMD Instinct MI210", .asic = "aldebaran", .family_id = FAMILY_AI, .xcc = 1, .se = 8,
     .sa_per_se = 1, .cu = 104, .cu_per_sa_max = 13, .waves_per_simd = 8, .wave_size = 64, .sramecc = true,
     .gb_addr_config = 0x2a114042, .gfx_level = 9, .tcc_instances = 32, .max_clock_mhz = 1700,
     .vram_bytes = 64ull << 30, .perf = &vgpu_perf_gfx90a},
    {.name = "gfx908", .major = 9, .minor = 0, .stepping = 8, .device_id = 0x738c,
     .marketing = "AMD Instinct MI100", .asic = "arcturus", .family_id = FAMILY_AI, .xcc = 1, .se = 8,
     .sa_per_se = 1, .cu = 120, .cu_per_sa_max = 15, .waves_per_simd = 10, .wave_size = 64, .sramecc = true,
     .gb_addr_config = 0x2a114042, .gfx_level = 9, .tcc_instances = 32, .max_clock_mhz = 1502,
     .vram_bytes = 32ull << 30, .perf = &vgpu_perf_gfx908},
    {.name = "gfx906", .major = 9, .minor = 0, .stepping = 6, .device_id = 0x66a1,
     .marketing = "AMD Instinct MI50", .asic = "vega20", .family_id = FAMILY_AI, .xcc = 1, .se = 4,
     .sa_per_se = 1, .cu = 60, .cu_per_sa_max = 15, .waves_per_simd = 10, .wave_size = 64, .sramecc = false,
     .gb_addr_config = 0x2a114042, .gfx_level = 9, .tcc_instances = 16, .max_clock_mhz = 1725,
     .vram_bytes = 16ull << 30, .perf = &vgpu_perf_gfx906},
    {.name = "gfx900", .major = 9, .minor = 0, .stepping = 0, .device_id = 0x6860,
     .marketing = "Radeon Instinct MI25", .asic = "vega10", .family_id = FAMILY_AI, .xcc = 1, .se = 4,
     .sa_per_se = 1, .cu = 64, .cu_per_sa_max = 16, .waves_per_simd = 10, .wave_size = 64, .sramecc = false,
     .gb_addr_config = 0x2a114042, .gfx_level = 9, .tcc_instances = 16, .max_clock_mhz = 1500,
     .vram_bytes = 16ull << 30, .perf = &vgpu_perf_gfx900},
    {.name = "gfx942", .major = 9, .minor = 4, .stepping = 2, .device_id = 0x74a1,
     .marketing = "AMD Instinct MI300X", .asic = "ip discovery", .family_id = FAMILY_AI, .xcc = 8, .se = 32,
     .sa_per_se = 1, .cu = 304, .cu_per_sa_max = 10, .waves_per_simd = 8, .wave_size = 64, .sramecc = true,
     .gb_addr_config = 0x2a114042, .gfx_level = 9, .tcc_instances = 16, .max_clock_mhz = 2100,
     .vram_bytes = 192ull << 30, .perf = &vgpu_perf_gfx942},
    {.name = "gfx1030", .major = 10, .minor = 3, .stepping = 0, .device_id = 0x73bf,
     .marketing = "AMD Radeon RX 6800 XT", .asic = "sienna_cichlid", .family_id = FAMILY_NV, .xcc = 1, .se = 4,
     .sa_per_se = 2, .cu = 72, .cu_per_sa_max = 10, .waves_per_simd = 16, .wave_size = 32, .sramecc = false,
     .gb_addr_config = 0x00000444, .gfx_level = 10, .tcc_instances = 16, .max_clock_mhz = 2250,
     .vram_bytes = 16ull << 30, .perf = &vgpu_perf_gfx1030},
    {.name = "gfx1100", .major = 11, .minor = 0, .stepping = 0, .device_id = 0x744c,
     .marketing = "AMD Radeon RX 7900 XTX", .asic = "ip discovery", .family_id = FAMILY_GC_11_0_0, .xcc = 1,
     .se = 6, .sa_per_se = 2, .cu = 96, .cu_per_sa_max = 8, .waves_per_simd = 16, .wave_size = 32,
     .sramecc = false, .gb_addr_config = 0x00000545, .gfx_level = 11, .tcc_instances = 24,
     .max_clock_mhz = 2500, .vram_bytes = 24ull << 30, .perf = &vgpu_perf_gfx1100},
};

const struct vgpu_arch *vgpu_arch_lookup(const char *name) {
  for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++)
    if (!strcmp(arches[i].name, name)) return &arches[i];
  return NULL;
}

const struct vgpu_arch *vgpu_arch_at(size_t i) { return i < sizeof arches / sizeof arches[0] ? &arches[i] : NULL; }

const char *vgpu_arch_names(void) {
  static char buf[256];
  if (!buf[0]) {
    size_t o = 0;
    for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++)
      o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s%s", i ? ", " : "", arches[i].name,
                            i ? "" : " (default)");
  }
  return buf;
}

unsigned vgpu_simd_per_cu(const struct vgpu_arch *a) { return a->gfx_level >= 10 ? 2 : 4; }

/* KFD gpu_ids are 16-bit hashes of the device; any stable nonzero value
 * distinct per GPU serves (they end up in mmap offsets, bits 46..61). */
uint32_t vgpu_gpu_id(unsigned gpu) { return 0x3e10u + gpu * 0x1111u; }

int vgpu_gpu_index(uint32_t gpu_id) {
  for (unsigned g = 0; g < vgpu_cfg.gpus; g++)
    if (vgpu_gpu_id(g) == gpu_id) return (int)g;
  return -1;
}

unsigned vgpu_render_minor(unsigned gpu) { return 128 + gpu; }

/* --- the sysfs tree ------------------------------------------------------------
 * Built in memory first so that its hash names the cache directory
 * (sysfs.c) and a change of configuration or machine gets a new tree. */

struct tree {
  int dirfd; /* -1: hashing only */
  uint64_t hash;
  int err;
};

static void fnv(uint64_t *h, const char *s) {
  for (; *s; s++) *h = (*h ^ (uint8_t)*s) * 0x100000001b3ull;
  *h = (*h ^ 0xff) * 0x100000001b3ull; /* separator */
}

static int mkdirs(int dirfd, const char *rel) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", rel);
  for (char *p = buf; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    if (mkdirat(dirfd, buf, 0700) && errno != EEXIST) return -1;
    *p = '/';
  }
  return 0;
}

static void emit(struct tree *t, const char *rel, const char *content) {
  fnv(&t->hash, rel);
  fnv(&t->hash, content);
  if (t->dirfd < 0 || t->err) return;
  if (mkdirs(t->dirfd, rel)) {
    t->err = errno;
    return;
  }
  size_t n = strlen(rel);
  if (n && rel[n - 1] == '/') return; /* an empty directory */
  int fd = openat(t->dirfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    t->err = errno;
    return;
  }
  size_t len = strlen(content);
  if (write(fd, content, len) != (ssize_t)len) t->err = errno ? errno : EIO;
  close(fd);
}

/* A symbolic link at rel pointing to target (relative to the link's
 * directory, so it resolves inside the tree wherever the tree is). */
static void emit_link(struct tree *t, const char *rel, const char *target) {
  fnv(&t->hash, rel);
  fnv(&t->hash, target);
  if (t->dirfd < 0 || t->err) return;
  if (mkdirs(t->dirfd, rel) || symlinkat(target, t->dirfd, rel)) t->err = errno;
}

/* A growing text buffer for one properties file. */
struct props {
  char buf[4096];
  size_t n;
};

static void prop(struct props *p, const char *name, unsigned long long v) {
  p->n += (size_t)snprintf(p->buf + p->n, sizeof p->buf - p->n, "%s %llu\n", name, v);
}

static void emitf(struct tree *t, const char *content, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void emitf(struct tree *t, const char *content, const char *fmt, ...) {
  char rel[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rel, sizeof rel, fmt, ap);
  va_end(ap);
  emit(t, rel, content);
}

#define TOPO "kfd/kfd/topology"

static unsigned online_cpus(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (unsigned)n : 1;
}

static unsigned long long system_ram(void) {
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  return pages > 0 && psz > 0 ? (unsigned long long)pages * (unsigned long long)psz : 1ull << 34;
}

/* HSA_CAP_* bits of the KFD node "capability" property. */
enum {
  CAP_QUEUE_SIZE_POW2 = 1u << 3,
  CAP_QUEUE_SIZE_32BIT = 1u << 4,
  CAP_WATCH_POINTS_SUPPORTED = 1u << 7,
  CAP_WATCH_POINTS_TOTALBITS_SHIFT = 8,
  CAP_DOORBELL_TYPE_SHIFT = 12, /* 2: 64-bit AQL doorbells (gfx9 and later) */
  CAP_SRAM_EDCSUPPORTED = 1u << 26,
  CAP_TRAP_DEBUG_FIRMWARE_SUPPORTED = 1u << 29, /* the thunks of ROCR 6.1+ then call RUNTIME_ENABLE */
};

/* CRAT I/O link types and flags. */
enum { IOLINK_PCIE = 2, IOLINK_XGMI = 11, IOLINK_ENABLED = 1 };

static void iolink(struct tree *t, unsigned node, unsigned idx, unsigned to) {
  bool xgmi = node && to;
  struct props p = {.n = 0};
  prop(&p, "type", xgmi ? IOLINK_XGMI : IOLINK_PCIE);
  prop(&p, "version_major", xgmi ? 1 : 4);
  prop(&p, "version_minor", 0);
  prop(&p, "node_from", node);
  prop(&p, "node_to", to);
  prop(&p, "weight", xgmi ? 15 : 20);
  prop(&p, "min_latency", xgmi ? 100 : 500);
  prop(&p, "max_latency", xgmi ? 200 : 1000);
  prop(&p, "min_bandwidth", xgmi ? 50000 : 16000);
  prop(&p, "max_bandwidth", xgmi ? 50000 : 32000);
  prop(&p, "recommended_transfer_size", 0);
  prop(&p, "recommended_sdma_engine_id_mask", 0);
  prop(&p, "flags", IOLINK_ENABLED);
  emitf(t, p.buf, TOPO "/nodes/%u/io_links/%u/properties", node, idx);
}

/* HSA_CACHE_TYPE_* bits of a cache's "type" property. */
enum { CACHE_DATA = 1, CACHE_INSTRUCTION = 2, CACHE_CPU = 4, CACHE_HSACU = 8 };

/* The CPU node's caches, which the CPU node lists itself rather than leave
 * to /sys/devices/system/cpu/cpuN/cache: ROCm 5.2's thunk reads that
 * directory when the KFD node lists no cache and fails topology (so hsa_init)
 * where it is missing, as on many KVM guests, microVMs and containers. The
 * figures are a generic server core's, the same on every host (the
 * profiler reads none of them): per CPU an L1 data, an L1 instruction and an
 * L2 cache, and one L3 shared by all. docs/virtual-gpu.md lists what the
 * thunks read about the CPU. */
struct cpu_cache {
  unsigned level, kib, ways, type;
  bool shared;
};
static const struct cpu_cache cpu_caches[] = {
    {1, 32, 8, CACHE_CPU | CACHE_DATA, false},
    {1, 32, 8, CACHE_CPU | CACHE_INSTRUCTION, false},
    {2, 1024, 8, CACHE_CPU | CACHE_DATA | CACHE_INSTRUCTION, false},
    {3, 32768, 16, CACHE_CPU | CACHE_DATA | CACHE_INSTRUCTION, true},
};
enum { CPU_SIBLINGS_MAX = 256 }; /* the thunks' HSA_CPU_SIBLINGS */

/* cpu_cache_props writes cache c of CPU cpu (the first of those sharing
 * it) as cache number idx of node 0. */
static void cpu_cache_props(struct tree *t, const struct cpu_cache *c, unsigned cpu, unsigned cpus, unsigned idx) {
  struct props p = {.n = 0};
  prop(&p, "processor_id_low", cpu);
  prop(&p, "level", c->level);
  prop(&p, "size", c->kib);
  prop(&p, "cache_line_size", 64);
  prop(&p, "cache_lines_per_tag", 1);
  prop(&p, "association", c->ways);
  prop(&p, "latency", 0);
  prop(&p, "type", c->type);
  /* sibling_map: one 0/1 per CPU, comma separated, as KFD writes it. */
  p.n += (size_t)snprintf(p.buf + p.n, sizeof p.buf - p.n, "sibling_map ");
  unsigned n = cpus < CPU_SIBLINGS_MAX ? cpus : CPU_SIBLINGS_MAX;
  for (unsigned i = 0; i < n && p.n + 3 < sizeof p.buf; i++)
    p.n += (size_t)snprintf(p.buf + p.n, sizeof p.buf - p.n, "%s%d", i ? "," : "", c->shared || i == cpu);
  p.n += (size_t)snprintf(p.buf + p.n, sizeof p.buf - p.n, "\n");
  emitf(t, p.buf, TOPO "/nodes/0/caches/%u/properties", idx);
}

/* cpu_node_caches writes the CPU node's caches and returns their number. */
static unsigned cpu_node_caches(struct tree *t, unsigned cpus) {
  unsigned idx = 0;
  for (size_t k = 0; k < sizeof cpu_caches / sizeof cpu_caches[0]; k++) {
    const struct cpu_cache *c = &cpu_caches[k];
    for (unsigned cpu = 0; cpu < (c->shared ? 1 : cpus); cpu++) cpu_cache_props(t, c, cpu, cpus, idx++);
  }
  return idx;
}

static unsigned cpu_node_cache_count(unsigned cpus) {
  unsigned n = 0;
  for (size_t k = 0; k < sizeof cpu_caches / sizeof cpu_caches[0]; k++) n += cpu_caches[k].shared ? 1 : cpus;
  return n;
}

static void cpu_node(struct tree *t) {
  unsigned gpus = vgpu_cfg.gpus, cpus = online_cpus();
  bool host_caches = vgpu_cfg.topology_fault == VGPU_FAULT_HOST_CPU_CACHES;
  struct props p = {.n = 0};
  prop(&p, "cpu_cores_count", cpus);
  prop(&p, "simd_count", 0);
  prop(&p, "mem_banks_count", 1);
  prop(&p, "caches_count", host_caches ? 0 : cpu_node_cache_count(cpus));
  prop(&p, "io_links_count", gpus);
  prop(&p, "p2p_links_count", 0);
  prop(&p, "cpu_core_id_base", 0);
  prop(&p, "simd_id_base", 0);
  prop(&p, "max_waves_per_simd", 0);
  prop(&p, "lds_size_in_kb", 0);
  prop(&p, "gds_size_in_kb", 0);
  prop(&p, "num_gws", 0);
  prop(&p, "wave_front_size", 0);
  prop(&p, "array_count", 0);
  prop(&p, "simd_arrays_per_engine", 0);
  prop(&p, "cu_per_simd_array", 0);
  prop(&p, "simd_per_cu", 0);
  prop(&p, "max_slots_scratch_cu", 0);
  prop(&p, "gfx_target_version", 0);
  prop(&p, "vendor_id", 0);
  prop(&p, "device_id", 0);
  prop(&p, "location_id", 0);
  prop(&p, "domain", 0);
  prop(&p, "drm_render_minor", 0);
  prop(&p, "hive_id", 0);
  prop(&p, "num_sdma_engines", 0);
  prop(&p, "num_sdma_xgmi_engines", 0);
  prop(&p, "num_sdma_queues_per_engine", 0);
  prop(&p, "num_cp_queues", 0);
  prop(&p, "max_engine_clk_ccompute", 3000);
  emit(t, TOPO "/nodes/0/properties", p.buf);
  emit(t, TOPO "/nodes/0/gpu_id", "0\n");
  emit(t, TOPO "/nodes/0/name", "\n");
  struct props m = {.n = 0};
  prop(&m, "heap_type", 0); /* HSA_HEAPTYPE_SYSTEM */
  prop(&m, "size_in_bytes", system_ram());
  prop(&m, "flags", 0);
  prop(&m, "width", 64);
  prop(&m, "mem_clk_max", 3200);
  emit(t, TOPO "/nodes/0/mem_banks/0/properties", m.buf);
  if (host_caches)
    emit(t, TOPO "/nodes/0/caches/", "");
  else
    cpu_node_caches(t, cpus);
  emit(t, TOPO "/nodes/0/p2p_links/", "");
  for (unsigned g = 0; g < gpus; g++) iolink(t, 0, g, g + 1);
  if (!gpus) emit(t, TOPO "/nodes/0/io_links/", "");
}

static void gpu_node(struct tree *t, unsigned g) {
  const struct vgpu_arch *a = vgpu_cfg.arch;
  unsigned node = g + 1, gpus = vgpu_cfg.gpus;
  unsigned simd = vgpu_simd_per_cu(a);
  unsigned links = 1 + (gpus > 1 ? gpus - 1 : 0);
  struct props p = {.n = 0};
  prop(&p, "cpu_cores_count", 0); /* 0: a discrete GPU, not an APU */
  prop(&p, "simd_count", (unsigned long long)a->cu * simd);
  prop(&p, "mem_banks_count", 1);
  prop(&p, "caches_count", 2);
  prop(&p, "io_links_count", links);
  prop(&p, "p2p_links_count", 0);
  prop(&p, "cpu_core_id_base", 0);
  prop(&p, "simd_id_base", 0x80001000ull + g * 0x1000ull);
  prop(&p, "max_waves_per_simd", a->waves_per_simd);
  prop(&p, "lds_size_in_kb", 64);
  prop(&p, "gds_size_in_kb", 0);
  prop(&p, "num_gws", 64); /* cooperative launches need GWS */
  prop(&p, "wave_front_size", a->wave_size);
  prop(&p, "array_count", (unsigned long long)a->se * a->sa_per_se);
  prop(&p, "simd_arrays_per_engine", a->sa_per_se);
  prop(&p, "cu_per_simd_array", a->cu_per_sa_max);
  prop(&p, "simd_per_cu", simd);
  prop(&p, "max_slots_scratch_cu", 32);
  prop(&p, "gfx_target_version", a->major * 10000ull + a->minor * 100ull + a->stepping);
  prop(&p, "vendor_id", 0x1002);
  prop(&p, "device_id", a->device_id);
  prop(&p, "location_id", (0x10u + g) << 8); /* bus 0x10+g, device 0, function 0 */
  prop(&p, "domain", 0);
  prop(&p, "drm_render_minor", vgpu_render_minor(g));
  prop(&p, "hive_id", gpus > 1 ? 0x5647505548495645ull : 0);
  prop(&p, "num_sdma_engines", 2);
  prop(&p, "num_sdma_xgmi_engines", gpus > 1 ? 2 : 0);
  prop(&p, "num_sdma_queues_per_engine", 8);
  prop(&p, "num_cp_queues", 24);
  prop(&p, "num_xcc", a->xcc);
  prop(&p, "max_engine_clk_fcompute", a->max_clock_mhz);
  prop(&p, "local_mem_size", a->vram_bytes);
  prop(&p, "fw_version", 60);
  prop(&p, "capability",
       CAP_QUEUE_SIZE_POW2 | CAP_QUEUE_SIZE_32BIT | CAP_WATCH_POINTS_SUPPORTED |
           (2u << CAP_WATCH_POINTS_TOTALBITS_SHIFT) | (2u << CAP_DOORBELL_TYPE_SHIFT) |
           CAP_TRAP_DEBUG_FIRMWARE_SUPPORTED | (a->sramecc ? CAP_SRAM_EDCSUPPORTED : 0));
  prop(&p, "debug_prop", 0);
  prop(&p, "sdma_fw_version", 8);
  prop(&p, "unique_id", 0x76677075000000ull + g + 1);
  prop(&p, "max_engine_clk_ccompute", 3000);
  emitf(t, p.buf, TOPO "/nodes/%u/properties", node);
  char v[64];
  snprintf(v, sizeof v, "%u\n", vgpu_gpu_id(g));
  emitf(t, v, TOPO "/nodes/%u/gpu_id", node);
  snprintf(v, sizeof v, "%s\n", a->asic);
  emitf(t, v, TOPO "/nodes/%u/name", node);

  struct props m = {.n = 0};
  prop(&m, "heap_type", 2); /* HSA_HEAPTYPE_FRAME_BUFFER_PRIVATE */
  prop(&m, "size_in_bytes", a->vram_bytes);
  prop(&m, "flags", 0);
  prop(&m, "width", 4096);
  prop(&m, "mem_clk_max", 1600);
  emitf(t, m.buf, TOPO "/nodes/%u/mem_banks/0/properties", node);

  /* Data + HSACU: ROCR asserts on GPU cache info without HSACU. */
  for (unsigned c = 0; c < 2; c++) {
    struct props cp = {.n = 0};
    prop(&cp, "processor_id_low", 0x80001000ull + g * 0x1000ull);
    prop(&cp, "level", c + 1);
    prop(&cp, "size", c == 0 ? 16 : 8192); /* KiB */
    prop(&cp, "cache_line_size", c == 0 ? 64 : 128);
    prop(&cp, "cache_lines_per_tag", 1);
    prop(&cp, "association", 16);
    prop(&cp, "latency", 1);
    prop(&cp, "type", CACHE_DATA | CACHE_HSACU);
    cp.n += (size_t)snprintf(cp.buf + cp.n, sizeof cp.buf - cp.n, "sibling_map 1\n");
    emitf(t, cp.buf, TOPO "/nodes/%u/caches/%u/properties", node, c);
  }
  unsigned k = 0;
  iolink(t, node, k++, 0);
  for (unsigned peer = 1; peer <= gpus && gpus > 1; peer++)
    if (peer != node) iolink(t, node, k++, peer);
  emitf(t, "", TOPO "/nodes/%u/p2p_links/", node);
}

/* The GPU's DRM and PCI side of sysfs, as amdgpu and the PCI core lay it
 * out, for the libraries that find GPUs there rather than in KFD's
 * topology: ROCm SMI (rocblas-bench, RCCL) lists /sys/class/drm/card*,
 * checks device/vendor, reads the bus address from the link's target
 * (ROCm SMI 6.x) or finds cardN under renderD<minor>/device/drm (7.x), and
 * matches it with the KFD node's domain and location_id. Every link is
 * relative, so it resolves inside the tree. */
static void drm_device(struct tree *t, unsigned g) {
  const struct vgpu_arch *a = vgpu_cfg.arch;
  char pci[64], rel[192], target[192], v[64];
  unsigned minor = vgpu_render_minor(g);
  /* 0000:BB:00.0 with BB = 0x10+g, the KFD node's location_id. */
  snprintf(pci, sizeof pci, "devices/pci0000:00/0000:%02x:00.0", 0x10u + g);
  snprintf(v, sizeof v, "0x%04x\n", 0x1002u);
  emitf(t, v, "%s/vendor", pci);
  emitf(t, v, "%s/subsystem_vendor", pci);
  snprintf(v, sizeof v, "0x%04x\n", a->device_id);
  emitf(t, v, "%s/device", pci);
  emitf(t, v, "%s/subsystem_device", pci);
  emitf(t, "0x00\n", "%s/revision", pci);
  emitf(t, "0x038000\n", "%s/class", pci); /* display controller, as Instinct parts report */
  snprintf(v, sizeof v, "%llx\n", 0x76677075000000ull + g + 1); /* the KFD node's unique_id */
  emitf(t, v, "%s/unique_id", pci);
  emitf(t, "SPX\n", "%s/current_compute_partition", pci);
  emitf(t, "NPS1\n", "%s/current_memory_partition", pci);
  snprintf(v, sizeof v, "%u\n", 0u);
  emitf(t, v, "%s/numa_node", pci);
  const char *names[2] = {"card", "renderD"};
  unsigned minors[2] = {g, minor};
  for (int k = 0; k < 2; k++) {
    snprintf(rel, sizeof rel, "%s/drm/%s%u/device", pci, names[k], minors[k]);
    emit_link(t, rel, "../..");
    snprintf(rel, sizeof rel, "class-drm/%s%u", names[k], minors[k]);
    snprintf(target, sizeof target, "../%s/drm/%s%u", pci, names[k], minors[k]);
    emit_link(t, rel, target);
  }
}

static void build(struct tree *t) {
  emit(t, TOPO "/generation_id", "1\n");
  struct props s = {.n = 0};
  prop(&s, "platform_oem", 0x414d44); /* "AMD" */
  prop(&s, "platform_id", 1);
  prop(&s, "platform_rev", 1);
  emit(t, TOPO "/system_properties", s.buf);
  cpu_node(t);
  for (unsigned g = 0; g < vgpu_cfg.gpus; g++) gpu_node(t, g);
  for (unsigned g = 0; g < vgpu_cfg.gpus; g++) drm_device(t, g);
  /* rocminfo looks for a live amdgpu driver: ROCm 5.2's through
   * "lsmod | grep amdgpu" (libkmod reads /proc/modules, then
   * /sys/module/amdgpu), later ones in /sys/module/amdgpu/initstate. */
  emit(t, "module/initstate", "live\n");
  emit(t, "module/refcnt", "0\n");
  emit(t, "module/holders/", "");
  emit(t, "proc-modules", "amdgpu 16777216 0 - Live 0x0000000000000000\n");
}

uint64_t vgpu_topology_hash(void) {
  struct tree t = {.dirfd = -1, .hash = 0xcbf29ce484222325ull};
  build(&t);
  return t.hash;
}

int vgpu_topology_write(int dirfd) {
  struct tree t = {.dirfd = dirfd, .hash = 0xcbf29ce484222325ull};
  build(&t);
  errno = t.err;
  return t.err ? -1 : 0;
}
