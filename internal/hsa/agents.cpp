// agents.cpp: what the shim knows about the agents and their memory pools,
// learned once in OnLoad (agents never change after hsa_init), and the
// agent records every output lists (agent_info.csv, the agent tables).
// Queues, copies, allocations and counters look agents up here.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim_internal.hpp"

namespace {

// ---- agents ---------------------------------------------------------------

const int kMaxAgents = 64;
ShimAgent g_agents[kMaxAgents];
int g_nagents;

const int kMaxPools = 512;
struct PoolNode {
    uint64_t handle;
    uint32_t node;
};
PoolNode g_pools[kMaxPools];
int g_npools;

template <typename T> T agent_info(hsa_agent_t a, int attr)
{
    T v{};
    shim_core.hsa_agent_get_info_fn(a, (hsa_agent_info_t)attr, &v);
    return v;
}

hsa_status_t add_pool(hsa_amd_memory_pool_t p, void *data)
{
    if (g_npools < kMaxPools)
        g_pools[g_npools++] = {p.handle, *(uint32_t *)data};
    return HSA_STATUS_SUCCESS;
}

hsa_status_t add_region(hsa_region_t r, void *data)
{
    if (g_npools < kMaxPools)
        g_pools[g_npools++] = {r.handle, *(uint32_t *)data};
    return HSA_STATUS_SUCCESS;
}

// gfxMmS from the ISA name "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-".
void parse_gfx(const char *isa, uint32_t *major, uint32_t *minor)
{
    const char *g = strstr(isa, "gfx");
    *major = *minor = 0;
    if (!g)
        return;
    g += 3;
    size_t n = 0;
    while (g[n] && g[n] != ':' && g[n] != '-')
        n++;
    if (n < 3)
        return;
    char maj[8] = {0};
    memcpy(maj, g, n - 2 < sizeof maj - 1 ? n - 2 : sizeof maj - 1);
    *major = (uint32_t)strtoul(maj, nullptr, 10);
    auto hex = [](char c) -> uint32_t {
        return c >= '0' && c <= '9' ? (uint32_t)(c - '0') : (uint32_t)((c | 0x20) - 'a' + 10);
    };
    *minor = hex(g[n - 2]) * 16 + hex(g[n - 1]);
}

hsa_status_t add_isa(hsa_isa_t isa, void *data)
{
    uint32_t len = 0;
    if (shim_core.hsa_isa_get_info_alt_fn(isa, HSA_ISA_INFO_NAME_LENGTH, &len) != HSA_STATUS_SUCCESS)
        return HSA_STATUS_SUCCESS;
    char name[256] = {0};
    if (len < sizeof name && shim_core.hsa_isa_get_info_alt_fn(isa, HSA_ISA_INFO_NAME, name) ==
                                 HSA_STATUS_SUCCESS) {
        ShimAgent *a = (ShimAgent *)data;
        parse_gfx(name, &a->gfx_major, &a->gfx_minor);
        return HSA_STATUS_INFO_BREAK;
    }
    return HSA_STATUS_SUCCESS;
}

hsa_status_t add_agent(hsa_agent_t a, void *)
{
    if (g_nagents >= kMaxAgents)
        return HSA_STATUS_INFO_BREAK;
    ShimAgent *s = &g_agents[g_nagents++];
    s->agent = a;
    s->type = agent_info<hsa_device_type_t>(a, HSA_AGENT_INFO_DEVICE);
    s->node = agent_info<uint32_t>(a, HSA_AMD_AGENT_INFO_DRIVER_NODE_ID);
    if (s->type == HSA_DEVICE_TYPE_GPU && shim_core.hsa_agent_iterate_isas_fn)
        shim_core.hsa_agent_iterate_isas_fn(a, add_isa, s);
    if (shim_amd.hsa_amd_agent_iterate_memory_pools_fn)
        shim_amd.hsa_amd_agent_iterate_memory_pools_fn(a, add_pool, &s->node);
    shim_core.hsa_agent_iterate_regions_fn(a, add_region, &s->node);
    return HSA_STATUS_SUCCESS;
}

struct PoolSizes {
    uint64_t group, global;
};

hsa_status_t pool_sizes(hsa_amd_memory_pool_t p, void *data)
{
    PoolSizes *ps = (PoolSizes *)data;
    hsa_amd_segment_t seg;
    size_t size = 0;
    uint32_t flags = 0;
    if (shim_amd.hsa_amd_memory_pool_get_info_fn(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg) != 0)
        return HSA_STATUS_SUCCESS;
    shim_amd.hsa_amd_memory_pool_get_info_fn(p, HSA_AMD_MEMORY_POOL_INFO_SIZE, &size);
    if (seg == HSA_AMD_SEGMENT_GROUP)
        ps->group = size;
    if (seg == HSA_AMD_SEGMENT_GLOBAL) {
        shim_amd.hsa_amd_memory_pool_get_info_fn(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
        if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED) && size > ps->global)
            ps->global = size;
    }
    return HSA_STATUS_SUCCESS;
}

// AMDGPU family ids (amdgpu_drm.h) by gfx major version.
uint64_t family_of(uint32_t major)
{
    static const struct {
        uint32_t major;
        uint64_t family;
    } fam[] = {{8, 130}, {9, 141}, {10, 143}, {11, 145}, {12, 152}};
    for (auto &f : fam)
        if (f.major == major)
            return f.family;
    return 0;
}

void copy_name(char *dst, const char *src)
{
    // As strncpy did (zero padding, always terminated), without its
    // truncation warning (-Werror, mk/shim.mk).
    size_t n = strnlen(src, RPG_AGENT_NAME_LEN - 1);
    memset(dst, 0, RPG_AGENT_NAME_LEN);
    memcpy(dst, src, n);
}

// KFD topology properties ("name value" lines) fill what HSA has no
// attribute for; the names are the record's field names. The directory can
// be redirected for tests (ROCPROF_GO_KFD_TOPOLOGY); on the virtual GPU there
// is none and the HSA-derived values stay.
#define KFD_FIELD(f) {#f, offsetof(rpg_agent_info_rec, f)}
const struct {
    const char *name;
    size_t offset;
} kKfdFields[] = {
    KFD_FIELD(cpu_cores_count), KFD_FIELD(simd_count), KFD_FIELD(cpu_core_id_base),
    KFD_FIELD(simd_id_base), KFD_FIELD(max_waves_per_simd), KFD_FIELD(lds_size_in_kb),
    KFD_FIELD(gds_size_in_kb), KFD_FIELD(num_gws), KFD_FIELD(wave_front_size), KFD_FIELD(num_xcc),
    KFD_FIELD(array_count), KFD_FIELD(simd_arrays_per_engine), KFD_FIELD(cu_per_simd_array),
    KFD_FIELD(simd_per_cu), KFD_FIELD(max_slots_scratch_cu), KFD_FIELD(gfx_target_version),
    KFD_FIELD(vendor_id), KFD_FIELD(device_id), KFD_FIELD(location_id), KFD_FIELD(domain),
    KFD_FIELD(drm_render_minor), KFD_FIELD(num_sdma_engines), KFD_FIELD(num_sdma_xgmi_engines),
    KFD_FIELD(num_sdma_queues_per_engine), KFD_FIELD(num_cp_queues),
    KFD_FIELD(max_engine_clk_ccompute), KFD_FIELD(max_engine_clk_fcompute),
    KFD_FIELD(sdma_fw_version), KFD_FIELD(fw_version), KFD_FIELD(capability),
    KFD_FIELD(local_mem_size), KFD_FIELD(hive_id),
};
#undef KFD_FIELD

bool read_small_file(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    size_t n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = 0;
    return true;
}

void apply_kfd_topology(rpg_agent_info_rec *r, uint32_t node)
{
    const char *root = getenv(RPG_ENV_GO_KFD_TOPOLOGY);
    if (!root || !root[0])
        root = "/sys/class/kfd/kfd/topology";
    char path[512];
    static char buf[8192];
    snprintf(path, sizeof path, "%s/nodes/%u/properties", root, node);
    if (!read_small_file(path, buf, sizeof buf))
        return;
    char *save = nullptr;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(nullptr, "\n", &save)) {
        char *sp = strchr(line, ' ');
        if (!sp)
            continue;
        *sp = 0;
        for (auto &f : kKfdFields)
            if (!strcmp(f.name, line)) {
                uint64_t v = strtoull(sp + 1, nullptr, 10);
                memcpy((char *)r + f.offset, &v, sizeof v);
            }
    }
    snprintf(path, sizeof path, "%s/nodes/%u/gpu_id", root, node);
    if (read_small_file(path, buf, sizeof buf))
        r->gpu_id = strtoull(buf, nullptr, 10);
    if (r->agent_type == RPG_AGENT_GPU && r->simd_arrays_per_engine && r->array_count &&
        !r->num_shader_banks)
        r->num_shader_banks = r->array_count / r->simd_arrays_per_engine;
}

void record_agents_now()
{
    uint64_t per_type[3] = {0, 0, 0};
    for (int i = 0; i < g_nagents; i++) {
        const ShimAgent *s = &g_agents[i];
        hsa_agent_t a = s->agent;
        rpg_agent_info_rec r;
        memset(&r, 0, sizeof r);
        bool gpu = s->type == HSA_DEVICE_TYPE_GPU;
        r.node_id = s->node;
        r.logical_node_id = (uint64_t)i;
        r.agent_type = gpu ? RPG_AGENT_GPU : RPG_AGENT_CPU;
        r.logical_node_type_id = per_type[gpu ? 1 : 0]++;
        uint32_t cus = agent_info<uint32_t>(a, HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT);
        uint32_t clk = agent_info<uint32_t>(a, HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY);
        char buf[64];
        memset(buf, 0, sizeof buf);
        shim_core.hsa_agent_get_info_fn(a, HSA_AGENT_INFO_NAME, buf);
        copy_name(r.name, buf);
        memset(buf, 0, sizeof buf);
        shim_core.hsa_agent_get_info_fn(a, HSA_AGENT_INFO_VENDOR_NAME, buf);
        copy_name(r.vendor_name, buf);
        memset(buf, 0, sizeof buf);
        shim_core.hsa_agent_get_info_fn(a, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_PRODUCT_NAME, buf);
        copy_name(r.product_name, buf);
        r.location_id = agent_info<uint32_t>(a, HSA_AMD_AGENT_INFO_BDFID);
        r.domain = agent_info<uint32_t>(a, HSA_AMD_AGENT_INFO_DOMAIN);
        r.device_id = agent_info<uint32_t>(a, HSA_AMD_AGENT_INFO_CHIP_ID);
        PoolSizes ps{0, 0};
        if (shim_amd.hsa_amd_agent_iterate_memory_pools_fn)
            shim_amd.hsa_amd_agent_iterate_memory_pools_fn(a, pool_sizes, &ps);
        if (!gpu) {
            r.cpu_cores_count = cus;
            r.max_engine_clk_ccompute = clk;
        } else {
            uint32_t simd_per_cu = agent_info<uint32_t>(a, HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU);
            uint32_t waves_cu = agent_info<uint32_t>(a, HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU);
            uint32_t se = agent_info<uint32_t>(a, HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES);
            uint32_t sa = agent_info<uint32_t>(a, HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE);
            r.simd_count = (uint64_t)cus * simd_per_cu;
            r.max_waves_per_simd = simd_per_cu ? waves_cu / simd_per_cu : 0;
            r.lds_size_in_kb = ps.group / 1024;
            r.wave_front_size = agent_info<uint32_t>(a, HSA_AGENT_INFO_WAVEFRONT_SIZE);
            r.num_xcc = shim_agent_num_xcc(a);
            r.cu_count = cus;
            r.array_count = (uint64_t)se * sa;
            r.num_shader_banks = se;
            r.simd_arrays_per_engine = sa;
            r.cu_per_simd_array = se * sa != 0 ? cus / (se * sa) : 0;
            r.simd_per_cu = simd_per_cu;
            r.gfx_target_version = (uint64_t)s->gfx_major * 10000 + (s->gfx_minor >> 4) * 100 +
                                   (s->gfx_minor & 0xf);
            r.vendor_id = 0x1002;
            r.max_engine_clk_fcompute = clk;
            r.cu_per_engine = se ? cus / se : 0;
            r.max_waves_per_cu = waves_cu;
            r.family_id = family_of(s->gfx_major);
            r.workgroup_max_size = agent_info<uint32_t>(a, HSA_AGENT_INFO_WORKGROUP_MAX_SIZE);
            r.grid_max_size = agent_info<uint32_t>(a, HSA_AGENT_INFO_GRID_MAX_SIZE);
            r.local_mem_size = ps.global;
            uint16_t wg[3] = {0, 0, 0};
            shim_core.hsa_agent_get_info_fn(a, HSA_AGENT_INFO_WORKGROUP_MAX_DIM, wg);
            hsa_dim3_t gd{0, 0, 0};
            shim_core.hsa_agent_get_info_fn(a, HSA_AGENT_INFO_GRID_MAX_DIM, &gd);
            r.workgroup_max_dim[0] = wg[0];
            r.workgroup_max_dim[1] = wg[1];
            r.workgroup_max_dim[2] = wg[2];
            r.grid_max_dim[0] = gd.x;
            r.grid_max_dim[1] = gd.y;
            r.grid_max_dim[2] = gd.z;
            snprintf(buf, sizeof buf, "gfx%u%x%x", s->gfx_major, s->gfx_minor >> 4,
                     s->gfx_minor & 0xf);
            copy_name(r.model_name, buf);
        }
        apply_kfd_topology(&r, s->node);
        rpg_record_agent_info(&r);
    }
}

} // namespace

void shim_discover_agents()
{
    g_nagents = 0;
    g_npools = 0;
    shim_core.hsa_iterate_agents_fn(add_agent, nullptr);
}

int shim_agent_count()
{
    return g_nagents;
}

int shim_gpu_agent_count()
{
    int n = 0;
    for (int i = 0; i < g_nagents; i++)
        n += g_agents[i].type == HSA_DEVICE_TYPE_GPU;
    return n;
}

void shim_record_agents()
{
    record_agents_now();
}

const ShimAgent *shim_find_agent(hsa_agent_t a)
{
    for (int i = 0; i < g_nagents; i++)
        if (g_agents[i].agent.handle == a.handle)
            return &g_agents[i];
    return nullptr;
}

const ShimAgent *shim_host_agent()
{
    for (int i = 0; i < g_nagents; i++)
        if (g_agents[i].type == HSA_DEVICE_TYPE_CPU)
            return &g_agents[i];
    return nullptr;
}

uint32_t shim_agent_num_xcc(hsa_agent_t a)
{
    // HSA_AMD_AGENT_INFO_NUM_XCC (hsa_ext_amd.h of ROCm 6.0 and later); the
    // host's 5.2.3 headers the shim is built with do not name it, and ROCR
    // 5.2.3 refuses it (no multi-XCC part runs on it).
    const int kNumXcc = 0xA111;
    uint32_t n = 0;
    if (shim_core.hsa_agent_get_info_fn(a, (hsa_agent_info_t)kNumXcc, &n) != HSA_STATUS_SUCCESS ||
        n == 0)
        return 1;
    return n;
}

uint32_t shim_pool_node(uint64_t handle)
{
    for (int i = 0; i < g_npools; i++)
        if (g_pools[i].handle == handle)
            return g_pools[i].node;
    return UINT32_MAX;
}

