/*
 * agentinfo.h: the one builder of an agent's AGENT_INFO record
 * (agent_info.csv, the agent tables), from HSA's attributes and the KFD
 * topology. Its two callers reach HSA differently: the shim through the
 * runtime's tables (agents.cpp), the preload library's attach mode through
 * the functions it looked up (preload/attach_hsa.c, which compiles
 * agentinfo.c in), so HSA comes in as function pointers. Plain C, no HSA
 * header: attributes are hsa.h's and hsa_ext_amd.h's numbers.
 */
#ifndef RPG_AGENTINFO_H
#define RPG_AGENTINFO_H

#include <stdint.h>

#include "preload/rpg_recorder.h" /* rpg_agent_info_rec */

#ifdef __cplusplus
extern "C" {
#endif

/* How HSA is reached. Handles (hsa_agent_t, hsa_amd_memory_pool_t) are
 * passed as their one uint64; statuses are hsa_status_t (0: success). */
typedef struct rpg_agent_source {
    /* hsa_agent_get_info. */
    int (*agent_get_info)(uint64_t agent, int attribute, void *value);
    /* hsa_amd_agent_iterate_memory_pools and hsa_amd_memory_pool_get_info,
     * NULL when the runtime has none (the pool sizes then stay 0). */
    int (*iterate_pools)(uint64_t agent, int (*cb)(uint64_t pool, void *data), void *data);
    int (*pool_get_info)(uint64_t pool, int attribute, void *value);
    /* The KFD topology directory; NULL or "": /sys/class/kfd/kfd/topology. */
    const char *kfd_root;
} rpg_agent_source;

/* What the caller already knows of the agent. */
typedef struct rpg_agent_desc {
    uint64_t handle;
    int gpu;                        /* 0: a CPU agent */
    uint32_t node;                  /* HSA_AMD_AGENT_INFO_DRIVER_NODE_ID */
    uint32_t gfx_major, gfx_minor;  /* from the ISA name, gfx90a: 9, 0x0a */
    uint64_t logical_node_id;       /* its index among all agents */
    uint64_t logical_node_type_id;  /* its index among the agents of its type */
} rpg_agent_desc;

/* gfx major and minor.stepping from an ISA name:
 * "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-" gives 9 and 0x0a; 0, 0 when
 * it names none. */
__attribute__((visibility("hidden"))) void rpg_agent_parse_gfx(const char *isa, uint32_t *major,
                                                               uint32_t *minor);

/* Fills *r (zeroed first) for agent a. */
__attribute__((visibility("hidden"))) void rpg_agent_info_fill(rpg_agent_info_rec *r,
                                                               const rpg_agent_source *src,
                                                               const rpg_agent_desc *a);

#ifdef __cplusplus
}
#endif

#endif
