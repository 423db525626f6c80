/*
 * agentinfo.c: an agent's AGENT_INFO record (agentinfo.h), for the shim
 * (agents.cpp) and the preload library's attach mode (preload/attach_hsa.c
 * compiles this file in).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentinfo.h"

/* hsa.h's and hsa_ext_amd.h's attribute numbers. */
enum {
    AGI_NAME = 0,
    AGI_VENDOR_NAME = 1,
    AGI_WAVEFRONT_SIZE = 6,
    AGI_WORKGROUP_MAX_DIM = 7,
    AGI_WORKGROUP_MAX_SIZE = 8,
    AGI_GRID_MAX_DIM = 9,
    AGI_GRID_MAX_SIZE = 10,
    AGI_CHIP_ID = 0xA000,
    AGI_COMPUTE_UNIT_COUNT = 0xA002,
    AGI_MAX_CLOCK_FREQUENCY = 0xA003,
    AGI_BDFID = 0xA006,
    AGI_PRODUCT_NAME = 0xA009,
    AGI_MAX_WAVES_PER_CU = 0xA00A,
    AGI_NUM_SIMDS_PER_CU = 0xA00B,
    AGI_NUM_SHADER_ENGINES = 0xA00C,
    AGI_NUM_SHADER_ARRAYS_PER_SE = 0xA00D,
    AGI_DOMAIN = 0xA00F,
    /* HSA_AMD_AGENT_INFO_NUM_XCC: ROCm 6.0 and later (the host's 5.2.3
     * headers do not name it and ROCR 5.2.3 refuses it: one XCC). */
    AGI_NUM_XCC = 0xA111,
    AGI_POOL_SEGMENT = 0,
    AGI_POOL_GLOBAL_FLAGS = 1,
    AGI_POOL_SIZE = 2,
    AGI_SEGMENT_GLOBAL = 0,
    AGI_SEGMENT_GROUP = 3,
    AGI_POOL_FLAG_COARSE = 4,
};

typedef struct agi_pools {
    const rpg_agent_source *src;
    uint64_t group, global; /* the group segment's size, the largest coarse-grained global pool */
} agi_pools;

static int agi_add_pool(uint64_t p, void *data)
{
    agi_pools *ps = data;
    uint32_t seg = 0, flags = 0;
    size_t size = 0;
    if (ps->src->pool_get_info(p, AGI_POOL_SEGMENT, &seg) != 0)
        return 0;
    ps->src->pool_get_info(p, AGI_POOL_SIZE, &size);
    if (seg == AGI_SEGMENT_GROUP)
        ps->group = size;
    if (seg == AGI_SEGMENT_GLOBAL) {
        ps->src->pool_get_info(p, AGI_POOL_GLOBAL_FLAGS, &flags);
        if ((flags & AGI_POOL_FLAG_COARSE) && size > ps->global)
            ps->global = size;
    }
    return 0;
}

static uint32_t agi_u32(const rpg_agent_source *src, uint64_t a, int attr)
{
    uint32_t v = 0;
    src->agent_get_info(a, attr, &v);
    return v;
}

/* As strncpy did (zero padding, always terminated), without its truncation
 * warning (-Werror). */
static void agi_copy_name(char *dst, const char *src)
{
    size_t n = strnlen(src, RPG_AGENT_NAME_LEN - 1);
    memset(dst, 0, RPG_AGENT_NAME_LEN);
    memcpy(dst, src, n);
}

/* AMDGPU family ids (amdgpu_drm.h) by gfx major version. */
static uint64_t agi_family_of(uint32_t major)
{
    static const struct {
        uint32_t major;
        uint64_t family;
    } fam[] = {{8, 130}, {9, 141}, {10, 143}, {11, 145}, {12, 152}};
    for (size_t i = 0; i < sizeof fam / sizeof fam[0]; i++)
        if (fam[i].major == major)
            return fam[i].family;
    return 0;
}

/* KFD topology properties ("name value" lines) fill what HSA has no
 * attribute for; the names are the record's field names. The directory can
 * be redirected for tests (ROCPROF_GO_KFD_TOPOLOGY); on the virtual GPU there
 * is none and the HSA-derived values stay. */
#define KFD_FIELD(f) {#f, offsetof(rpg_agent_info_rec, f)}
static const struct {
    const char *name;
    size_t offset;
} agi_kfd_fields[] = {
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

static int agi_read_small_file(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = 0;
    return 1;
}

static void agi_apply_kfd_topology(rpg_agent_info_rec *r, const char *root, uint32_t node)
{
    if (!root || !root[0])
        root = "/sys/class/kfd/kfd/topology";
    char path[512];
    static char buf[8192];
    snprintf(path, sizeof path, "%s/nodes/%u/properties", root, node);
    if (!agi_read_small_file(path, buf, sizeof buf))
        return;
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *sp = strchr(line, ' ');
        if (!sp)
            continue;
        *sp = 0;
        for (size_t i = 0; i < sizeof agi_kfd_fields / sizeof agi_kfd_fields[0]; i++)
            if (!strcmp(agi_kfd_fields[i].name, line)) {
                uint64_t v = strtoull(sp + 1, NULL, 10);
                memcpy((char *)r + agi_kfd_fields[i].offset, &v, sizeof v);
            }
    }
    snprintf(path, sizeof path, "%s/nodes/%u/gpu_id", root, node);
    if (agi_read_small_file(path, buf, sizeof buf))
        r->gpu_id = strtoull(buf, NULL, 10);
    if (r->agent_type == RPG_AGENT_GPU && r->simd_arrays_per_engine && r->array_count &&
        !r->num_shader_banks)
        r->num_shader_banks = r->array_count / r->simd_arrays_per_engine;
}

static uint32_t agi_hex(char c)
{
    return c >= '0' && c <= '9' ? (uint32_t)(c - '0') : (uint32_t)((c | 0x20) - 'a' + 10);
}

void rpg_agent_parse_gfx(const char *isa, uint32_t *major, uint32_t *minor)
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
    *major = (uint32_t)strtoul(maj, NULL, 10);
    *minor = agi_hex(g[n - 2]) * 16 + agi_hex(g[n - 1]);
}

void rpg_agent_info_fill(rpg_agent_info_rec *r, const rpg_agent_source *src,
                         const rpg_agent_desc *s)
{
    uint64_t a = s->handle;
    memset(r, 0, sizeof *r);
    r->node_id = s->node;
    r->logical_node_id = s->logical_node_id;
    r->agent_type = s->gpu ? RPG_AGENT_GPU : RPG_AGENT_CPU;
    r->logical_node_type_id = s->logical_node_type_id;
    uint32_t cus = agi_u32(src, a, AGI_COMPUTE_UNIT_COUNT);
    uint32_t clk = agi_u32(src, a, AGI_MAX_CLOCK_FREQUENCY);
    char buf[64];
    memset(buf, 0, sizeof buf);
    src->agent_get_info(a, AGI_NAME, buf);
    agi_copy_name(r->name, buf);
    memset(buf, 0, sizeof buf);
    src->agent_get_info(a, AGI_VENDOR_NAME, buf);
    agi_copy_name(r->vendor_name, buf);
    memset(buf, 0, sizeof buf);
    src->agent_get_info(a, AGI_PRODUCT_NAME, buf);
    agi_copy_name(r->product_name, buf);
    r->location_id = agi_u32(src, a, AGI_BDFID);
    r->domain = agi_u32(src, a, AGI_DOMAIN);
    r->device_id = agi_u32(src, a, AGI_CHIP_ID);
    agi_pools ps = {src, 0, 0};
    if (src->iterate_pools && src->pool_get_info)
        src->iterate_pools(a, agi_add_pool, &ps);
    if (!s->gpu) {
        r->cpu_cores_count = cus;
        r->max_engine_clk_ccompute = clk;
    } else {
        uint32_t simd_per_cu = agi_u32(src, a, AGI_NUM_SIMDS_PER_CU);
        uint32_t waves_cu = agi_u32(src, a, AGI_MAX_WAVES_PER_CU);
        uint32_t se = agi_u32(src, a, AGI_NUM_SHADER_ENGINES);
        uint32_t sa = agi_u32(src, a, AGI_NUM_SHADER_ARRAYS_PER_SE);
        uint32_t xcc = 0;
        if (src->agent_get_info(a, AGI_NUM_XCC, &xcc) != 0 || xcc == 0)
            xcc = 1;
        r->simd_count = (uint64_t)cus * simd_per_cu;
        r->max_waves_per_simd = simd_per_cu ? waves_cu / simd_per_cu : 0;
        r->lds_size_in_kb = ps.group / 1024;
        r->wave_front_size = agi_u32(src, a, AGI_WAVEFRONT_SIZE);
        r->num_xcc = xcc;
        r->cu_count = cus;
        r->array_count = (uint64_t)se * sa;
        r->num_shader_banks = se;
        r->simd_arrays_per_engine = sa;
        r->cu_per_simd_array = se * sa != 0 ? cus / (se * sa) : 0;
        r->simd_per_cu = simd_per_cu;
        r->gfx_target_version =
            (uint64_t)s->gfx_major * 10000 + (s->gfx_minor >> 4) * 100 + (s->gfx_minor & 0xf);
        r->vendor_id = 0x1002;
        r->max_engine_clk_fcompute = clk;
        r->cu_per_engine = se ? cus / se : 0;
        r->max_waves_per_cu = waves_cu;
        r->family_id = agi_family_of(s->gfx_major);
        r->workgroup_max_size = agi_u32(src, a, AGI_WORKGROUP_MAX_SIZE);
        r->grid_max_size = agi_u32(src, a, AGI_GRID_MAX_SIZE);
        r->local_mem_size = ps.global;
        uint16_t wg[3] = {0, 0, 0};
        src->agent_get_info(a, AGI_WORKGROUP_MAX_DIM, wg);
        uint32_t gd[3] = {0, 0, 0}; /* hsa_dim3_t */
        src->agent_get_info(a, AGI_GRID_MAX_DIM, gd);
        r->workgroup_max_dim[0] = wg[0];
        r->workgroup_max_dim[1] = wg[1];
        r->workgroup_max_dim[2] = wg[2];
        r->grid_max_dim[0] = gd[0];
        r->grid_max_dim[1] = gd[1];
        r->grid_max_dim[2] = gd[2];
        snprintf(buf, sizeof buf, "gfx%u%x%x", s->gfx_major, s->gfx_minor >> 4,
                 s->gfx_minor & 0xf);
        agi_copy_name(r->model_name, buf);
    }
    agi_apply_kfd_topology(r, src->kfd_root, s->node);
}
