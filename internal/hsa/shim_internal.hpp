// shim_internal.hpp: declarations shared by the shim's C++ files (they need
// hsa_api_trace.h, which is C++ only, so they stay out of shim.h).
#ifndef RPG_SHIM_INTERNAL_HPP
#define RPG_SHIM_INTERNAL_HPP

#include <hsa_api_trace.h>
#include <hsa_ven_amd_loader.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "api_table.h"
#include "shim.h"

// The runtime's own functions, copied before any slot is replaced: the shim
// calls these so that its own HSA calls are never traced nor re-intercepted.
// Slots past what the running runtime provides stay null.
extern CoreApiTable shim_core;
extern AmdExtTable shim_amd;
extern hsa_ven_amd_loader_1_01_pfn_t shim_loader;
extern bool shim_loader_ok;

// What the shim knows about one agent (agents never change after hsa_init).
struct ShimAgent {
    hsa_agent_t agent;
    hsa_device_type_t type;
    uint32_t node;        // KFD node id
    uint32_t gfx_major;   // from the ISA name, GPUs only
    uint32_t gfx_minor;   // minor*16+stepping digit pair as written: gfx90a -> 0x0a
};
// agents.cpp: learns the agents and their pools (OnLoad, once the tables
// are mapped), and writes their agent records.
void shim_discover_agents();
int shim_agent_count();
// GPU agents among them (0: the runtime found no GPU).
int shim_gpu_agent_count();
void shim_record_agents();
const ShimAgent *shim_find_agent(hsa_agent_t a);
// The first CPU agent (host side of copies).
const ShimAgent *shim_host_agent();
// Node of the agent owning a memory pool or region (UINT32_MAX if unknown).
uint32_t shim_pool_node(uint64_t pool_or_region);
// XCCs (compute dies) of a GPU agent, as the runtime reports them
// (HSA_AMD_AGENT_INFO_NUM_XCC, ROCm 6 and later: 8 on an MI300X in SPX
// mode); 1 when the runtime has no such attribute (ROCR 5.2.3).
uint32_t shim_agent_num_xcc(hsa_agent_t a);

// futex(2) on a 32-bit atomic, for the shim's sleeping threads; ts bounds a
// wait (relative), nullptr waits until woken.
inline long shim_futex(std::atomic<uint32_t> *w, int op, uint32_t v,
                       const struct timespec *ts = nullptr)
{
    return syscall(SYS_futex, (uint32_t *)w, op, v, ts, nullptr, 0);
}

// The runtime's API tables (tables.cpp). Functions are named by their ids
// in api_table.h (CORE_hsa_queue_create, AMD_hsa_amd_memory_async_copy...),
// whatever slot the running runtime gives them.
enum ShimTableIndex { SHIM_CORE, SHIM_AMD, SHIM_IMAGE, SHIM_FINALIZER, SHIM_NTABLES };
#define RPG_ID_CORE(id, name, n) CORE_##name = id,
#define RPG_ID_AMD(id, name, n) AMD_##name = id,
enum CoreFn : uint32_t { RPG_HSA_CORE_FUNCS(RPG_ID_CORE) };
enum AmdFn : uint32_t { RPG_HSA_AMD_EXT_FUNCS(RPG_ID_AMD) };
#undef RPG_ID_CORE
#undef RPG_ID_AMD
// Reads the runtime's table versions and maps every slot; false (with the
// reason in why) when the root, core or AMD table is of a version this build
// does not know. Fills shim_core and shim_amd.
bool shim_tables_open(HsaApiTable *root, char *why, size_t whylen);
// Puts a tracer in every slot, over whatever hook the slot holds.
void shim_tables_wrap(uint64_t wrapped[SHIM_NTABLES], uint64_t known[SHIM_NTABLES]);
// "core 2.0 (125 slots), AMD extension 2.8 (76 slots), ...", for diagnostics.
void shim_tables_describe(char *buf, size_t n);
// The address of function id's slot in table t, or null where the runtime
// has none; the runtime's own function there before any hook.
void **shim_slot(int t, uint32_t id);
void *shim_original(int t, uint32_t id);

// Hooks a slot: *next gets what it held (the runtime's function), the slot
// gets fn. Nothing happens where the runtime has no such function.
template <typename F> void shim_hook(int t, uint32_t id, F **next, F *fn)
{
    F **slot = (F **)shim_slot(t, id);
    if (!slot || !*slot)
        return;
    *next = *slot;
    *slot = fn;
}

// Hooks installed under the API tracers (activity.cpp, queue.cpp).
void shim_install_activity_hooks();
void shim_install_queue_hooks();

// Interrupt signals (value 1) from a shared pool; put them back once done.
hsa_signal_t shim_signal_get();
void shim_signal_put(hsa_signal_t s);

// An app thread's wait on an intercepted queue's app-visible packet finishes
// that packet itself (queue.cpp); false if `app` is no pending packet's.
bool shim_queue_assist(hsa_signal_t app, uint64_t timeout, hsa_wait_state_t hint, bool *done);

// The shim's id of an app queue (as kernel records carry it) and its agent's
// node; false for a queue the app did not create through the API table.
bool shim_queue_identify(const hsa_queue_t *hq, uint64_t *id, uint32_t *node);

// Puts the shim's handlers into the runtime's tools table (scratch.cpp);
// false when the runtime has none (then scratch memory cannot be traced).
bool shim_install_tool_events(HsaApiTable *root, char *why, size_t whylen);

// Stops the completion threads and releases the shim's signals (OnUnload).
void shim_queues_shutdown();
// Releases the counter slots' signals (OnUnload, after shim_queues_shutdown).
void shim_pmc_shutdown();

// Host-trap PC sampling (pcs.cpp): sessions started at OnLoad when the CLI
// asks (false with why when it asked and none could start); while active,
// the intercept callback puts a marker packet (shim_pcs_fill_marker, 64
// bytes) before each dispatch; stopped, flushed and destroyed once, at
// hsa_shut_down or exit.
extern bool shim_pcs_active;
bool shim_pcs_init(char *why, size_t whylen);
void shim_pcs_fill_marker(void *pkt, uint64_t dispatch_id, uint32_t node);
void shim_pcs_shutdown();

// Fatal signals (crash.cpp): what a handler did.
struct ShimCrashStats {
    uint64_t recorded; // completed dispatches the handler recorded
    uint64_t pending;  // dispatches the GPU had not completed
    uint64_t skipped;  // being recorded by a thread that did not finish in time
    uint64_t dropped;  // the recorder could not take the record (counted in the spool)
};
// Records the completed, unrecorded dispatches of every intercepted queue;
// async-signal-safe (queue.cpp).
void shim_queues_crash_flush(uint64_t wait_ns, ShimCrashStats *st);
// Installs / removes the fatal-signal handlers (crash.cpp).
void shim_crash_install();
void shim_crash_uninstall();
// From OnUnload, first: stops the copy waiters (activity.cpp).
void shim_copies_shutdown();


static inline uint64_t shim_correlation()
{
    uint64_t c = rpg_correlation_current();
    return c ? c : rpg_correlation_next();
}

#endif
