/* Topology: one CPU node (node 0) followed by 1-8 GPU nodes of the configured
 * architecture. Field values are the ones ROCR 5.2.3 asserts on or derives
 * its agent properties from (see docs/virtual-gpu.md, "Topology"). */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>

#include "perfregs.h"
#include "vgpu.h"

/* GbAddrConfig 0x2a114042 is the gfx9 golden value from amdgpu's
 * gfx_v9_0.c (256-byte pipe interleave, which ROCR's image addrlib asserts).
 * SE/SA/CU counts match the AQLprofile golden agents in blocks.json. */
static const struct vgpu_arch arches[] = {
    {"gfx90a", 9, 0, 10, 0x740f, "AMD Instinct MI210", 8, 1, 104, 8, 64, true, 0x2a114042, 9, 32,
     1700, 64ull << 30, &vgpu_perf_gfx90a},
    {"gfx908", 9, 0, 8, 0x738c, "AMD Instinct MI100", 8, 1, 120, 10, 64, true, 0x2a114042, 9, 32,
     1502, 32ull << 30, &vgpu_perf_gfx908},
    {"gfx906", 9, 0, 6, 0x66a1, "AMD Instinct MI50", 4, 1, 60, 10, 64, false, 0x2a114042, 9, 16,
     1725, 16ull << 30, &vgpu_perf_gfx906},
    {"gfx900", 9, 0, 0, 0x6860, "Radeon Instinct MI25", 4, 1, 64, 10, 64, false, 0x2a114042, 9, 16,
     1500, 16ull << 30, &vgpu_perf_gfx900},
    {"gfx1030", 10, 3, 0, 0x73bf, "AMD Radeon RX 6800 XT", 4, 2, 72, 16, 32, false, 0x00000444, 10,
     32, 2250, 16ull << 30, &vgpu_perf_gfx1030},
};

const struct vgpu_arch *vgpu_arch_lookup(const char *name) {
  for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++)
    if (!strcmp(arches[i].name, name)) return &arches[i];
  return NULL;
}

#define LDS_APERTURE 0x1000000000000ull
#define SCRATCH_APERTURE 0x2000000000000ull

static unsigned simd_per_cu(const struct vgpu_arch *a) { return a->gfx_level >= 10 ? 2 : 4; }

unsigned vgpu_node_count(void) { return 1 + vgpu_cfg.gpus; }
bool vgpu_node_is_gpu(uint32_t node) { return node >= 1 && node <= vgpu_cfg.gpus; }

static unsigned cpu_cores(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (unsigned)n : 1;
}

static unsigned gpu_links(void) { return vgpu_cfg.gpus; /* CPU + each peer */ }

HSAKMT_STATUS HSAKMTAPI hsaKmtAcquireSystemProperties(HsaSystemProperties *p) {
  if (!p) return HSAKMT_STATUS_INVALID_PARAMETER;
  memset(p, 0, sizeof *p);
  p->NumNodes = vgpu_node_count();
  p->PlatformOem = 0x414d44; /* "AMD" */
  p->PlatformId = 1;
  p->PlatformRev = 1;
  return HSAKMT_STATUS_SUCCESS;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtReleaseSystemProperties(void) { return HSAKMT_STATUS_SUCCESS; }

static void set_name16(HSAuint16 *dst, const char *s) {
  size_t i = 0;
  for (; s[i] && i < HSA_PUBLIC_NAME_SIZE - 1; i++) dst[i] = (HSAuint16)s[i];
  dst[i] = 0;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtGetNodeProperties(HSAuint32 node, HsaNodeProperties *p) {
  if (!p) return HSAKMT_STATUS_INVALID_PARAMETER;
  if (node >= vgpu_node_count()) return HSAKMT_STATUS_INVALID_NODE_UNIT;
  memset(p, 0, sizeof *p);
  if (node == 0) {
    p->NumCPUCores = cpu_cores();
    p->NumMemoryBanks = 1;
    p->NumCaches = 3;
    p->NumIOLinks = vgpu_cfg.gpus;
    p->CComputeIdLo = 0;
    p->MaxEngineClockMhzCCompute = 3000;
    set_name16(p->MarketingName, "rocprof-go virtual CPU");
    memcpy(p->AMDName, "CPU", 4);
    return HSAKMT_STATUS_SUCCESS;
  }
  const struct vgpu_arch *a = vgpu_cfg.arch;
  unsigned g = node - 1;
  p->NumCPUCores = 0; /* dGPU, not APU */
  p->NumFComputeCores = a->cu * simd_per_cu(a);
  p->NumMemoryBanks = 3;
  p->NumCaches = 2;
  p->NumIOLinks = gpu_links();
  p->FComputeIdLo = 0x80001000u + g * 0x1000u;
  p->Capability.ui32.QueueSizePowerOfTwo = 1;
  p->Capability.ui32.QueueSize32bit = 1;
  p->Capability.ui32.WatchPointsSupported = 1;
  p->Capability.ui32.WatchPointsTotalBits = 2;
  p->Capability.ui32.DoorbellType = 2;
  p->Capability.ui32.SRAM_EDCSupport = a->sramecc;
  p->Capability.ui32.SVMAPISupported = 0;
  p->MaxWavesPerSIMD = a->waves_per_simd;
  p->LDSSizeInKB = 64;
  p->GDSSizeInKB = 0;
  p->WaveFrontSize = a->wave_size;
  p->NumShaderBanks = a->se;
  p->NumArrays = a->sa_per_se;
  p->NumCUPerArray = a->cu / (a->se * a->sa_per_se);
  p->NumSIMDPerCU = simd_per_cu(a);
  p->MaxSlotsScratchCU = 32;
  p->EngineId.ui32.uCode = 60;
  p->EngineId.ui32.Major = a->major;
  p->EngineId.ui32.Minor = a->minor;
  p->EngineId.ui32.Stepping = a->stepping;
  p->VendorId = 0x1002;
  p->DeviceId = a->device_id;
  p->LocationId = (0x10u + g) << 8; /* bus 0x10+g, device 0, function 0 */
  p->LocalMemSize = a->vram_bytes;
  p->MaxEngineClockMhzFCompute = a->max_clock_mhz;
  p->MaxEngineClockMhzCCompute = 3000;
  p->DrmRenderMinor = 128 + (int)g;
  set_name16(p->MarketingName, a->marketing);
  snprintf((char *)p->AMDName, HSA_PUBLIC_NAME_SIZE, "%s", a->name);
  p->uCodeEngineVersions.uCodeSDMA = 8;
  p->HiveID = vgpu_cfg.gpus > 1 ? 0x5647505548495645ull : 0;
  p->NumSdmaEngines = 2;
  p->NumSdmaXgmiEngines = 0;
  p->NumSdmaQueuesPerEngine = 8;
  p->NumCpQueues = 24;
  p->NumGws = 64;
  p->Domain = 0;
  p->UniqueID = 0x76677075000000ull + g + 1;
  p->VGPRSizePerCU = 512 * 1024;
  p->SGPRSizePerCU = 800 * 4 * 4;
  return HSAKMT_STATUS_SUCCESS;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtGetNodeMemoryProperties(HSAuint32 node, HSAuint32 n,
                                                      HsaMemoryProperties *m) {
  if (!m) return HSAKMT_STATUS_INVALID_PARAMETER;
  if (node >= vgpu_node_count()) return HSAKMT_STATUS_INVALID_NODE_UNIT;
  memset(m, 0, sizeof *m * n);
  if (node == 0) {
    if (n >= 1) {
      long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
      m[0].HeapType = HSA_HEAPTYPE_SYSTEM;
      m[0].SizeInBytes = (HSAuint64)pages * (HSAuint64)psz;
      m[0].Width = 64;
      m[0].MemoryClockMax = 3200;
    }
    return HSAKMT_STATUS_SUCCESS;
  }
  const HsaMemoryProperties banks[3] = {
      {.HeapType = HSA_HEAPTYPE_FRAME_BUFFER_PRIVATE,
       .SizeInBytes = vgpu_cfg.arch->vram_bytes,
       .Width = 4096,
       .MemoryClockMax = 1600},
      {.HeapType = HSA_HEAPTYPE_GPU_LDS, .SizeInBytes = 64 * 1024, .VirtualBaseAddress = LDS_APERTURE},
      {.HeapType = HSA_HEAPTYPE_GPU_SCRATCH,
       .SizeInBytes = 4ull << 30,
       .VirtualBaseAddress = SCRATCH_APERTURE},
  };
  for (HSAuint32 i = 0; i < n && i < 3; i++) m[i] = banks[i];
  return HSAKMT_STATUS_SUCCESS;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtGetNodeCacheProperties(HSAuint32 node, HSAuint32 proc, HSAuint32 n,
                                                     HsaCacheProperties *c) {
  if (!c) return HSAKMT_STATUS_INVALID_PARAMETER;
  if (node >= vgpu_node_count()) return HSAKMT_STATUS_INVALID_NODE_UNIT;
  memset(c, 0, sizeof *c * n);
  if (node == 0) {
    /* ROCR's CPU agent refuses to start without cache entries. */
    static const HSAuint32 sizes[3] = {32 * 1024, 512 * 1024, 32 * 1024 * 1024};
    for (HSAuint32 i = 0; i < n && i < 3; i++) {
      c[i].ProcessorIdLow = proc;
      c[i].CacheLevel = i + 1;
      c[i].CacheSize = sizes[i] / 1024; /* KiB, as KFD's sysfs reports */
      c[i].CacheLineSize = 64;
      c[i].CacheLinesPerTag = 1;
      c[i].CacheAssociativity = 8;
      c[i].CacheLatency = 1 + 4 * i;
      c[i].CacheType.ui32.Data = 1;
      c[i].CacheType.ui32.CPU = 1;
      c[i].SiblingMap[0] = 1;
    }
    return HSAKMT_STATUS_SUCCESS;
  }
  for (HSAuint32 i = 0; i < n && i < 2; i++) {
    c[i].ProcessorIdLow = proc;
    c[i].CacheLevel = i + 1;
    c[i].CacheSize = i == 0 ? 16 : 8 * 1024; /* KiB */
    c[i].CacheLineSize = i == 0 ? 64 : 128;
    c[i].CacheLinesPerTag = 1;
    c[i].CacheAssociativity = 16;
    c[i].CacheType.ui32.Data = 1;
    c[i].CacheType.ui32.HSACU = 1;
    c[i].SiblingMap[0] = 1;
  }
  return HSAKMT_STATUS_SUCCESS;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtGetNodeIoLinkProperties(HSAuint32 node, HSAuint32 n,
                                                      HsaIoLinkProperties *l) {
  if (!l) return HSAKMT_STATUS_INVALID_PARAMETER;
  if (node >= vgpu_node_count()) return HSAKMT_STATUS_INVALID_NODE_UNIT;
  memset(l, 0, sizeof *l * n);
  HSAuint32 k = 0;
  for (HSAuint32 to = 0; to < vgpu_node_count() && k < n; to++) {
    if (to == node) continue;
    if (node != 0 && to != 0 && vgpu_cfg.gpus < 2) continue;
    bool xgmi = node != 0 && to != 0;
    l[k].IoLinkType = xgmi ? HSA_IOLINK_TYPE_XGMI : HSA_IOLINKTYPE_PCIEXPRESS;
    l[k].VersionMajor = xgmi ? 1 : 4;
    l[k].NodeFrom = node;
    l[k].NodeTo = to;
    l[k].Weight = xgmi ? 15 : 20;
    l[k].MinimumLatency = xgmi ? 100 : 500;
    l[k].MaximumLatency = xgmi ? 200 : 1000;
    l[k].MinimumBandwidth = xgmi ? 50000 : 16000;
    l[k].MaximumBandwidth = xgmi ? 50000 : 32000;
    l[k].RecTransferSize = 0;
    k++;
  }
  return HSAKMT_STATUS_SUCCESS;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtGetTileConfig(HSAuint32 node, HsaGpuTileConfig *t) {
  if (!t) return HSAKMT_STATUS_INVALID_PARAMETER;
  if (!vgpu_node_is_gpu(node)) return HSAKMT_STATUS_INVALID_NODE_UNIT;
  t->NumTileConfigs = 0;
  t->NumMacroTileConfigs = 0;
  t->GbAddrConfig = vgpu_cfg.arch->gb_addr_config;
  t->NumBanks = 16;
  t->NumRanks = 1;
  return HSAKMT_STATUS_SUCCESS;
}

HSAKMT_STATUS HSAKMTAPI hsaKmtGetClockCounters(HSAuint32 node, HsaClockCounters *c) {
  (void)node;
  if (!c) return HSAKMT_STATUS_INVALID_PARAMETER;
  uint64_t ns = vgpu_now_ns();
  c->GPUClockCounter = ns / VGPU_GPU_TICK_NS;
  c->CPUClockCounter = ns;
  c->SystemClockCounter = ns;
  c->SystemClockFrequencyHz = 1000000000ull;
  return HSAKMT_STATUS_SUCCESS;
}
