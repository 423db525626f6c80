// agents.cpp: what the shim knows about the agents and their memory pools,
// learned once in OnLoad (agents never change after hsa_init), and the
// agent records every output lists (agent_info.csv, the agent tables).
// Queues, copies, allocations and counters look agents up here.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentinfo.h"
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

hsa_status_t add_isa(hsa_isa_t isa, void *data)
{
    uint32_t len = 0;
    if (shim_core.hsa_isa_get_info_alt_fn(isa, HSA_ISA_INFO_NAME_LENGTH, &len) != HSA_STATUS_SUCCESS)
        return HSA_STATUS_SUCCESS;
    char name[256] = {0};
    if (len < sizeof name && shim_core.hsa_isa_get_info_alt_fn(isa, HSA_ISA_INFO_NAME, name) ==
                                 HSA_STATUS_SUCCESS) {
        ShimAgent *a = (ShimAgent *)data;
        rpg_agent_parse_gfx(name, &a->gfx_major, &a->gfx_minor);
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

// The shared record builder (agentinfo.c) reaches HSA through these.
int src_agent_get_info(uint64_t a, int attr, void *value)
{
    return shim_core.hsa_agent_get_info_fn(hsa_agent_t{a}, (hsa_agent_info_t)attr, value);
}

struct PoolWalk {
    int (*cb)(uint64_t, void *);
    void *data;
};

hsa_status_t pool_walk_step(hsa_amd_memory_pool_t p, void *data)
{
    PoolWalk *w = (PoolWalk *)data;
    return (hsa_status_t)w->cb(p.handle, w->data);
}

int src_iterate_pools(uint64_t a, int (*cb)(uint64_t, void *), void *data)
{
    if (!shim_amd.hsa_amd_agent_iterate_memory_pools_fn)
        return HSA_STATUS_SUCCESS;
    PoolWalk w{cb, data};
    return shim_amd.hsa_amd_agent_iterate_memory_pools_fn(hsa_agent_t{a}, pool_walk_step, &w);
}

int src_pool_get_info(uint64_t p, int attr, void *value)
{
    return shim_amd.hsa_amd_memory_pool_get_info_fn(hsa_amd_memory_pool_t{p},
                                                    (hsa_amd_memory_pool_info_t)attr, value);
}

void record_agents_now()
{
    const rpg_agent_source src = {src_agent_get_info, src_iterate_pools, src_pool_get_info,
                                  getenv(RPG_ENV_GO_KFD_TOPOLOGY)};
    uint64_t per_type[2] = {0, 0};
    for (int i = 0; i < g_nagents; i++) {
        const ShimAgent *s = &g_agents[i];
        bool gpu = s->type == HSA_DEVICE_TYPE_GPU;
        rpg_agent_desc d = {s->agent.handle, gpu, s->node, s->gfx_major, s->gfx_minor,
                            (uint64_t)i, per_type[gpu ? 1 : 0]++};
        rpg_agent_info_rec r;
        rpg_agent_info_fill(&r, &src, &d);
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

