// scratch.cpp: scratch memory events from the runtime's tools table.
//
// ROCR 6.1 and later hand tools a ToolsApiTable through the root table's
// tools_ member: callbacks the runtime calls around its scratch work, all on
// the thread doing it (ROCR's async-events thread, whose queue event handler
// serves the command processor's scratch requests and hands-back, or the
// thread reclaiming scratch asynchronously):
//
//   alloc_start / alloc_end   a dispatch needed more scratch than its queue
//                             had; the end event carries the size allocated
//                             and the flags (use-once, alternate scratch)
//   free_start / free_end     use-once scratch handed back after its dispatch
//   async_reclaim_start/_end  scratch taken back from an idle queue
//
// Each start/end pair becomes one SCRATCH_MEMORY record: the start's stamp is
// kept per thread and operation, the end writes the record (the end event's
// flags and, for an allocation, its size). Where the table sits in the root
// table and the slot order come from api_table.h (generated from every
// runtime's headers); handlers another tool installed before us are called
// after ours.
#include <stdio.h>
#include <string.h>

#include "api_table.h"
#include "shim_internal.hpp"

namespace {

#define RPG_ID_TOOL(id, name) TOOL_##name = id,
enum ToolFn : uint32_t { RPG_HSA_TOOLS_EVENTS(RPG_ID_TOOL) };
#undef RPG_ID_TOOL

// hsa_amd_tool_event_t is a union of pointers to the event records: it is
// passed as one pointer.
typedef int (*ToolEvent)(const uint8_t *event);
ToolEvent g_prev[RPG_HSA_TOOLS_EVENTS_COUNT];

template <typename T> T field(const uint8_t *ev, size_t off)
{
    T v;
    memcpy(&v, ev + off, sizeof v);
    return v;
}

struct Started {
    uint64_t start;
    bool on;
};
thread_local Started t_started[4]; // by rpg_scratch_operation

void start(uint32_t op)
{
    t_started[op] = {rpg_now(), true};
}

void end(uint32_t op, const uint8_t *ev, uint64_t size)
{
    uint64_t t1 = rpg_now();
    Started s = t_started[op];
    t_started[op].on = false;
    rpg_scratch_memory_rec r;
    memset(&r, 0, sizeof r);
    r.operation = op;
    r.flags = field<uint32_t>(ev, RPG_HSA_TOOL_EVENT_FLAGS_OFFSET);
    const hsa_queue_t *q = field<const hsa_queue_t *>(ev, RPG_HSA_TOOL_EVENT_QUEUE_OFFSET);
    uint64_t queue_id = 0;
    uint32_t node = 0;
    if (q)
        shim_queue_identify(q, &queue_id, &node);
    r.agent_node = node;
    r.queue_id = queue_id;
    r.size = size;
    r.correlation_id = rpg_correlation_next();
    r.start_ns = s.on ? s.start : t1; // an end without its start: a point in time
    r.end_ns = t1;
    rpg_record_scratch_memory(&r);
}

template <uint32_t Id> int handler(const uint8_t *ev)
{
    if (ev && (rpg_domains & RPG_DOMAIN_SCRATCH_MEMORY)) {
        switch (Id) {
        case TOOL_hsa_amd_tool_scratch_event_alloc_start:
            start(RPG_SCRATCH_ALLOC);
            break;
        case TOOL_hsa_amd_tool_scratch_event_alloc_end:
            end(RPG_SCRATCH_ALLOC, ev, field<uint64_t>(ev, RPG_HSA_TOOL_EVENT_SIZE_OFFSET));
            break;
        case TOOL_hsa_amd_tool_scratch_event_free_start:
            start(RPG_SCRATCH_FREE);
            break;
        case TOOL_hsa_amd_tool_scratch_event_free_end:
            end(RPG_SCRATCH_FREE, ev, 0);
            break;
        case TOOL_hsa_amd_tool_scratch_event_async_reclaim_start:
            start(RPG_SCRATCH_ASYNC_RECLAIM);
            break;
        case TOOL_hsa_amd_tool_scratch_event_async_reclaim_end:
            end(RPG_SCRATCH_ASYNC_RECLAIM, ev, 0);
            break;
        }
    }
    return g_prev[Id] ? g_prev[Id](ev) : HSA_STATUS_SUCCESS;
}

#define RPG_HANDLER(id, name) (void *)&handler<id>,
void *const kHandlers[RPG_HSA_TOOLS_EVENTS_COUNT] = {RPG_HSA_TOOLS_EVENTS(RPG_HANDLER)};
#undef RPG_HANDLER

} // namespace

bool shim_install_tool_events(HsaApiTable *root, char *why, size_t whylen)
{
    uint32_t major = root ? root->version.major_id : 0;
    uint32_t off = 0;
    for (const rpg_root_layout &l : RPG_HSA_ROOT_LAYOUTS)
        if (l.major == major)
            off = l.tools_offset;
    if (!off || root->version.minor_id < off + sizeof(void *)) {
        snprintf(why, whylen,
                 "this HSA runtime (API table major %u) has no tools table, through which ROCR 6.1 "
                 "and later report scratch memory events",
                 major);
        return false;
    }
    ApiTableVersion *tv;
    memcpy(&tv, (char *)root + off, sizeof tv);
    const rpg_api_layout *layout = nullptr;
    for (const rpg_api_layout &l : RPG_HSA_TOOLS_EVENTS_LAYOUTS)
        if (tv && l.major == tv->major_id)
            layout = &l;
    if (!layout) {
        snprintf(why, whylen,
                 "the HSA runtime's tools table has version %u.%u, which this build does not know",
                 tv ? tv->major_id : 0, tv ? tv->step_id : 0);
        return false;
    }
    uint32_t have = tv->minor_id > sizeof(ApiTableVersion)
                        ? (uint32_t)((tv->minor_id - sizeof(ApiTableVersion)) / sizeof(void *))
                        : 0;
    uint32_t n = have < layout->count ? have : layout->count;
    void **slots = (void **)((char *)tv + sizeof(ApiTableVersion));
    for (uint32_t s = 0; s < n; s++) {
        uint32_t id = layout->ids[s];
        if (id >= RPG_HSA_TOOLS_EVENTS_COUNT)
            continue;
        g_prev[id] = (ToolEvent)slots[s];
        slots[s] = kHandlers[id];
    }
    return true;
}
